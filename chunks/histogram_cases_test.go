package chunks

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// hist builds a histogram with positive buckets at the given indexes
// (absolute counts); count is their total plus zc.
func hist(schema int32, zc uint64, buckets map[int32]uint64) *histogram.Histogram {
	h := &histogram.Histogram{Schema: schema, ZeroThreshold: 0.001, ZeroCount: zc, Count: zc, Sum: 1}
	var idxs []int32
	for i := int32(-50); i < 50; i++ {
		if _, ok := buckets[i]; ok {
			idxs = append(idxs, i)
		}
	}
	var prev int64
	for k, idx := range idxs {
		if k == 0 || idx != idxs[k-1]+1 {
			off := idx
			if k > 0 {
				off = idx - idxs[k-1] - 1
			}
			h.PositiveSpans = append(h.PositiveSpans, histogram.Span{Offset: off, Length: 1})
		} else {
			h.PositiveSpans[len(h.PositiveSpans)-1].Length++
		}
		c := int64(buckets[idx])
		h.PositiveBuckets = append(h.PositiveBuckets, c-prev)
		prev = c
		h.Count += buckets[idx]
	}
	return h
}

func with(h *histogram.Histogram, f func(h *histogram.Histogram)) *histogram.Histogram {
	h = h.Copy()
	f(h)
	return h
}

func TestHistogramAppendCases(t *testing.T) {
	base := hist(3, 2, map[int32]uint64{0: 5, 1: 0, 2: 3})
	stale := &histogram.Histogram{Sum: math.Float64frombits(staleNaN)}
	gauge := func(h *histogram.Histogram) *histogram.Histogram {
		return with(h, func(h *histogram.Histogram) { h.CounterResetHint = histogram.GaugeType })
	}
	cases := []struct {
		name       string
		first, h   *histogram.Histogram
		want       HistogramAppendResult
		hdr, fhdr  histogram.CounterResetHint // header of a cut chunk, integer and float
		wantLayout []histogram.Span           // layout after the append, if checked
	}{
		{name: "same", first: base, h: base, want: AppendedInPlace},
		{name: "counts grow", first: base, h: hist(3, 3, map[int32]uint64{0: 6, 1: 0, 2: 3}), want: AppendedInPlace},
		{name: "new bucket", first: base, h: hist(3, 2, map[int32]uint64{0: 5, 1: 0, 2: 3, 5: 1}), want: Recoded,
			wantLayout: []histogram.Span{{Offset: 0, Length: 3}, {Offset: 2, Length: 1}}},
		{name: "new bucket in front", first: base, h: hist(3, 2, map[int32]uint64{-2: 1, 0: 5, 1: 0, 2: 3}), want: Recoded,
			wantLayout: []histogram.Span{{Offset: -2, Length: 1}, {Offset: 1, Length: 3}}},
		{name: "empty bucket missing", first: base, h: hist(3, 2, map[int32]uint64{0: 5, 2: 3}), want: AppendedInPlace,
			wantLayout: []histogram.Span{{Offset: 0, Length: 3}}},
		{name: "empty bucket missing, new bucket", first: base, h: hist(3, 2, map[int32]uint64{0: 5, 2: 3, 3: 1}), want: Recoded,
			wantLayout: []histogram.Span{{Offset: 0, Length: 4}}},
		{name: "used bucket missing", first: base, h: hist(3, 2, map[int32]uint64{0: 5, 1: 0}), want: CutNewChunk,
			hdr: histogram.CounterReset, fhdr: histogram.CounterReset},
		{name: "bucket decreases", first: base, h: hist(3, 2, map[int32]uint64{0: 4, 1: 0, 2: 9}), want: CutNewChunk,
			hdr: histogram.CounterReset, fhdr: histogram.CounterReset},
		{name: "count decreases", first: base, h: with(base, func(h *histogram.Histogram) { h.Count-- }), want: CutNewChunk,
			hdr: histogram.CounterReset, fhdr: histogram.CounterReset},
		{name: "zero count decreases", first: base, h: hist(3, 1, map[int32]uint64{0: 5, 1: 0, 2: 4}), want: CutNewChunk,
			hdr: histogram.CounterReset, fhdr: histogram.CounterReset},
		{name: "reset hint", first: base, h: with(base, func(h *histogram.Histogram) { h.CounterResetHint = histogram.CounterReset }),
			want: CutNewChunk, hdr: histogram.CounterReset, fhdr: histogram.CounterReset},
		{name: "schema change", first: base, h: hist(2, 2, map[int32]uint64{0: 5, 1: 3}), want: CutNewChunk,
			hdr: histogram.UnknownCounterReset, fhdr: histogram.UnknownCounterReset},
		{name: "zero threshold change", first: base, h: with(base, func(h *histogram.Histogram) { h.ZeroThreshold = 0.01 }),
			want: CutNewChunk, hdr: histogram.UnknownCounterReset, fhdr: histogram.UnknownCounterReset},
		{name: "custom bounds change",
			first: with(base, func(h *histogram.Histogram) { h.Schema, h.ZeroThreshold, h.CustomValues = -53, 0, []float64{1, 2, 3} }),
			h:     with(base, func(h *histogram.Histogram) { h.Schema, h.ZeroThreshold, h.CustomValues = -53, 0, []float64{1, 2, 4} }),
			want:  CutNewChunk, hdr: histogram.CounterReset, fhdr: histogram.CounterReset},
		{name: "custom bounds same",
			first: with(base, func(h *histogram.Histogram) { h.Schema, h.ZeroThreshold, h.CustomValues = -53, 0, []float64{1, 2, 3} }),
			h:     with(base, func(h *histogram.Histogram) { h.Schema, h.ZeroThreshold, h.CustomValues = -53, 0, []float64{1, 2, 3} }),
			want:  AppendedInPlace},
		{name: "stale after sample", first: base, h: stale, want: AppendedInPlace},
		{name: "sample after stale", first: stale, h: base, want: CutNewChunk,
			hdr: histogram.UnknownCounterReset, fhdr: histogram.UnknownCounterReset},
		{name: "gauge after counter", first: base, h: gauge(base), want: CutNewChunk,
			hdr: histogram.GaugeType, fhdr: histogram.GaugeType},
		{name: "counter after gauge", first: gauge(base), h: base, want: CutNewChunk,
			hdr: histogram.NotCounterReset, fhdr: histogram.UnknownCounterReset},
		{name: "gauge decreases", first: gauge(base), h: gauge(hist(3, 0, map[int32]uint64{0: 1, 1: 0, 2: 0})), want: AppendedInPlace},
		{name: "gauge loses used bucket", first: gauge(base), h: gauge(hist(3, 0, map[int32]uint64{0: 1})), want: AppendedInPlace,
			wantLayout: []histogram.Span{{Offset: 0, Length: 3}}},
		{name: "gauge bucket moves", first: gauge(base), h: gauge(hist(3, 0, map[int32]uint64{0: 1, 7: 2})), want: Recoded,
			wantLayout: []histogram.Span{{Offset: 0, Length: 3}, {Offset: 4, Length: 1}}},
		{name: "gauge schema change", first: gauge(base), h: gauge(hist(1, 0, map[int32]uint64{0: 1})), want: CutNewChunk,
			hdr: histogram.GaugeType, fhdr: histogram.GaugeType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewHistogramChunk()
			a, err := c.Appender()
			require.NoError(t, err)
			_, c, a, err = a.AppendHistogram(1000, tc.first)
			require.NoError(t, err)
			firstCopy := tc.h.Copy()
			res, nc, _, err := a.AppendHistogram(2000, tc.h)
			require.NoError(t, err)
			require.Equal(t, tc.want, res)
			require.True(t, firstCopy.Equals(tc.h) && firstCopy.CounterResetHint == tc.h.CounterResetHint, "input changed")
			checkAppend(t, res, c, nc, nc.CounterResetHeader(), tc.hdr, tc.wantLayout, func(it Iterator) []histogram.Span {
				_, h := it.AtHistogram(nil)
				return h.PositiveSpans
			})

			fc := NewFloatHistogramChunk()
			fa, err := fc.Appender()
			require.NoError(t, err)
			_, fc, fa, err = fa.AppendFloatHistogram(1000, tc.first.ToFloat())
			require.NoError(t, err)
			fres, nfc, _, err := fa.AppendFloatHistogram(2000, tc.h.ToFloat())
			require.NoError(t, err)
			require.Equal(t, tc.want, fres, "float")
			if fres != AppendedInPlace {
				require.Equal(t, 1, fc.NumSamples(), "float: old chunk untouched")
			}
			if res == CutNewChunk {
				require.Equal(t, tc.fhdr, nfc.CounterResetHeader(), "float header")
			}
			if tc.wantLayout != nil {
				it := nfc.Iterator(nil)
				for it.Next() != ValNone {
					_, fh := it.AtFloatHistogram(nil)
					require.Equal(t, tc.wantLayout, fh.PositiveSpans, "float")
				}
				require.NoError(t, it.Err())
			}
		})
	}
}

func checkAppend(t *testing.T, res HistogramAppendResult, old, nc *HistogramChunk, gotHdr, wantHdr histogram.CounterResetHint,
	wantLayout []histogram.Span, spans func(Iterator) []histogram.Span) {
	t.Helper()
	switch res {
	case AppendedInPlace:
		require.Same(t, old, nc)
		require.Equal(t, 2, nc.NumSamples())
	case Recoded:
		require.NotSame(t, old, nc)
		require.Equal(t, 1, old.NumSamples(), "old chunk untouched")
		require.Equal(t, 2, nc.NumSamples())
	case CutNewChunk:
		require.Equal(t, 1, old.NumSamples())
		require.Equal(t, 1, nc.NumSamples())
		require.Equal(t, wantHdr, gotHdr)
	}
	if wantLayout != nil {
		it := nc.Iterator(nil)
		for it.Next() != ValNone {
			require.Equal(t, wantLayout, spans(it))
		}
		require.NoError(t, it.Err())
	}
}

// TestHistogramAppendAfter checks the header of a chunk cut for size,
// which records whether its first sample continues the previous chunk.
func TestHistogramAppendAfter(t *testing.T) {
	base := hist(3, 2, map[int32]uint64{0: 5, 2: 3})
	cases := []struct {
		name      string
		h         *histogram.Histogram
		hdr, fhdr histogram.CounterResetHint
	}{
		{"continues", hist(3, 2, map[int32]uint64{0: 6, 2: 3}), histogram.NotCounterReset, histogram.NotCounterReset},
		{"reset", hist(3, 2, map[int32]uint64{0: 1, 2: 3}), histogram.CounterReset, histogram.CounterReset},
		{"schema change", hist(2, 2, map[int32]uint64{0: 9}), histogram.UnknownCounterReset, histogram.NotCounterReset},
		{"new buckets", hist(3, 2, map[int32]uint64{0: 5, 1: 1, 2: 3}), histogram.NotCounterReset, histogram.NotCounterReset},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prev, err := NewHistogramChunk().Appender()
			require.NoError(t, err)
			_, _, prev, err = prev.AppendHistogram(1, base)
			require.NoError(t, err)
			a, err := NewHistogramChunk().Appender()
			require.NoError(t, err)
			_, c, _, err := a.AppendHistogramAfter(prev, 2, tc.h)
			require.NoError(t, err)
			require.Equal(t, tc.hdr, c.CounterResetHeader())

			fprev, err := NewFloatHistogramChunk().Appender()
			require.NoError(t, err)
			_, _, fprev, err = fprev.AppendFloatHistogram(1, base.ToFloat())
			require.NoError(t, err)
			fa, err := NewFloatHistogramChunk().Appender()
			require.NoError(t, err)
			_, fc, _, err := fa.AppendFloatHistogramAfter(fprev, 2, tc.h.ToFloat())
			require.NoError(t, err)
			require.Equal(t, tc.fhdr, fc.CounterResetHeader())
		})
	}
}

func TestHistogramAppendMalformed(t *testing.T) {
	a, err := NewHistogramChunk().Appender()
	require.NoError(t, err)
	h := hist(3, 0, map[int32]uint64{0: 1, 1: 2})
	h.PositiveBuckets = h.PositiveBuckets[:1]
	_, _, _, err = a.AppendHistogram(1, h)
	require.Error(t, err)
	fa, err := NewFloatHistogramChunk().Appender()
	require.NoError(t, err)
	fh := hist(3, 0, map[int32]uint64{0: 1, 1: 2}).ToFloat()
	fh.PositiveSpans[0].Length = 5
	_, _, _, err = fa.AppendFloatHistogram(1, fh)
	require.Error(t, err)
}

func TestHistogramCounterResetHeaderBits(t *testing.T) {
	c := NewHistogramChunk()
	for hint, bits := range map[histogram.CounterResetHint]byte{
		histogram.UnknownCounterReset: 0, histogram.CounterReset: 0x80,
		histogram.NotCounterReset: 0x40, histogram.GaugeType: 0xc0,
	} {
		c.SetCounterResetHeader(hint)
		require.Equal(t, bits, c.Bytes()[2])
		require.Equal(t, hint, c.CounterResetHeader())
	}
}

func TestHistogramChunkFromDataHeader(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {0, 0}, {0, 0, 1}, {0, 0, 0, 0}} {
		_, err := HistogramChunkFromData(b)
		requireCorrupt(t, err)
		_, err = FloatHistogramChunkFromData(b)
		requireCorrupt(t, err)
	}
	c, err := HistogramChunkFromData([]byte{0, 0, 0x40})
	require.NoError(t, err)
	require.Equal(t, 0, c.NumSamples())
	require.Equal(t, histogram.NotCounterReset, c.CounterResetHeader())
	a, err := c.Appender()
	require.NoError(t, err)
	_, c, _, err = a.AppendHistogram(5, hist(0, 1, nil))
	require.NoError(t, err)
	require.Equal(t, histogram.NotCounterReset, c.CounterResetHeader(), "header kept")
}

func TestZeroThresholdEncoding(t *testing.T) {
	cases := []struct {
		z    float64
		want []byte
	}{
		{0, []byte{0}},
		{math.Ldexp(1, -128), []byte{116}}, // Prometheus's default threshold
		{1, []byte{244}},
		{math.Ldexp(1, 10), []byte{254}},
		{math.Ldexp(1, -243), []byte{1}},
		{math.Ldexp(1, 11), []byte{255, 0x40, 0xa0, 0, 0, 0, 0, 0, 0}},
		{0.001, append([]byte{255}, be64(math.Float64bits(0.001))...)},
	}
	for _, tc := range cases {
		var w bitWriter
		w.putZeroThreshold(tc.z)
		require.Equal(t, tc.want, w.buf, "%g", tc.z)
		var r bitReader
		r.reset(w.buf, 0)
		got, ok := r.readZeroThreshold()
		require.True(t, ok)
		require.Equal(t, tc.z, got)
	}
}

func be64(u uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(u >> (56 - 8*i))
	}
	return b
}

func TestCustomBoundEncoding(t *testing.T) {
	cases := []struct {
		b    float64
		bits int
	}{
		{0, 5}, {0.001, 5}, {0.1, 13}, {1, 17}, {2.5, 17}, {33554.43, 32},
		{33554.431, 65}, {-1, 65}, {0.0001, 65}, {math.Inf(1), 65}, {1e300, 65},
	}
	for _, tc := range cases {
		var w bitWriter
		w.putCustomBound(tc.b)
		require.Equal(t, tc.bits, len(w.buf)*8-int(w.free), "%g", tc.b)
		var r bitReader
		r.reset(w.buf, 0)
		got, ok := r.readCustomBound()
		require.True(t, ok)
		require.Equal(t, tc.b, got)
	}
}

func TestHistogramIteratorReuseAndSeek(t *testing.T) {
	g := newHistGen(5, false, false)
	g.ResetPct, g.SchemaPct, g.StalePct, g.HintPct = 0, 0, 0, 0
	ts, hs := histSeq(g, 60)
	hh := newHistHead(t, 0)
	for i := range ts {
		hh.append(ts[i], hs[i])
	}
	require.Len(t, hh.chunks(), 1)
	c := hh.cur

	it := c.Iterator(nil)
	require.Equal(t, ValHistogram, it.Seek(ts[10]))
	require.Equal(t, ts[10], it.AtT())
	require.Equal(t, ValHistogram, it.Seek(ts[5]), "never moves back")
	require.Equal(t, ts[10], it.AtT())
	require.Equal(t, ValHistogram, it.Seek(ts[20]-1))
	require.Equal(t, ts[20], it.AtT())
	require.Equal(t, ValNone, it.Seek(ts[59]+1))
	require.NoError(t, it.Err())

	// A reused iterator and histogram give the same samples, and
	// AtHistogram reuses the histogram's slices once they are big enough.
	it2 := c.Iterator(it)
	require.Same(t, it, it2)
	var h histogram.Histogram
	n := 0
	for it2.Next() != ValNone {
		it2.AtHistogram(&h)
		requireSameHistogram(t, hs[n], &h, "")
		n++
	}
	require.Equal(t, 60, n)
	it2 = c.Iterator(it2)
	require.Equal(t, ValHistogram, it2.Next())
	it2.AtHistogram(&h)
	allocs := testing.AllocsPerRun(20, func() {
		it2 = c.Iterator(it2)
		for it2.Next() != ValNone {
			it2.AtHistogram(&h)
		}
	})
	require.Zero(t, allocs)
}

func TestHistogramIteratorConcurrentAppend(t *testing.T) {
	g := newHistGen(9, false, false)
	g.ResetPct, g.SchemaPct, g.StalePct, g.NewBucketPct, g.HintPct = 0, 0, 0, 0, 0
	ts, hs := histSeq(g, 200)
	c := NewHistogramChunk()
	a, err := c.Appender()
	require.NoError(t, err)
	done := make(chan struct{})
	its := make(chan Iterator, 200)
	go func() {
		defer close(done)
		for it := range its {
			n := 0
			for it.Next() != ValNone {
				it.AtHistogram(nil)
				n++
			}
			assert.NoError(t, it.Err(), "iteration: %d samples", n)
			assert.NotZero(t, n, "iteration: no samples")
		}
	}()
	for i := range ts {
		var res HistogramAppendResult
		res, c, a, err = a.AppendHistogram(ts[i], hs[i])
		require.NoError(t, err)
		require.Equal(t, AppendedInPlace, res)
		its <- c.Iterator(nil)
	}
	close(its)
	<-done
}

func TestShouldCutHistogramChunk(t *testing.T) {
	cases := []struct {
		name                string
		samples, bytes      int
		t, nextAt, rangeEnd int64
		want                bool
	}{
		{"small and early", 5, 100, 10, 100, 1000, false},
		{"time up", 20, 500, 100, 100, 1000, true},
		{"time up, too few samples", 5, 500, 100, 100, 1000, false},
		{"too few samples, range over", 5, 500, 1000, 100, 1000, true},
		{"twice the target", 10, 2048, 10, 100, 1000, true},
		{"twice the target, too few samples", 9, 4096, 10, 100, 1000, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, ShouldCutHistogramChunk(tc.samples, tc.bytes, tc.t, tc.nextAt, tc.rangeEnd), tc.name)
	}
	end, ok := HistogramChunkEndTime(0, 999, 10000, 100)
	require.False(t, ok)
	require.Equal(t, int64(10000), end)
	// 256 bytes after 1000 ms of a 10 s range: a full chunk takes 4 s, so
	// the range holds 2 more full chunks; split it in 2.
	end, ok = HistogramChunkEndTime(0, 999, 10000, 256)
	require.True(t, ok)
	require.Equal(t, int64(5000), end)
	end, ok = HistogramChunkEndTime(0, 9000, 10000, 1000)
	require.True(t, ok)
	require.Equal(t, int64(10000), end)
}

// TestHistogramChunkFull checks that a full chunk continues in a new one,
// with the header a chunk cut for size would get.
func TestHistogramChunkFull(t *testing.T) {
	h := hist(0, 1, map[int32]uint64{0: 1})
	for _, gauge := range []bool{false, true} {
		if gauge {
			h.CounterResetHint = histogram.GaugeType
		}
		a, err := NewHistogramChunk().Appender()
		require.NoError(t, err)
		fa, err := NewFloatHistogramChunk().Appender()
		require.NoError(t, err)
		fh := h.ToFloat()
		var res HistogramAppendResult
		var c *HistogramChunk
		var fc *FloatHistogramChunk
		for i := range MaxSamples {
			res, c, a, err = a.AppendHistogram(int64(i), h)
			require.NoError(t, err)
			require.Equal(t, AppendedInPlace, res)
			res, fc, fa, err = fa.AppendFloatHistogram(int64(i), fh)
			require.NoError(t, err)
			require.Equal(t, AppendedInPlace, res)
		}
		require.Equal(t, MaxSamples, c.NumSamples())
		require.Equal(t, MaxSamples, fc.NumSamples())
		want := histogram.NotCounterReset
		if gauge {
			want = histogram.GaugeType
		}
		res, c, _, err = a.AppendHistogram(MaxSamples, h)
		require.NoError(t, err)
		require.Equal(t, CutNewChunk, res)
		require.Equal(t, 1, c.NumSamples())
		require.Equal(t, want, c.CounterResetHeader())
		res, fc, _, err = fa.AppendFloatHistogram(MaxSamples, fh)
		require.NoError(t, err)
		require.Equal(t, CutNewChunk, res)
		require.Equal(t, 1, fc.NumSamples())
		require.Equal(t, want, fc.CounterResetHeader())
	}
}
