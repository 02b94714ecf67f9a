package promstorage_test

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	phistogram "github.com/prometheus/prometheus/model/histogram"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

func TestHistogramCounterResetHintsMatch(t *testing.T) {
	for ours, theirs := range map[histogram.CounterResetHint]phistogram.CounterResetHint{
		histogram.UnknownCounterReset: phistogram.UnknownCounterReset,
		histogram.CounterReset:        phistogram.CounterReset,
		histogram.NotCounterReset:     phistogram.NotCounterReset,
		histogram.GaugeType:           phistogram.GaugeType,
	} {
		require.Equal(t, byte(theirs), byte(ours))
	}
	require.Equal(t, phistogram.ExponentialSchemaMin, histogram.ExponentialSchemaMin)
	require.Equal(t, phistogram.ExponentialSchemaMax, histogram.ExponentialSchemaMax)
	require.Equal(t, phistogram.CustomBucketsSchema, histogram.CustomBucketsSchema)
}

// parityCases are hand-picked histograms around the edges of validation,
// valid and invalid.
func parityCases() []*histogram.Histogram {
	exp := func() *histogram.Histogram {
		return &histogram.Histogram{
			CounterResetHint: histogram.NotCounterReset,
			Schema:           3,
			ZeroThreshold:    0.001,
			ZeroCount:        2,
			Count:            11,
			Sum:              -7.5,
			NegativeSpans:    []histogram.Span{{Offset: -3, Length: 1}, {Offset: 1, Length: 1}},
			NegativeBuckets:  []int64{1, 1},
			PositiveSpans:    []histogram.Span{{Offset: 0, Length: 2}, {Offset: 2, Length: 1}},
			PositiveBuckets:  []int64{1, 1, 1},
		}
	}
	custom := func() *histogram.Histogram {
		return &histogram.Histogram{
			CounterResetHint: histogram.CounterReset,
			Schema:           histogram.CustomBucketsSchema,
			Count:            6,
			Sum:              20,
			CustomValues:     []float64{-1, 2, 5},
			PositiveSpans:    []histogram.Span{{Offset: 0, Length: 2}, {Offset: 1, Length: 1}},
			PositiveBuckets:  []int64{1, 2, -1},
		}
	}
	with := func(base func() *histogram.Histogram, mutate func(h *histogram.Histogram)) *histogram.Histogram {
		h := base()
		mutate(h)
		return h
	}
	return []*histogram.Histogram{
		{},
		exp(),
		custom(),
		with(exp, func(h *histogram.Histogram) { h.Schema = -4 }),
		with(exp, func(h *histogram.Histogram) { h.Schema = 8 }),
		with(exp, func(h *histogram.Histogram) { h.Schema = 9 }),
		with(exp, func(h *histogram.Histogram) { h.Schema = -5 }),
		with(exp, func(h *histogram.Histogram) { h.Schema = -9 }),
		with(exp, func(h *histogram.Histogram) { h.Schema = 52 }),
		with(exp, func(h *histogram.Histogram) { h.PositiveSpans[1].Offset = -1 }),
		with(exp, func(h *histogram.Histogram) { h.NegativeSpans[0].Offset = math.MinInt32 }),
		with(exp, func(h *histogram.Histogram) { h.NegativeSpans[0].Offset = math.MinInt32 + 1 }),
		with(exp, func(h *histogram.Histogram) { h.PositiveSpans[1].Offset = math.MaxInt32 - 4 }),
		with(exp, func(h *histogram.Histogram) { h.PositiveSpans[1].Offset = math.MaxInt32 - 3 }),
		with(exp, func(h *histogram.Histogram) { h.PositiveBuckets = h.PositiveBuckets[:2] }),
		with(exp, func(h *histogram.Histogram) { h.PositiveBuckets[1] = -2 }),
		with(exp, func(h *histogram.Histogram) { h.NegativeBuckets[1] = -2 }),
		with(exp, func(h *histogram.Histogram) { h.Count++ }),
		with(exp, func(h *histogram.Histogram) { h.Sum = math.NaN(); h.Count++ }),
		with(exp, func(h *histogram.Histogram) { h.Sum = math.NaN(); h.Count-- }),
		with(exp, func(h *histogram.Histogram) { h.CustomValues = []float64{} }),
		with(exp, func(h *histogram.Histogram) { h.ZeroThreshold = -1 }),
		with(exp, func(h *histogram.Histogram) { h.ZeroThreshold = math.NaN() }),
		// Totals wrap modulo 2^64 for both.
		with(exp, func(h *histogram.Histogram) { h.ZeroCount = math.MaxUint64; h.Count = 8 }),
		// Deltas wrap in int64 for both.
		with(exp, func(h *histogram.Histogram) { h.PositiveBuckets = []int64{math.MaxInt64, 1, 0}; h.Count = 0 }),
		with(custom, func(h *histogram.Histogram) {
			h.CustomValues = nil
			h.PositiveSpans = h.PositiveSpans[:1]
			h.PositiveBuckets = h.PositiveBuckets[:2]
			h.Count = 4
		}),
		with(custom, func(h *histogram.Histogram) { h.CustomValues = []float64{} }),
		with(custom, func(h *histogram.Histogram) { h.CustomValues = []float64{math.Inf(-1), 2, 5} }),
		with(custom, func(h *histogram.Histogram) { h.CustomValues = []float64{1, 2, math.Inf(1)} }),
		with(custom, func(h *histogram.Histogram) { h.CustomValues = []float64{1, math.NaN(), 5} }),
		with(custom, func(h *histogram.Histogram) { h.CustomValues = []float64{1, 1, 5} }),
		with(custom, func(h *histogram.Histogram) { h.CustomValues = []float64{1, 2} }),
		with(custom, func(h *histogram.Histogram) { h.PositiveSpans[0].Offset = -1 }),
		with(custom, func(h *histogram.Histogram) { h.ZeroCount = 1; h.Count++ }),
		with(custom, func(h *histogram.Histogram) { h.ZeroThreshold = 0.5 }),
		with(custom, func(h *histogram.Histogram) { h.NegativeSpans = []histogram.Span{} }),
		with(custom, func(h *histogram.Histogram) { h.NegativeSpans = []histogram.Span{{}} }),
		with(custom, func(h *histogram.Histogram) { h.NegativeBuckets = []int64{0} }),
		with(custom, func(h *histogram.Histogram) { h.Count = 5 }),
		// Bounds at the ends of the float64 range: the last finite bucket,
		// the ±Inf bucket, subnormal and zero bounds.
		with(exp, func(h *histogram.Histogram) {
			h.Schema = 0
			h.PositiveSpans = []histogram.Span{{Offset: 1022, Length: 4}}
			h.PositiveBuckets = []int64{1, 0, 0, 0}
			h.NegativeSpans = []histogram.Span{{Offset: -1078, Length: 6}}
			h.NegativeBuckets = []int64{1, 0, 0, 0, 0, 0}
			h.Count = 12
		}),
		with(exp, func(h *histogram.Histogram) {
			h.Schema = 8
			h.PositiveSpans = []histogram.Span{{Offset: 1023<<8 + 250, Length: 10}}
			h.PositiveBuckets = []int64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
			h.NegativeSpans = []histogram.Span{{Offset: -(1074 << 8) - 1000, Length: 3}}
			h.NegativeBuckets = []int64{1, 0, 0}
			h.Count = 15
		}),
		with(exp, func(h *histogram.Histogram) {
			h.Schema = -4
			h.PositiveSpans = []histogram.Span{{Offset: -68, Length: 3}, {Offset: 128, Length: 3}}
			h.PositiveBuckets = []int64{1, 0, 0, 0, 0, 0}
			h.Count = 11
		}),
	}
}

func TestHistogramValidateParity(t *testing.T) {
	cases := parityCases()
	for _, h := range cases[len(cases)-3:] {
		require.NoError(t, h.Validate(), "%v", h)
	}
	for _, h := range cases {
		checkParity(t, h)
		checkFloatParity(t, h.ToFloat())
		fh := h.ToFloat()
		fh.Count = -1
		checkFloatParity(t, fh)
		fh = h.ToFloat()
		fh.ZeroCount = -0.5
		checkFloatParity(t, fh)
		fh = h.ToFloat()
		fh.ZeroCount = math.NaN()
		checkFloatParity(t, fh)
		if len(fh.PositiveBuckets) > 0 {
			fh = h.ToFloat()
			fh.PositiveBuckets[0] = -1
			checkFloatParity(t, fh)
		}
	}
}

func TestHistogramConvertRoundTrip(t *testing.T) {
	for _, h := range parityCases() {
		p := promstorage.ToPromHistogram(h)
		require.True(t, sameInt(h, promstorage.FromPromHistogram(p)))
		require.True(t, sameInt(h, promstorage.FromPromHistogram(promstorage.ToPromHistogram(promstorage.FromPromHistogram(p)))))
		fh := h.ToFloat()
		require.True(t, sameFloat(promstorage.ToPromFloatHistogram(fh), promstorage.ToPromFloatHistogram(promstorage.FromPromFloatHistogram(promstorage.ToPromFloatHistogram(fh)))))
	}
	require.Nil(t, promstorage.ToPromHistogram(nil))
	require.Nil(t, promstorage.FromPromHistogram(nil))
	require.Nil(t, promstorage.ToPromFloatHistogram(nil))
	require.Nil(t, promstorage.FromPromFloatHistogram(nil))

	// No memory is shared.
	h := parityCases()[2]
	p := promstorage.ToPromHistogram(h)
	p.PositiveSpans[0].Length = 9
	p.PositiveBuckets[0] = 9
	p.CustomValues[0] = 9
	require.True(t, sameInt(parityCases()[2], h))
}

// checkParity checks that isotsdb and Prometheus agree on h: both accept it
// or both reject it; if accepted, String and ToFloat are identical.
func checkParity(t *testing.T, h *histogram.Histogram) {
	t.Helper()
	p := promstorage.ToPromHistogram(h)
	ours, theirs := h.Validate(), p.Validate()
	require.Equal(t, theirs == nil, ours == nil, "histogram %+v: isotsdb says %v, Prometheus says %v", h, ours, theirs)
	require.True(t, sameFloat(p.ToFloat(nil), promstorage.ToPromFloatHistogram(h.ToFloat())),
		"ToFloat of %+v: Prometheus %+v, isotsdb %+v", h, p.ToFloat(nil), h.ToFloat())
	if ours != nil {
		return
	}
	require.Equal(t, p.String(), h.String())
	// Equals agrees too (it is false for a NaN ZeroThreshold in both).
	require.Equal(t, p.Equals(promstorage.ToPromHistogram(h)), h.Equals(h.Copy()))
	require.Equal(t, p.ToFloat(nil).Equals(p.ToFloat(nil)), h.ToFloat().Equals(h.ToFloat()))
}

func checkFloatParity(t *testing.T, h *histogram.FloatHistogram) {
	t.Helper()
	p := promstorage.ToPromFloatHistogram(h)
	ours, theirs := h.Validate(), p.Validate()
	require.Equal(t, theirs == nil, ours == nil, "float histogram %+v: isotsdb says %v, Prometheus says %v", h, ours, theirs)
	if ours != nil {
		return
	}
	require.Equal(t, p.String(), h.String())
}

// sameFloat compares every field of two Prometheus float histograms, floats
// by bit pattern and slices including whether they are nil.
func sameFloat(a, b *phistogram.FloatHistogram) bool {
	bits := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	floats := func(x, y []float64) bool { return (x == nil) == (y == nil) && slices.EqualFunc(x, y, bits) }
	spans := func(x, y []phistogram.Span) bool { return (x == nil) == (y == nil) && slices.Equal(x, y) }
	return a.CounterResetHint == b.CounterResetHint && a.Schema == b.Schema &&
		bits(a.ZeroThreshold, b.ZeroThreshold) && bits(a.ZeroCount, b.ZeroCount) &&
		bits(a.Count, b.Count) && bits(a.Sum, b.Sum) &&
		spans(a.PositiveSpans, b.PositiveSpans) && spans(a.NegativeSpans, b.NegativeSpans) &&
		floats(a.PositiveBuckets, b.PositiveBuckets) && floats(a.NegativeBuckets, b.NegativeBuckets) &&
		floats(a.CustomValues, b.CustomValues)
}

// sameInt compares every field of two isotsdb integer histograms, floats by
// bit pattern and slices including whether they are nil.
func sameInt(a, b *histogram.Histogram) bool {
	bits := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	ints := func(x, y []int64) bool { return (x == nil) == (y == nil) && slices.Equal(x, y) }
	spans := func(x, y []histogram.Span) bool { return (x == nil) == (y == nil) && slices.Equal(x, y) }
	return a.CounterResetHint == b.CounterResetHint && a.Schema == b.Schema &&
		bits(a.ZeroThreshold, b.ZeroThreshold) && a.ZeroCount == b.ZeroCount &&
		a.Count == b.Count && bits(a.Sum, b.Sum) &&
		spans(a.PositiveSpans, b.PositiveSpans) && spans(a.NegativeSpans, b.NegativeSpans) &&
		ints(a.PositiveBuckets, b.PositiveBuckets) && ints(a.NegativeBuckets, b.NegativeBuckets) &&
		(a.CustomValues == nil) == (b.CustomValues == nil) && slices.EqualFunc(a.CustomValues, b.CustomValues, bits)
}

// parityInput turns fuzzer bytes into histograms that sit near the edges of
// validation: small offsets and counts, span lengths that mostly match the
// buckets, counts that mostly match the buckets, special floats.
type parityInput struct{ b []byte }

func (in *parityInput) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	c := in.b[0]
	in.b = in.b[1:]
	return c
}

func (in *parityInput) uint64() uint64 {
	var buf [8]byte
	for i := range buf {
		buf[i] = in.byte()
	}
	return binary.LittleEndian.Uint64(buf[:])
}

func (in *parityInput) small() int64 {
	if c := in.byte(); c < 240 {
		return int64(c%16) - 4
	}
	return int64(in.uint64())
}

func (in *parityInput) float() float64 {
	switch c := in.byte(); c % 8 {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return math.Float64frombits(in.uint64())
	case 4:
		return math.Copysign(0, -1)
	default:
		return float64(int64(c/8) - 8)
	}
}

func (in *parityInput) spans() []histogram.Span {
	n := int(in.byte() % 5)
	if n == 0 && in.byte()%2 == 0 {
		return nil
	}
	spans := make([]histogram.Span, n)
	for i := range spans {
		off := int32(in.small())
		if in.byte() == 255 {
			off = int32(in.uint64())
		}
		spans[i] = histogram.Span{Offset: off, Length: uint32(in.byte() % 6)}
	}
	return spans
}

func (in *parityInput) buckets(spans []histogram.Span) []int64 {
	n := 0
	for _, s := range spans {
		n += int(s.Length)
	}
	if c := in.byte(); c >= 224 {
		n = max(n+int(c%4)-2, 0)
	}
	if n == 0 && in.byte()%2 == 0 {
		return nil
	}
	bs := make([]int64, n)
	for i := range bs {
		bs[i] = in.small()
	}
	return bs
}

func (in *parityInput) customValues() []float64 {
	switch c := in.byte(); {
	case c < 16:
		return nil
	case c < 32:
		return []float64{}
	case c < 128:
		vs := make([]float64, c%8+1)
		v := in.float()
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		for i := range vs {
			vs[i] = v
			v += float64(in.byte()%4) + 0.5
		}
		if in.byte() < 32 {
			vs[int(in.byte())%len(vs)] = in.float()
		}
		return vs
	default:
		vs := make([]float64, c%6)
		for i := range vs {
			vs[i] = in.float()
		}
		return vs
	}
}

func (in *parityInput) histogram() *histogram.Histogram {
	h := &histogram.Histogram{CounterResetHint: histogram.CounterResetHint(in.byte() % 4)}
	switch c := in.byte(); {
	case c < 200:
		h.Schema = int32(c%15) - 5
	case c < 240:
		h.Schema = histogram.CustomBucketsSchema
	default:
		h.Schema = int32(in.uint64())
	}
	h.PositiveSpans, h.NegativeSpans = in.spans(), in.spans()
	h.PositiveBuckets, h.NegativeBuckets = in.buckets(h.PositiveSpans), in.buckets(h.NegativeSpans)
	if in.byte() < 64 {
		h.ZeroThreshold = in.float()
	}
	if in.byte() < 64 {
		h.ZeroCount = uint64(in.small())
	}
	if histogram.IsCustomBucketsSchema(h.Schema) || in.byte() < 16 {
		h.CustomValues = in.customValues()
	}
	h.Sum = in.float()
	var total uint64
	for _, bs := range [][]int64{h.PositiveBuckets, h.NegativeBuckets} {
		var cur int64
		for _, d := range bs {
			cur += d
			total += uint64(cur)
		}
	}
	if !histogram.IsCustomBucketsSchema(h.Schema) {
		total += h.ZeroCount
	}
	h.Count = total
	if in.byte() >= 128 {
		h.Count += uint64(in.small())
	}
	return h
}

// floatFrom makes a float histogram from h and the remaining bytes:
// h converted, then given fractional, negative or NaN counts, or fields its
// schema does not use.
func (in *parityInput) floatFrom(h *histogram.Histogram) *histogram.FloatHistogram {
	fh := h.ToFloat()
	for range in.byte() % 4 {
		v := in.float()
		switch in.byte() % 6 {
		case 0:
			fh.Count = v
		case 1:
			fh.ZeroCount = v
		case 2:
			if len(fh.PositiveBuckets) > 0 {
				fh.PositiveBuckets[int(in.byte())%len(fh.PositiveBuckets)] = v
			}
		case 3:
			if len(fh.NegativeBuckets) > 0 {
				fh.NegativeBuckets[int(in.byte())%len(fh.NegativeBuckets)] = v
			}
		case 4:
			fh.NegativeSpans = slices.Clone(h.NegativeSpans)
			fh.NegativeBuckets = make([]float64, len(h.NegativeBuckets))
		case 5:
			fh.CustomValues = in.customValues()
		}
	}
	return fh
}

// FuzzValidateParity: for any histogram, isotsdb's Validate accepts exactly
// what Prometheus's accepts (integer and float forms); for accepted ones
// String and Equals agree, and ToFloat gives the same result either way;
// conversion to Prometheus and back is the identity.
func FuzzValidateParity(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 8, 1, 4, 2, 1, 0, 0, 5, 5, 5, 0, 100, 0, 0, 30, 0})
	f.Add([]byte{2, 210, 2, 4, 2, 5, 3, 0, 0, 0, 0, 5, 6, 4, 0, 50, 8, 1, 2, 3, 40, 0, 0, 0})
	f.Add([]byte{0, 13, 3, 4, 3, 0, 5, 2, 0, 1, 1, 0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 200, 200, 16, 3, 1, 1, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &parityInput{b: data}
		h := in.histogram()
		checkParity(t, h)
		require.True(t, sameInt(h, promstorage.FromPromHistogram(promstorage.ToPromHistogram(h))), "round trip of %+v", h)
		fh := in.floatFrom(h)
		checkFloatParity(t, fh)
		require.True(t, sameFloat(promstorage.ToPromFloatHistogram(fh),
			promstorage.ToPromFloatHistogram(promstorage.FromPromFloatHistogram(promstorage.ToPromFloatHistogram(fh)))))
	})
}
