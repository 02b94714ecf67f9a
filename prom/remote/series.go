package remote

import (
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	"github.com/prometheus/prometheus/prompb"

	isolabels "github.com/isotsdb/tsdb/labels"
)

// series is a series as it is sent: its labels after external labels and
// relabeling, ready for a prompb.TimeSeries, and its newest metadata. The
// labels are immutable once made, so shards read them without locks; meta
// is the reader's alone (each item takes the value of its time along).
type series struct {
	labels []prompb.Label
	meta   *seriesMeta // nil until a Metadata record names the series; replaced, never modified
}

// seriesMeta is a series' metadata as remote write 2.0 sends it inline.
type seriesMeta struct {
	typ        uint8 // record.MetricType (the WAL's encoding of the type)
	unit, help string
}

// seriesMap maps the WAL's series references to what is sent for them; an
// entry with a nil series marks a series dropped by relabeling. It is
// owned by the reader goroutine and not safe for concurrent use.
type seriesMap struct {
	refs     map[uint64]seriesEntry
	external labels.Labels
	relabel  []*relabel.Config
	lb       *labels.Builder
}

func newSeriesMap(external labels.Labels, cfgs []*relabel.Config) *seriesMap {
	return &seriesMap{
		refs:     make(map[uint64]seriesEntry),
		external: external,
		relabel:  cfgs,
		lb:       labels.NewBuilder(labels.EmptyLabels()),
	}
}

// seriesEntry is a series and the WAL segment whose record (or the
// checkpoint covering it) last defined it.
type seriesEntry struct {
	s   *series
	seg int
}

// set defines (or redefines) series ref with the labels ls from a Series
// record in segment seg (for a checkpoint: its index).
func (m *seriesMap) set(ref uint64, ls isolabels.Labels, seg int) {
	m.lb.Reset(labels.EmptyLabels())
	ls.Range(func(l isolabels.Label) { m.lb.Set(l.Name, l.Value) })
	m.external.Range(func(l labels.Label) {
		if m.lb.Get(l.Name) == "" {
			m.lb.Set(l.Name, l.Value)
		}
	})
	if len(m.relabel) > 0 && !relabel.ProcessBuilder(m.lb, m.relabel...) {
		m.refs[ref] = seriesEntry{seg: seg}
		return
	}
	out := m.lb.Labels()
	if out.IsEmpty() {
		m.refs[ref] = seriesEntry{seg: seg}
		return
	}
	pl := make([]prompb.Label, 0, out.Len())
	out.Range(func(l labels.Label) { pl = append(pl, prompb.Label{Name: l.Name, Value: l.Value}) })
	se := &series{labels: pl}
	if old := m.refs[ref].s; old != nil {
		// A series defined again (a checkpoint, a later Series record)
		// keeps the metadata it had.
		se.meta = old.meta
	}
	m.refs[ref] = seriesEntry{s: se, seg: seg}
}

// setMeta records the metadata of series ref from a Metadata record and
// returns the series; the series must be defined (else, or if it was
// dropped, nothing happens and it returns nil). Samples queued after the
// call are sent with it.
func (m *seriesMap) setMeta(ref uint64, md seriesMeta) *series {
	se := m.refs[ref].s
	if se != nil && (se.meta == nil || *se.meta != md) {
		se.meta = &md
	}
	return se
}

// get returns the series to send for ref, or nil if it is unknown or
// dropped.
func (m *seriesMap) get(ref uint64) *series { return m.refs[ref].s }

// gc forgets the series last defined in segments up to seg that keep
// does not hold (the head dropped them: a checkpoint of segments up to seg
// left them out), and returns how many it forgot. Call it only once every
// record up to seg has been read.
func (m *seriesMap) gc(seg int, keep map[uint64]struct{}) int {
	n := 0
	for ref, e := range m.refs {
		if _, ok := keep[ref]; !ok && e.seg <= seg {
			delete(m.refs, ref)
			n++
		}
	}
	return n
}
