package remote

import (
	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// v2Encoder builds remote-write 2.0 requests (io.prometheus.write.v2.Request)
// with reusable buffers: one symbols table per request, holding every
// label name and value, help text and unit of it.
type v2Encoder struct {
	syms    symbols
	ts      []writev2.TimeSeries
	refs    []uint32 // backing of the TimeSeries' label references
	samples []writev2.Sample
	hists   []writev2.Histogram
	bySer   map[*series]int // index in ts of the series' last TimeSeries
	// prev and prevRefs are the labels last symbolized in this request
	// and their references (name, value, name, ...): a series' label
	// equal to the one at the same place in prev takes its reference
	// without a lookup in syms (label names, and values such as a shared
	// metric name or job, mostly repeat from one series to the next).
	prev     []prompb.Label
	prevRefs []uint32
	pb       []byte
	snappy   []byte
}

// encode returns the snappy-compressed 2.0 request for batch, valid until
// the next call, and the number of exemplars it could not carry. Each
// sample or histogram gets its own TimeSeries with its start time, its
// series' metadata as of its commit and the exemplars queued with it. A 2.0
// TimeSeries must hold a sample or histogram (Prometheus's receiver
// rejects the request otherwise), so the exemplars of an exOnly item go
// with the batch's last earlier TimeSeries of their series; without one
// they are not sent, and counted in unsent.
func (e *v2Encoder) encode(batch []item) (_ []byte, unsent int, _ error) {
	if e.bySer == nil {
		e.bySer = map[*series]int{}
	}
	e.syms.reset()
	clear(e.bySer)
	e.prev, e.prevRefs = nil, nil
	e.ts = e.ts[:0]
	// Size the backing slices first, so that appending to them never
	// moves what earlier TimeSeries point into.
	nRefs := 0
	for _, it := range batch {
		nRefs += 2 * len(it.s.labels)
	}
	if cap(e.refs) < nRefs {
		e.refs = make([]uint32, 0, nRefs)
	}
	if cap(e.samples) < len(batch) {
		e.samples = make([]writev2.Sample, 0, len(batch))
		e.hists = make([]writev2.Histogram, 0, len(batch))
	}
	e.refs, e.samples, e.hists = e.refs[:0], e.samples[:0], e.hists[:0]
	for j := range batch {
		it := &batch[j]
		if it.exOnly() {
			i, ok := e.bySer[it.s]
			if !ok {
				unsent += len(it.exemplars())
				continue
			}
			e.ts[i].Exemplars = e.appendExemplars(e.ts[i].Exemplars, it.exemplars())
			continue
		}
		var ts writev2.TimeSeries
		if i, ok := e.bySer[it.s]; ok {
			// The series is in the request already: its labels are
			// symbolized.
			ts.LabelsRefs = e.ts[i].LabelsRefs
		} else {
			first := len(e.refs)
			for j, l := range it.s.labels {
				var nr, vr uint32
				if j < len(e.prev) && e.prev[j].Name == l.Name {
					nr = e.prevRefs[2*j]
				} else {
					nr = e.syms.ref(l.Name)
				}
				if j < len(e.prev) && e.prev[j].Value == l.Value {
					vr = e.prevRefs[2*j+1]
				} else {
					vr = e.syms.ref(l.Value)
				}
				e.refs = append(e.refs, nr, vr)
			}
			ts.LabelsRefs = e.refs[first:len(e.refs):len(e.refs)]
			e.prev, e.prevRefs = it.s.labels, ts.LabelsRefs
		}
		if m := it.meta; m != nil {
			pm := promstorage.ToPromMetadata(tsdb.Metadata{Type: tsdb.MetricType(m.typ), Unit: m.unit, Help: m.help})
			ts.Metadata = writev2.Metadata{
				Type:    writev2.FromMetadataType(pm.Type),
				HelpRef: e.syms.ref(pm.Help),
				UnitRef: e.syms.ref(pm.Unit),
			}
		}
		switch h, fh := it.hist(), it.floatHist(); {
		case h != nil:
			e.hists = append(e.hists, writev2.FromIntHistogram(it.st, it.t, h))
			ts.Histograms = e.hists[len(e.hists)-1 : len(e.hists) : len(e.hists)]
		case fh != nil:
			e.hists = append(e.hists, writev2.FromFloatHistogram(it.st, it.t, fh))
			ts.Histograms = e.hists[len(e.hists)-1 : len(e.hists) : len(e.hists)]
		default:
			e.samples = append(e.samples, writev2.Sample{StartTimestamp: it.st, Timestamp: it.t, Value: it.v})
			ts.Samples = e.samples[len(e.samples)-1 : len(e.samples) : len(e.samples)]
		}
		if ex := it.exemplars(); len(ex) > 0 {
			ts.Exemplars = e.appendExemplars(nil, ex)
		}
		e.bySer[it.s] = len(e.ts)
		e.ts = append(e.ts, ts)
	}
	req := writev2.Request{Symbols: e.syms.list, Timeseries: e.ts}
	// OptimizedMarshal writes the same bytes as Marshal without the
	// generated code's allocation per TimeSeries (for its packed label
	// references).
	pb, err := req.OptimizedMarshal(e.pb[:cap(e.pb)])
	clear(e.ts) // drop exemplar references
	clear(e.hists)
	if err != nil {
		return nil, 0, err
	}
	e.pb = pb
	e.snappy = snappy.Encode(e.snappy[:cap(e.snappy)], pb)
	return e.snappy, unsent, nil
}

// appendExemplars appends ex to dst as 2.0 exemplars, their labels
// symbolized.
func (e *v2Encoder) appendExemplars(dst []writev2.Exemplar, ex []prompb.Exemplar) []writev2.Exemplar {
	for _, x := range ex {
		refs := make([]uint32, 0, 2*len(x.Labels))
		for _, l := range x.Labels {
			refs = append(refs, e.syms.ref(l.Name), e.syms.ref(l.Value))
		}
		dst = append(dst, writev2.Exemplar{LabelsRefs: refs, Value: x.Value, Timestamp: x.Timestamp})
	}
	return dst
}

// symbols is a request's symbols table: list holds each string once, ""
// first (remote write 2.0 requires it at index 0), and refs maps a string
// to its index in list. Unlike writev2.SymbolsTable, reset clears the map
// at once instead of deleting its keys one by one.
type symbols struct {
	refs map[string]uint32
	list []string
}

// reset empties the table, keeping its storage.
func (t *symbols) reset() {
	if t.refs == nil {
		t.refs = map[string]uint32{}
	}
	clear(t.refs)
	t.refs[""] = 0
	t.list = append(t.list[:0], "")
}

// ref returns the index of s in the table, adding s if needed.
func (t *symbols) ref(s string) uint32 {
	if r, ok := t.refs[s]; ok {
		return r
	}
	r := uint32(len(t.list))
	t.refs[s] = r
	t.list = append(t.list, s)
	return r
}
