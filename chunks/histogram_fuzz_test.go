package chunks

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// seedHistogramChunks returns chunk bytes of the integer or float
// encoding, with start timestamps if st is set, for fuzz corpora: whole
// chunks from the generator, and a few edge cases.
func seedHistogramChunks(t testing.TB, float, st bool) [][]byte {
	var out [][]byte
	for seed, mode := range []struct{ custom, gauge bool }{{false, false}, {true, false}, {false, true}} {
		g := newHistGen(uint64(seed), mode.custom, mode.gauge)
		ts, hs := histSeq(g, 40)
		var sts []int64
		if st {
			sts = genST(rand.New(rand.NewPCG(uint64(seed), 1)), ts, seed+1)
		} else {
			sts = make([]int64, len(ts))
		}
		if float {
			c := NewFloatHistogramChunk()
			if st {
				c = NewFloatHistogramSTChunk()
			}
			app, err := c.Appender()
			require.NoError(t, err)
			for i := range ts {
				_, c, app, err = app.AppendFloatHistogramST(sts[i], ts[i], hs[i].ToFloat())
				require.NoError(t, err)
			}
			out = append(out, c.Bytes())
			continue
		}
		c := NewHistogramChunk()
		if st {
			c = NewHistogramSTChunk()
		}
		app, err := c.Appender()
		require.NoError(t, err)
		for i := range ts {
			_, c, app, err = app.AppendHistogramST(sts[i], ts[i], hs[i])
			require.NoError(t, err)
		}
		out = append(out, c.Bytes())
	}
	return append(out, []byte{0, 0, 0}, []byte{0, 1, 0x40}, []byte{0, 1, 0, 0xff})
}

// decodeAll iterates b as a chunk of the integer or float encoding, with
// start timestamps if st is set, and, if that succeeds, resumes an
// appender on it and appends one more sample. Nothing may panic.
func decodeAll(t *testing.T, b []byte, float, st bool) {
	enc := map[[2]bool]Encoding{
		{false, false}: EncHistogram, {true, false}: EncFloatHistogram,
		{false, true}: EncHistogramST, {true, true}: EncFloatHistogramST,
	}[[2]bool{float, st}]
	if float {
		cc, err := FromData(enc, b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		c := cc.(*FloatHistogramChunk)
		it := c.Iterator(nil)
		n := 0
		var last *histogram.FloatHistogram
		for it.Next() != ValNone {
			_, last = it.AtFloatHistogram(last)
			n++
		}
		if it.Err() != nil {
			require.ErrorIs(t, it.Err(), ErrCorrupt)
			return
		}
		require.Equal(t, c.NumSamples(), n)
		app, err := c.Appender()
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		if last != nil && !isStale(last.Sum) {
			h := last.Copy()
			h.CounterResetHint = histogram.UnknownCounterReset
			h.PositiveSpans = append(h.PositiveSpans, histogram.Span{Offset: 1, Length: 1})
			h.PositiveBuckets = append(h.PositiveBuckets, 0)
			if checkShape(h.PositiveSpans, h.NegativeSpans, len(h.PositiveBuckets), len(h.NegativeBuckets)) == nil {
				_, c, app, err = app.AppendFloatHistogramST(5, it.AtT()+1, h)
				require.NoError(t, err)
				require.Positive(t, c.NumSamples())
			}
		}
		_, _, _, err = app.AppendFloatHistogramST(6, it.AtT()+2, &histogram.FloatHistogram{Count: 1, ZeroCount: 1})
		require.NoError(t, err)
		return
	}
	cc, err := FromData(enc, b)
	if err != nil {
		require.ErrorIs(t, err, ErrCorrupt)
		return
	}
	c := cc.(*HistogramChunk)
	it := c.Iterator(nil)
	n := 0
	var last *histogram.Histogram
	for it.Next() != ValNone {
		_, last = it.AtHistogram(last)
		it.AtFloatHistogram(nil)
		n++
	}
	if it.Err() != nil {
		require.ErrorIs(t, it.Err(), ErrCorrupt)
		return
	}
	require.Equal(t, c.NumSamples(), n)
	app, err := c.Appender()
	if err != nil {
		require.True(t, errors.Is(err, ErrCorrupt), "%v", err)
		return
	}
	if last != nil && !isStale(last.Sum) {
		// One more bucket after the last: the chunk is recoded.
		h := last.Copy()
		h.CounterResetHint = histogram.UnknownCounterReset
		h.PositiveSpans = append(h.PositiveSpans, histogram.Span{Offset: 1, Length: 1})
		h.PositiveBuckets = append(h.PositiveBuckets, 0)
		if checkShape(h.PositiveSpans, h.NegativeSpans, len(h.PositiveBuckets), len(h.NegativeBuckets)) == nil {
			_, c, app, err = app.AppendHistogramST(5, it.AtT()+1, h)
			require.NoError(t, err)
			require.Positive(t, c.NumSamples())
		}
	}
	_, _, _, err = app.AppendHistogramST(6, it.AtT()+2, &histogram.Histogram{Count: 1, ZeroCount: 1})
	require.NoError(t, err)
}

func FuzzHistogramChunkDecode(f *testing.F) {
	for _, b := range seedHistogramChunks(f, false, false) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeAll(t, b, false, false) })
}

func FuzzFloatHistogramChunkDecode(f *testing.F) {
	for _, b := range seedHistogramChunks(f, true, false) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeAll(t, b, true, false) })
}

// FuzzHistogramChunkRoundTrip appends a generated sequence, chosen by the
// fuzzer's seed and mode, to both chunk types and requires every sample
// back, also after resuming each chunk from its bytes.
func FuzzHistogramChunkRoundTrip(f *testing.F) {
	f.Add(uint64(0), uint8(0), uint16(100))
	f.Add(uint64(3), uint8(3), uint16(500))
	f.Fuzz(func(t *testing.T, seed uint64, mode uint8, n uint16) {
		g := newHistGen(seed, mode&1 != 0, mode&2 != 0)
		g.ResetPct, g.SchemaPct, g.StalePct = int(mode>>2&7), int(mode>>5&7), int(mode>>2&3)
		ts, hs := histSeq(g, int(n%800)+1)
		hh := newHistHead(t, 0)
		fc := NewFloatHistogramChunk()
		fa, err := fc.Appender()
		require.NoError(t, err)
		var fchunks []*FloatHistogramChunk
		for i := range ts {
			hh.append(ts[i], hs[i])
			res, c, a, err := fa.AppendFloatHistogram(ts[i], hs[i].ToFloat())
			require.NoError(t, err)
			if res == CutNewChunk {
				fchunks = append(fchunks, fc)
			}
			fc, fa = c, a
		}
		fchunks = append(fchunks, fc)
		i := 0
		var h histogram.Histogram
		for _, c := range hh.chunks() {
			rc, err := HistogramChunkFromData(c.Bytes())
			require.NoError(t, err)
			_, err = rc.Appender()
			require.NoError(t, err)
			it := c.Iterator(nil)
			for it.Next() != ValNone {
				_, got := it.AtHistogram(&h)
				requireSameHistogram(t, hs[i], got, "")
				i++
			}
			require.NoError(t, it.Err())
		}
		require.Equal(t, len(hs), i)
		i = 0
		var fh histogram.FloatHistogram
		for _, c := range fchunks {
			it := c.Iterator(nil)
			for it.Next() != ValNone {
				want := hs[i].ToFloat()
				_, got := it.AtFloatHistogram(&fh)
				require.Equal(t, ts[i], it.AtT())
				if isStale(want.Sum) {
					require.True(t, isStale(got.Sum))
				} else {
					requireSameFloatBuckets(t, want, got)
				}
				i++
			}
			require.NoError(t, it.Err())
		}
		require.Equal(t, len(hs), i)
	})
}

// requireSameFloatBuckets checks that got has want's fields and non-empty
// buckets, whatever the spans.
func requireSameFloatBuckets(t testing.TB, want, got *histogram.FloatHistogram) {
	t.Helper()
	require.Equal(t, want.Schema, got.Schema)
	require.Equal(t, want.Count, got.Count)
	require.Equal(t, want.ZeroCount, got.ZeroCount)
	require.Equal(t, want.Sum, got.Sum)
	m := func(fh *histogram.FloatHistogram) (map[int32]float64, map[int32]float64) {
		p, n := map[int32]float64{}, map[int32]float64{}
		for b := range fh.PositiveBucketSeq() {
			if b.Count != 0 {
				p[b.Index] = b.Count
			}
		}
		for b := range fh.NegativeBucketSeq() {
			if b.Count != 0 {
				n[b.Index] = b.Count
			}
		}
		return p, n
	}
	wp, wn := m(want)
	gp, gn := m(got)
	require.Equal(t, wp, gp)
	require.Equal(t, wn, gn)
}
