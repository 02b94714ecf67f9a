package remote

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/prometheus/prometheus/tsdb/tsdbutil"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// randomBatch returns n items over a few series: floats, integer and
// float histograms, exemplars with samples and alone, with and without
// metadata, and runs of the same series.
func randomBatch(rng *rand.Rand, n int) []item {
	pool := make([]*series, 1+rng.IntN(6))
	for i := range pool {
		ls := []prompb.Label{{Name: "__name__", Value: fmt.Sprint("m", rng.IntN(3))}}
		for j := range rng.IntN(4) {
			ls = append(ls, prompb.Label{Name: fmt.Sprint("l", j), Value: fmt.Sprint("v", rng.IntN(4))})
		}
		pool[i] = &series{labels: ls}
	}
	metas := []*seriesMeta{nil, {typ: 1, help: "help a"}, {typ: 2, unit: "seconds", help: "help b"}}
	ex := func() []prompb.Exemplar {
		var out []prompb.Exemplar
		for range 1 + rng.IntN(2) {
			out = append(out, prompb.Exemplar{
				Labels: []prompb.Label{{Name: "trace_id", Value: fmt.Sprint(rng.IntN(5))}},
				Value:  rng.Float64(), Timestamp: rng.Int64N(1000),
			})
		}
		return out
	}
	batch := make([]item, n)
	for i := range batch {
		it := item{s: pool[rng.IntN(len(pool))], meta: metas[rng.IntN(len(metas))],
			st: rng.Int64N(3) * 1000, t: 1000 + rng.Int64N(1e6), v: rng.NormFloat64()}
		switch rng.IntN(8) {
		case 0:
			it.x = &itemExtra{h: tsdbutil.GenerateTestHistogram(rng.Int64N(20))}
		case 1:
			it.x = &itemExtra{fh: tsdbutil.GenerateTestFloatHistogram(rng.Int64N(20))}
		case 2:
			it = item{s: it.s, x: &itemExtra{ex: ex(), exOnly: true}}
		case 3:
			it.x = &itemExtra{ex: ex()}
		}
		batch[i] = it
	}
	return batch
}

// refEncodeV2 builds the request encode is meant to send for batch the
// plain way, with Prometheus's symbols table and generated Marshal.
func refEncodeV2(t *testing.T, batch []item) (raw []byte, unsent int) {
	syms := writev2.NewSymbolTable()
	var tss []writev2.TimeSeries
	last := map[*series]int{}
	exemplars := func(ex []prompb.Exemplar) []writev2.Exemplar {
		var out []writev2.Exemplar
		for _, x := range ex {
			var refs []uint32
			for _, l := range x.Labels {
				refs = append(refs, syms.Symbolize(l.Name), syms.Symbolize(l.Value))
			}
			out = append(out, writev2.Exemplar{LabelsRefs: refs, Value: x.Value, Timestamp: x.Timestamp})
		}
		return out
	}
	for _, it := range batch {
		if it.exOnly() {
			i, ok := last[it.s]
			if !ok {
				unsent += len(it.exemplars())
				continue
			}
			tss[i].Exemplars = append(tss[i].Exemplars, exemplars(it.exemplars())...)
			continue
		}
		var ts writev2.TimeSeries
		for _, l := range it.s.labels {
			ts.LabelsRefs = append(ts.LabelsRefs, syms.Symbolize(l.Name), syms.Symbolize(l.Value))
		}
		if m := it.meta; m != nil {
			pm := promstorage.ToPromMetadata(tsdb.Metadata{Type: tsdb.MetricType(m.typ), Unit: m.unit, Help: m.help})
			ts.Metadata = writev2.Metadata{Type: writev2.FromMetadataType(pm.Type), HelpRef: syms.Symbolize(pm.Help), UnitRef: syms.Symbolize(pm.Unit)}
		}
		switch {
		case it.hist() != nil:
			ts.Histograms = []writev2.Histogram{writev2.FromIntHistogram(it.st, it.t, it.hist())}
		case it.floatHist() != nil:
			ts.Histograms = []writev2.Histogram{writev2.FromFloatHistogram(it.st, it.t, it.floatHist())}
		default:
			ts.Samples = []writev2.Sample{{StartTimestamp: it.st, Timestamp: it.t, Value: it.v}}
		}
		ts.Exemplars = exemplars(it.exemplars())
		last[it.s] = len(tss)
		tss = append(tss, ts)
	}
	req := writev2.Request{Symbols: syms.Symbols(), Timeseries: tss}
	raw, err := req.Marshal()
	require.NoError(t, err)
	return raw, unsent
}

// TestEncodeV2Random checks, over random batches encoded one after the
// other with one encoder (so that reused buffers are exercised), that
// what encode sends decodes with Prometheus's writev2 types to exactly
// the plainly built request, which marshals again with Prometheus's
// generated code to the bytes of that request. (OptimizedMarshal writes a
// TimeSeries' exemplars before its histograms, so the bytes sent differ
// from Marshal's in field order only: same length, same message.)
func TestEncodeV2Random(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var e v2Encoder
	for round := range 300 {
		batch := randomBatch(rng, rng.IntN(40))
		body, unsent, err := e.encode(batch)
		require.NoError(t, err)
		got, err := snappy.Decode(nil, body)
		require.NoError(t, err)
		want, wantUnsent := refEncodeV2(t, batch)
		require.Equal(t, wantUnsent, unsent, "round %d", round)
		require.Len(t, got, len(want), "round %d", round)
		var gotReq, wantReq writev2.Request
		require.NoError(t, gotReq.Unmarshal(got))
		require.NoError(t, wantReq.Unmarshal(want))
		require.Equal(t, wantReq, gotReq, "round %d", round)
		again, err := gotReq.Marshal()
		require.NoError(t, err)
		require.Equal(t, want, again, "round %d", round)
	}
}

// TestEncodeV1Random is TestEncodeV2Random for the 1.0 encoder: one
// TimeSeries per item, with its sample or histogram and its exemplars
// (only exemplars for an exOnly item).
func TestEncodeV1Random(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	var e encoder
	for round := range 300 {
		batch := randomBatch(rng, rng.IntN(40))
		body, err := e.encode(batch)
		require.NoError(t, err)
		got, err := snappy.Decode(nil, body)
		require.NoError(t, err)
		var want prompb.WriteRequest
		for _, it := range batch {
			ts := prompb.TimeSeries{Labels: it.s.labels, Exemplars: it.exemplars()}
			switch {
			case it.exOnly():
			case it.hist() != nil:
				ts.Histograms = []prompb.Histogram{prompb.FromIntHistogram(it.t, it.hist())}
			case it.floatHist() != nil:
				ts.Histograms = []prompb.Histogram{prompb.FromFloatHistogram(it.t, it.floatHist())}
			default:
				ts.Samples = []prompb.Sample{{Timestamp: it.t, Value: it.v}}
			}
			want.Timeseries = append(want.Timeseries, ts)
		}
		wantRaw, err := want.Marshal()
		require.NoError(t, err)
		require.Equal(t, append([]byte{}, wantRaw...), append([]byte{}, got...), "round %d", round)
	}
}
