package promstorage_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// The golden tests append the same histogram sequences with Prometheus's
// chunkenc and with our chunks package, the way a head does (following
// recodes and cut chunks, cutting for size every cutEvery samples with the
// previous appender passed on, and re-creating the appender from the chunk
// every resumeEvery samples), and require the chunks' bytes to be
// identical. Each side then decodes the other's chunks to the same samples.

type goldenOpts struct {
	custom, gauge bool
	float         bool // append h.ToFloat() to float histogram chunks
	cutEvery      int
	resumeEvery   int
	// st selects the ST encodings (EncHistogramST, EncFloatHistogramST)
	// and the start timestamps appended (see stPattern); 0 is the plain
	// encodings.
	st stPattern
}

// promHistHead drives Prometheus's encoder.
type promHistHead struct {
	done []chunkenc.Chunk
	cur  chunkenc.Chunk
	app  chunkenc.Appender
}

func newPromHistHead(t testing.TB, o goldenOpts) *promHistHead {
	hh := &promHistHead{}
	hh.cut(t, o)
	return hh
}

func (hh *promHistHead) cut(t testing.TB, o goldenOpts) {
	switch {
	case o.float && o.st != 0:
		hh.cur = chunkenc.NewFloatHistogramSTChunk()
	case o.float:
		hh.cur = chunkenc.NewFloatHistogramChunk()
	case o.st != 0:
		hh.cur = chunkenc.NewHistogramSTChunk()
	default:
		hh.cur = chunkenc.NewHistogramChunk()
	}
	var err error
	hh.app, err = hh.cur.Appender()
	require.NoError(t, err)
}

func (hh *promHistHead) append(t testing.TB, o goldenOpts, n int, st, ts int64, h *histogram.Histogram) {
	if o.resumeEvery > 0 && n%o.resumeEvery == o.resumeEvery-1 {
		var err error
		hh.app, err = hh.cur.Appender()
		require.NoError(t, err)
	}
	var prev chunkenc.Appender
	if o.cutEvery > 0 && hh.cur.NumSamples() >= o.cutEvery {
		hh.done = append(hh.done, hh.cur)
		prev = hh.app
		hh.cut(t, o)
	}
	var (
		c       chunkenc.Chunk
		recoded bool
		err     error
	)
	if o.float {
		c, recoded, hh.app, err = hh.app.AppendFloatHistogram(prev, st, ts, promstorage.ToPromFloatHistogram(h.ToFloat()), false)
	} else {
		c, recoded, hh.app, err = hh.app.AppendHistogram(prev, st, ts, promstorage.ToPromHistogram(h), false)
	}
	require.NoError(t, err)
	if c != nil {
		if !recoded {
			hh.done = append(hh.done, hh.cur)
		}
		hh.cur = c
	}
}

func (hh *promHistHead) bytes() [][]byte {
	var out [][]byte
	for _, c := range append(hh.done, hh.cur) {
		out = append(out, slices.Clone(c.Bytes()))
	}
	return out
}

// ourHistHead drives our encoder. Resuming goes through the chunk's bytes
// (HistogramChunkFromData), the harder path.
type ourHistHead struct {
	done [][]byte
	ic   *chunks.HistogramChunk
	ia   *chunks.HistogramAppender
	fc   *chunks.FloatHistogramChunk
	fa   *chunks.FloatHistogramAppender
}

func newOurHistHead(t testing.TB, o goldenOpts) *ourHistHead {
	hh := &ourHistHead{}
	hh.cut(t, o)
	return hh
}

func (hh *ourHistHead) cut(t testing.TB, o goldenOpts) {
	var err error
	switch {
	case o.float && o.st != 0:
		hh.fc = chunks.NewFloatHistogramSTChunk()
		hh.fa, err = hh.fc.Appender()
	case o.float:
		hh.fc = chunks.NewFloatHistogramChunk()
		hh.fa, err = hh.fc.Appender()
	case o.st != 0:
		hh.ic = chunks.NewHistogramSTChunk()
		hh.ia, err = hh.ic.Appender()
	default:
		hh.ic = chunks.NewHistogramChunk()
		hh.ia, err = hh.ic.Appender()
	}
	require.NoError(t, err)
}

func (hh *ourHistHead) curBytes(float bool) []byte {
	if float {
		return hh.fc.Bytes()
	}
	return hh.ic.Bytes()
}

func (hh *ourHistHead) append(t testing.TB, o goldenOpts, n int, st, ts int64, h *histogram.Histogram) {
	var err error
	if o.resumeEvery > 0 && n%o.resumeEvery == o.resumeEvery-1 {
		b := slices.Clone(hh.curBytes(o.float))
		if o.float {
			var c chunks.Chunk
			c, err = chunks.FromData(hh.fc.Encoding(), b)
			require.NoError(t, err)
			hh.fc = c.(*chunks.FloatHistogramChunk)
			hh.fa, err = hh.fc.Appender()
		} else {
			var c chunks.Chunk
			c, err = chunks.FromData(hh.ic.Encoding(), b)
			require.NoError(t, err)
			hh.ic = c.(*chunks.HistogramChunk)
			hh.ia, err = hh.ic.Appender()
		}
		require.NoError(t, err)
	}
	var prevI *chunks.HistogramAppender
	var prevF *chunks.FloatHistogramAppender
	if o.cutEvery > 0 && hh.numSamples(o.float) >= o.cutEvery {
		hh.done = append(hh.done, slices.Clone(hh.curBytes(o.float)))
		prevI, prevF = hh.ia, hh.fa
		hh.cut(t, o)
	}
	old := slices.Clone(hh.curBytes(o.float))
	var res chunks.HistogramAppendResult
	if o.float {
		res, hh.fc, hh.fa, err = hh.fa.AppendFloatHistogramSTAfter(prevF, st, ts, h.ToFloat())
	} else {
		res, hh.ic, hh.ia, err = hh.ia.AppendHistogramSTAfter(prevI, st, ts, h)
	}
	require.NoError(t, err)
	if res == chunks.CutNewChunk {
		hh.done = append(hh.done, old)
	}
}

func (hh *ourHistHead) numSamples(float bool) int {
	if float {
		return hh.fc.NumSamples()
	}
	return hh.ic.NumSamples()
}

func (hh *ourHistHead) bytes(float bool) [][]byte {
	return append(slices.Clone(hh.done), slices.Clone(hh.curBytes(float)))
}

func runGolden(t *testing.T, o goldenOpts, seed uint64, n int) {
	g := newHistGen(seed, o.custom, o.gauge)
	ts, hs := histSeq(g, n)
	sts := o.st.starts(seed, ts)
	ph := newPromHistHead(t, o)
	oh := newOurHistHead(t, o)
	for i := range ts {
		ph.append(t, o, i, sts[i], ts[i], hs[i].Copy())
		oh.append(t, o, i, sts[i], ts[i], hs[i].Copy())
	}
	want, got := ph.bytes(), oh.bytes(o.float)
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i], got[i], "chunk %d of %d", i, len(want))
	}
	for _, b := range want {
		requireSameDecoding(t, b, o.float, o.st != 0)
	}
}

// requireSameDecoding decodes chunk bytes with both decoders and requires
// the same samples, hints and start timestamps included. st selects the ST
// encodings.
func requireSameDecoding(t testing.TB, b []byte, float, st bool) {
	enc, ourEnc := chunkenc.EncHistogram, chunks.EncHistogram
	switch {
	case float && st:
		enc, ourEnc = chunkenc.EncFloatHistogramST, chunks.EncFloatHistogramST
	case float:
		enc, ourEnc = chunkenc.EncFloatHistogram, chunks.EncFloatHistogram
	case st:
		enc, ourEnc = chunkenc.EncHistogramST, chunks.EncHistogramST
	}
	pc, err := chunkenc.FromData(enc, b)
	require.NoError(t, err)
	pit := pc.Iterator(nil)
	oc, err := chunks.FromData(ourEnc, b)
	require.NoError(t, err)
	require.Equal(t, pc.NumSamples(), oc.NumSamples())
	var oi, of chunks.Iterator
	if float {
		of = oc.Iterator(nil)
	} else {
		oi = oc.Iterator(nil)
	}
	atST := func() int64 {
		if float {
			return of.(interface{ AtST() int64 }).AtST()
		}
		return oi.(interface{ AtST() int64 }).AtST()
	}
	var h histogram.Histogram
	var fh histogram.FloatHistogram
	for i := 0; ; i++ {
		vt := pit.Next()
		var got chunks.ValueType
		if float {
			got = of.Next()
		} else {
			got = oi.Next()
		}
		require.Equal(t, vt.String(), got.String(), "sample %d", i)
		if got == chunks.ValNone {
			break
		}
		msg := fmt.Sprintf("sample %d", i)
		require.Equal(t, pit.AtST(), atST(), "%s: start timestamp", msg)
		if float {
			pt, pfh := pit.AtFloatHistogram(nil)
			require.Equal(t, pt, of.AtT(), msg)
			of.AtFloatHistogram(&fh)
			want := promstorage.FromPromFloatHistogram(pfh)
			require.True(t, sameFloatDecoded(want, &fh), "%s: want %#v got %#v", msg, want, &fh)
			continue
		}
		pt, ph := pit.AtHistogram(nil)
		require.Equal(t, pt, oi.AtT(), msg)
		oi.AtHistogram(&h)
		want := promstorage.FromPromHistogram(ph)
		require.True(t, sameDecoded(want, &h), "%s: want %#v got %#v", msg, want, &h)
		_, pfh := pit.AtFloatHistogram(nil)
		_, gotFH := oi.AtFloatHistogram(&fh)
		require.True(t, sameFloatDecoded(promstorage.FromPromFloatHistogram(pfh), gotFH), msg)
	}
	require.NoError(t, pit.Err())
	if float {
		require.NoError(t, of.Err())
	} else {
		require.NoError(t, oi.Err())
	}
}

func goldenModes() map[string]goldenOpts {
	modes := map[string]goldenOpts{}
	for _, float := range []bool{false, true} {
		for _, kind := range []struct {
			name          string
			custom, gauge bool
		}{{"exp", false, false}, {"custom", true, false}, {"gauge", false, true}, {"customgauge", true, true}} {
			for _, cut := range []int{0, 120, 7} {
				for _, resume := range []int{0, 5, 13} {
					name := fmt.Sprintf("%s/cut%d/resume%d", kind.name, cut, resume)
					if float {
						name = "float/" + name
					}
					modes[name] = goldenOpts{custom: kind.custom, gauge: kind.gauge, float: float, cutEvery: cut, resumeEvery: resume}
				}
			}
		}
	}
	return modes
}

func TestHistogramChunkGolden(t *testing.T) {
	for name, o := range goldenModes() {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(4) {
				runGolden(t, o, seed, 400)
			}
		})
	}
}

func FuzzHistogramChunkGolden(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(50))
	f.Add(uint64(7), uint8(5), uint16(300))
	f.Fuzz(func(t *testing.T, seed uint64, mode uint8, n uint16) {
		o := goldenOpts{
			custom: mode&1 != 0, gauge: mode&2 != 0, float: mode&4 != 0,
			cutEvery: []int{0, 120, 7, 1}[mode>>3&3], resumeEvery: []int{0, 5, 13, 1}[mode>>5&3],
		}
		runGolden(t, o, seed, int(n%1000)+1)
	})
}

// TestHistogramChunkGoldenEdges runs hand-made sequences through both
// encoders: extreme values and layouts the generator does not make.
func TestHistogramChunkGoldenEdges(t *testing.T) {
	stale := math.Float64frombits(staleNaNBits)
	exp := func(ts int64, count uint64, sum float64, spans []histogram.Span, buckets []int64) goldenSample {
		var total uint64
		var cur int64
		for _, b := range buckets {
			cur += b
			total += uint64(cur)
		}
		return goldenSample{ts, &histogram.Histogram{Schema: 0, ZeroThreshold: math.Ldexp(1, -20), ZeroCount: count, Count: count + total,
			Sum: sum, PositiveSpans: spans, PositiveBuckets: buckets}}
	}
	sp := func(s ...int32) []histogram.Span {
		var out []histogram.Span
		for i := 0; i < len(s); i += 2 {
			out = append(out, histogram.Span{Offset: s[i], Length: uint32(s[i+1])})
		}
		return out
	}
	seqs := map[string][]goldenSample{
		"stale first": {
			{1000, &histogram.Histogram{Sum: stale}},
			{2000, &histogram.Histogram{Sum: stale}},
			exp(3000, 1, 1, sp(0, 1), []int64{1}),
		},
		"huge values": {
			exp(math.MinInt64/2, 1<<62, math.MaxFloat64, sp(math.MaxInt32-3, 2), []int64{1 << 60, -(1 << 59)}),
			exp(math.MaxInt64/2, 1<<62+1<<61, math.NaN(), sp(math.MaxInt32-3, 2), []int64{1<<60 + 1, -(1 << 59)}),
			exp(math.MaxInt64/2+1, 1<<63, math.Inf(-1), sp(math.MaxInt32-3, 3), []int64{1<<60 + 1, -(1 << 59), 7}),
		},
		"zero-length and split spans": {
			exp(1, 0, 0, sp(-5, 0, 2, 2, 0, 1, 0, 0), []int64{1, 1, 1}),
			exp(2, 0, 0, sp(-3, 3), []int64{1, 1, 1}),
			exp(3, 0, 0, sp(-10, 1, 6, 3, 5, 1), []int64{1, 0, 1, 1, -2}),
			exp(4, 0, 0, sp(-10, 1, 6, 3, 5, 1), []int64{2, 0, 1, 1, -2}),
		},
		"negative only, then both": {
			{10, &histogram.Histogram{Schema: -4, Count: 3, NegativeSpans: sp(2, 2), NegativeBuckets: []int64{1, 1}}},
			{20, &histogram.Histogram{Schema: -4, Count: 9, NegativeSpans: sp(1, 3), NegativeBuckets: []int64{1, 1, 1},
				PositiveSpans: sp(0, 1), PositiveBuckets: []int64{3}}},
			{30, &histogram.Histogram{Schema: -4, Count: 9, NegativeSpans: sp(1, 3), NegativeBuckets: []int64{1, 1, 1},
				PositiveSpans: sp(0, 1), PositiveBuckets: []int64{3}}},
		},
		"custom bounds": {
			{5, &histogram.Histogram{Schema: -53, Count: 3, Sum: 2, CustomValues: []float64{-1, 0, 0.001, 0.5, 33554.43, 33554.431, 1e300},
				PositiveSpans: sp(0, 2, 5, 1), PositiveBuckets: []int64{1, 0, 0}}},
			{6, &histogram.Histogram{Schema: -53, Count: 4, Sum: 2, CustomValues: []float64{-1, 0, 0.001, 0.5, 33554.43, 33554.431, 1e300},
				PositiveSpans: sp(0, 3, 4, 1), PositiveBuckets: []int64{1, 0, 1, -1}}},
		},
		"zero thresholds": {
			{1, &histogram.Histogram{ZeroThreshold: math.Ldexp(1, 10), ZeroCount: 1, Count: 1}},
			{2, &histogram.Histogram{ZeroThreshold: math.Ldexp(1, 11), ZeroCount: 1, Count: 1}},
			{3, &histogram.Histogram{ZeroThreshold: math.Ldexp(1, -243), ZeroCount: 1, Count: 1}},
			{4, &histogram.Histogram{ZeroThreshold: math.Ldexp(1, -244), ZeroCount: 1, Count: 1}},
			{5, &histogram.Histogram{ZeroThreshold: 3, ZeroCount: 1, Count: 1}},
		},
	}
	for name, seq := range seqs {
		for _, float := range []bool{false, true} {
			for _, resume := range []int{0, 1} {
				t.Run(fmt.Sprintf("%s/float=%v/resume=%d", name, float, resume), func(t *testing.T) {
					o := goldenOpts{float: float, resumeEvery: resume}
					ph := newPromHistHead(t, o)
					oh := newOurHistHead(t, o)
					for i, s := range seq {
						ph.append(t, o, i, 0, s.t, s.h.Copy())
						oh.append(t, o, i, 0, s.t, s.h.Copy())
					}
					want, got := ph.bytes(), oh.bytes(float)
					require.Equal(t, want, got)
					for _, b := range want {
						requireSameDecoding(t, b, float, false)
					}
				})
			}
		}
	}
}

type goldenSample struct {
	t int64
	h *histogram.Histogram
}

// FuzzHistogramChunkDecodeParity decodes arbitrary bytes with both
// decoders: whenever ours decodes a chunk without error, Prometheus's must
// decode the same samples. (Ours is stricter: it rejects, for example,
// unknown header bits and counts larger than the chunk can hold.)
func FuzzHistogramChunkDecodeParity(f *testing.F) {
	for _, float := range []bool{false, true} {
		for seed := range uint64(3) {
			o := goldenOpts{custom: seed == 1, gauge: seed == 2, float: float}
			g := newHistGen(seed, o.custom, o.gauge)
			ts, hs := histSeq(g, 30)
			oh := newOurHistHead(f, o)
			for i := range ts {
				oh.append(f, o, i, 0, ts[i], hs[i])
			}
			for _, b := range oh.bytes(float) {
				f.Add(b, float)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, float bool) {
		n := 0
		if float {
			c, err := chunks.FloatHistogramChunkFromData(b)
			if err != nil {
				return
			}
			it := c.Iterator(nil)
			for it.Next() != chunks.ValNone {
				n++
			}
			if it.Err() != nil {
				return
			}
		} else {
			c, err := chunks.HistogramChunkFromData(b)
			if err != nil {
				return
			}
			it := c.Iterator(nil)
			for it.Next() != chunks.ValNone {
				n++
			}
			if it.Err() != nil {
				return
			}
		}
		requireSameDecoding(t, b, float, false)
	})
}

// sameDecoded is Equals plus the hint, with the zero threshold and custom
// bounds compared bit for bit: decoded garbage can make them NaN, which
// Equals never finds equal.
func sameDecoded(want, got *histogram.Histogram) bool {
	w, g := *want, *got
	if !sameBitsOf(w.ZeroThreshold, g.ZeroThreshold) || !slices.EqualFunc(w.CustomValues, g.CustomValues, sameBitsOf) {
		return false
	}
	w.ZeroThreshold, g.ZeroThreshold, w.CustomValues, g.CustomValues = 0, 0, nil, nil
	return w.Equals(&g) && w.CounterResetHint == g.CounterResetHint
}

// sameFloatDecoded is sameDecoded for float histograms.
func sameFloatDecoded(want, got *histogram.FloatHistogram) bool {
	w, g := *want, *got
	if !sameBitsOf(w.ZeroThreshold, g.ZeroThreshold) || !slices.EqualFunc(w.CustomValues, g.CustomValues, sameBitsOf) {
		return false
	}
	w.ZeroThreshold, g.ZeroThreshold, w.CustomValues, g.CustomValues = 0, 0, nil, nil
	return w.Equals(&g) && w.CounterResetHint == g.CounterResetHint
}

func sameBitsOf(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
