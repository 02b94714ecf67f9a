package chunks

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// benchHistograms returns 120 samples of a 20-bucket counter histogram
// whose layout does not change, a typical head chunk's worth.
func benchHistograms(b *testing.B) ([]int64, []*histogram.Histogram) {
	g := newHistGen(1, false, false)
	g.ResetPct, g.SchemaPct, g.StalePct, g.NewBucketPct, g.HintPct = 0, 0, 0, 0, 0
	pos, neg := map[int64]uint64{}, map[int64]uint64{}
	for i := range int64(20) {
		if i < 14 {
			pos[i+i/5] = uint64(i) // three spans
		} else {
			neg[i] = 1
		}
	}
	g.SetBuckets(pos, neg)
	ts, hs := histSeq(g, 120)
	require.Equal(b, 20, len(hs[0].PositiveBuckets)+len(hs[0].NegativeBuckets))
	return ts, hs
}

func BenchmarkHistogramAppend(b *testing.B) {
	ts, hs := benchHistograms(b)
	var size int
	b.ReportAllocs()
	for b.Loop() {
		c := NewHistogramChunk()
		a, _ := c.Appender()
		for i := range ts {
			_, c, a, _ = a.AppendHistogram(ts[i], hs[i])
		}
		size = len(c.Bytes())
	}
	b.ReportMetric(float64(size)/float64(len(ts)), "bytes/sample")
	b.ReportMetric(float64(b.N*len(ts))/b.Elapsed().Seconds(), "samples/s")
}

func BenchmarkHistogramIterate(b *testing.B) {
	ts, hs := benchHistograms(b)
	c := NewHistogramChunk()
	a, _ := c.Appender()
	for i := range ts {
		_, c, a, _ = a.AppendHistogram(ts[i], hs[i])
	}
	var it Iterator
	var h histogram.Histogram
	b.SetBytes(int64(len(c.Bytes())))
	b.ReportAllocs()
	for b.Loop() {
		it = c.Iterator(it)
		for it.Next() != ValNone {
			it.AtHistogram(&h)
		}
	}
	b.ReportMetric(float64(b.N*len(ts))/b.Elapsed().Seconds(), "samples/s")
}

func BenchmarkFloatHistogramAppend(b *testing.B) {
	ts, hs := benchHistograms(b)
	fhs := make([]*histogram.FloatHistogram, len(hs))
	for i, h := range hs {
		fhs[i] = h.ToFloat()
	}
	var size int
	b.ReportAllocs()
	for b.Loop() {
		c := NewFloatHistogramChunk()
		a, _ := c.Appender()
		for i := range ts {
			_, c, a, _ = a.AppendFloatHistogram(ts[i], fhs[i])
		}
		size = len(c.Bytes())
	}
	b.ReportMetric(float64(size)/float64(len(ts)), "bytes/sample")
	b.ReportMetric(float64(b.N*len(ts))/b.Elapsed().Seconds(), "samples/s")
}

func BenchmarkFloatHistogramIterate(b *testing.B) {
	ts, hs := benchHistograms(b)
	c := NewFloatHistogramChunk()
	a, _ := c.Appender()
	for i := range ts {
		_, c, a, _ = a.AppendFloatHistogram(ts[i], hs[i].ToFloat())
	}
	var it Iterator
	var fh histogram.FloatHistogram
	b.SetBytes(int64(len(c.Bytes())))
	b.ReportAllocs()
	for b.Loop() {
		it = c.Iterator(it)
		for it.Next() != ValNone {
			it.AtFloatHistogram(&fh)
		}
	}
	b.ReportMetric(float64(b.N*len(ts))/b.Elapsed().Seconds(), "samples/s")
}
