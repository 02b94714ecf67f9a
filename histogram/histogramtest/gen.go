// Package histogramtest generates sequences of native histograms for tests:
// valid histograms that change the way scraped ones do, with every event a
// histogram encoding must handle. The chunk tests of package chunks and the
// golden tests of the prom module, which compare our encodings with
// Prometheus's, share it.
package histogramtest

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/value"
)

// staleNaNBits are the bits of Prometheus's stale marker.
const staleNaNBits = value.StaleNaN

// Gen generates a sequence of valid histograms that changes the way
// real ones do, with every event the chunk encodings must handle: buckets
// appearing, empty buckets disappearing, counter resets, schema and zero
// threshold changes, stale markers, custom bounds and their changes. With
// gauge set it makes gauge histograms, whose buckets go both ways.
type Gen struct {
	r        *rand.Rand
	gauge    bool
	schema   int32
	zt       float64
	custom   []float64
	pos, neg map[int64]uint64 // bucket index → count; present buckets only
	zc       uint64
	sum      float64
	t        int64
	// ResetPct, SchemaPct, StalePct, NewBucketPct and HintPct are the
	// chances, in percent per sample, of a counter reset, a schema (or
	// custom bounds) change, a stale marker, new buckets appearing and an
	// explicit counter-reset hint. NewGen sets them; set them to 0 after
	// NewGen for a steadier sequence.
	ResetPct, SchemaPct, StalePct, NewBucketPct, HintPct int
}

// NewGen returns a generator seeded with seed: of exponential histograms,
// or of custom-bucket ones if custom; of gauge histograms if gauge.
func NewGen(seed uint64, custom, gauge bool) *Gen {
	g := &Gen{
		r: rand.New(rand.NewPCG(seed, 14)), gauge: gauge, schema: 3, zt: 0.001,
		pos: map[int64]uint64{}, neg: map[int64]uint64{},
		t: 1_700_000_000_000, ResetPct: 2, SchemaPct: 2, StalePct: 2, NewBucketPct: 20, HintPct: 2,
	}
	if seed%2 == 1 {
		g.zt = math.Ldexp(1, -128) // Prometheus's default, a one-byte code
	}
	if custom {
		g.schema = histogram.CustomBucketsSchema
		g.custom = []float64{0.005, 0.1, 0.25, 1, 2.5, 10, 33554.43, 1e6}
		for i := range 5 {
			g.pos[int64(i)] = uint64(g.r.IntN(10))
		}
		return g
	}
	for range 20 {
		idx := int64(g.r.IntN(40) - 5)
		if g.r.IntN(3) == 0 {
			g.neg[idx] = uint64(g.r.IntN(10))
		} else {
			g.pos[idx] = uint64(g.r.IntN(10))
		}
	}
	return g
}

// Next returns the time and histogram of the next sample.
func (g *Gen) Next() (int64, *histogram.Histogram) {
	g.t += 15000 + int64(g.r.IntN(200)) - 100
	r := g.r
	if r.IntN(100) < g.StalePct {
		h := &histogram.Histogram{Sum: math.Float64frombits(staleNaNBits)}
		if g.gauge && r.IntN(2) == 0 {
			h.CounterResetHint = histogram.GaugeType
		}
		return g.t, h
	}
	if r.IntN(100) < g.ResetPct {
		for k := range g.pos {
			g.pos[k] /= 3
		}
		for k := range g.neg {
			g.neg[k] /= 3
		}
		g.zc /= 3
		g.sum /= 3
	}
	if r.IntN(100) < g.SchemaPct {
		switch {
		case g.custom != nil:
			g.custom = append(slices.Clone(g.custom[:len(g.custom)-1]), g.custom[len(g.custom)-1]*2)
		case r.IntN(2) == 0:
			g.zt *= 2
		default:
			g.schema = int32(r.IntN(9)) - 1
		}
	}
	grow := func(m map[int64]uint64) {
		// Sorted, so that the draws and hence the sequence are the same
		// on every run.
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			switch {
			case g.gauge && v > 0 && r.IntN(3) == 0:
				m[k] = v - uint64(r.IntN(int(min(v, 5))+1))
			case r.IntN(4) > 0:
				m[k] = v + uint64(r.IntN(6))
			}
			if m[k] == 0 && r.IntN(8) == 0 {
				delete(m, k)
			}
			if g.gauge && r.IntN(30) == 0 {
				delete(m, k)
			}
		}
	}
	grow(g.pos)
	if g.custom == nil {
		grow(g.neg)
		g.zc += uint64(r.IntN(3))
	}
	if r.IntN(100) < g.NewBucketPct {
		if g.custom != nil {
			g.pos[int64(r.IntN(len(g.custom)+1))] += 0
		} else if r.IntN(3) == 0 {
			g.neg[int64(r.IntN(50)-10)] += uint64(r.IntN(3))
		} else {
			g.pos[int64(r.IntN(50)-10)] += uint64(r.IntN(3))
		}
	}
	g.sum += float64(r.IntN(1000)) / 8
	h := &histogram.Histogram{
		Schema: g.schema, Sum: g.sum,
		CustomValues: slices.Clone(g.custom),
	}
	switch {
	case g.gauge:
		h.CounterResetHint = histogram.GaugeType
	case r.IntN(100) < g.HintPct:
		h.CounterResetHint = histogram.CounterReset
	case r.IntN(100) < 3*g.HintPct:
		h.CounterResetHint = histogram.NotCounterReset
	}
	if g.custom == nil {
		h.ZeroThreshold, h.ZeroCount = g.zt, g.zc
	}
	var cnt uint64
	h.PositiveSpans, h.PositiveBuckets, cnt = g.layout(g.pos)
	h.Count = h.ZeroCount + cnt
	h.NegativeSpans, h.NegativeBuckets, cnt = g.layout(g.neg)
	h.Count += cnt
	return g.t, h
}

// layout returns spans (with the occasional redundant split and empty
// span, as clients may send) and delta-encoded buckets for m.
func (g *Gen) layout(m map[int64]uint64) ([]histogram.Span, []int64, uint64) {
	idxs := make([]int64, 0, len(m))
	for k := range m {
		idxs = append(idxs, k)
	}
	slices.Sort(idxs)
	var spans []histogram.Span
	var buckets []int64
	var prev int64
	var total uint64
	for i, idx := range idxs {
		switch {
		case i == 0:
			spans = append(spans, histogram.Span{Offset: int32(idx), Length: 1})
		case idx == idxs[i-1]+1 && g.r.IntN(20) > 0:
			spans[len(spans)-1].Length++
		default:
			if g.r.IntN(30) == 0 {
				spans = append(spans, histogram.Span{Offset: 0, Length: 0})
			}
			spans = append(spans, histogram.Span{Offset: int32(idx - idxs[i-1] - 1), Length: 1})
		}
		c := int64(m[idx])
		buckets = append(buckets, c-prev)
		prev = c
		total += m[idx]
	}
	return spans, buckets, total
}

// Seq returns n samples of g.
func Seq(g *Gen, n int) ([]int64, []*histogram.Histogram) {
	ts := make([]int64, n)
	hs := make([]*histogram.Histogram, n)
	for i := range n {
		ts[i], hs[i] = g.Next()
	}
	return ts, hs
}

// SetBuckets replaces the generator's present buckets (bucket index →
// count) on the positive and negative side; the next sample starts from
// them. The maps are copied.
func (g *Gen) SetBuckets(pos, neg map[int64]uint64) {
	g.pos, g.neg = make(map[int64]uint64, len(pos)), make(map[int64]uint64, len(neg))
	maps.Copy(g.pos, pos)
	maps.Copy(g.neg, neg)
}
