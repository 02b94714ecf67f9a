package histogram

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHistogramCopyIsIndependent(t *testing.T) {
	h := validExponential()
	h.CounterResetHint = GaugeType
	h.CustomValues = []float64{7} // unused by the schema, copied all the same
	c := h.Copy()
	require.Equal(t, h, c)

	c.PositiveSpans[0].Length = 9
	c.NegativeSpans[0].Offset = 9
	c.PositiveBuckets[0] = 9
	c.NegativeBuckets[0] = 9
	c.CustomValues[0] = 9
	require.Equal(t, validExponential().PositiveSpans, h.PositiveSpans)
	require.Equal(t, validExponential().NegativeSpans, h.NegativeSpans)
	require.Equal(t, validExponential().PositiveBuckets, h.PositiveBuckets)
	require.Equal(t, validExponential().NegativeBuckets, h.NegativeBuckets)
	require.Equal(t, []float64{7}, h.CustomValues)

	// nil stays nil and empty stays empty: Validate sees the same thing.
	e := &Histogram{CustomValues: []float64{}}
	require.NotNil(t, e.Copy().CustomValues)
	require.Nil(t, e.Copy().PositiveSpans)
	require.Equal(t, e.Validate(), e.Copy().Validate())
}

func TestFloatHistogramCopyIsIndependent(t *testing.T) {
	h := validCustom().ToFloat()
	c := h.Copy()
	require.Equal(t, h, c)
	c.PositiveBuckets[0] = 9
	c.PositiveSpans[0].Offset = 9
	c.CustomValues[0] = 9
	require.Equal(t, validCustom().ToFloat(), h)
}

func TestToFloat(t *testing.T) {
	h := validExponential()
	h.CounterResetHint = NotCounterReset
	fh := h.ToFloat()
	require.Equal(t, &FloatHistogram{
		CounterResetHint: NotCounterReset,
		Schema:           0,
		ZeroThreshold:    0.001,
		ZeroCount:        2,
		Count:            11,
		Sum:              10,
		NegativeSpans:    []Span{{Offset: 0, Length: 1}, {Offset: 1, Length: 1}},
		NegativeBuckets:  []float64{1, 2},
		PositiveSpans:    []Span{{Offset: 0, Length: 2}, {Offset: 2, Length: 1}},
		PositiveBuckets:  []float64{1, 2, 3},
	}, fh)
	fh.PositiveSpans[0].Length = 5
	require.Equal(t, uint32(2), h.PositiveSpans[0].Length, "ToFloat must not share spans")

	// Fields the schema does not use are dropped, as Prometheus drops them.
	h.CustomValues = []float64{1}
	require.Nil(t, h.ToFloat().CustomValues)
	c := validCustom()
	c.ZeroThreshold, c.ZeroCount = 1, 1
	c.NegativeSpans, c.NegativeBuckets = []Span{{Length: 1}}, []int64{1}
	cf := c.ToFloat()
	require.Zero(t, cf.ZeroThreshold)
	require.Zero(t, cf.ZeroCount)
	require.Nil(t, cf.NegativeSpans)
	require.Nil(t, cf.NegativeBuckets)
	require.Equal(t, []float64{1, 2, 5}, cf.CustomValues)
	require.Equal(t, []float64{1, 3, 2}, cf.PositiveBuckets)
	cf.CustomValues[0] = 0
	require.Equal(t, 1.0, c.CustomValues[0], "ToFloat must not share custom bounds")
}

func TestString(t *testing.T) {
	require.Equal(t,
		"{count:11, sum:10, [-4,-2):2, [-1,-0.5):1, [-0.001,0.001]:2, (0.5,1]:1, (1,2]:2, (8,16]:3}",
		validExponential().String())
	require.Equal(t,
		"{count:6, sum:20, [-Inf,1]:1, (1,2]:3, (5,+Inf]:2}",
		validCustom().String())
	require.Equal(t, "{count:0, sum:0}", (&Histogram{}).String())

	fh := validExponential().ToFloat()
	fh.Count = 10.5
	fh.PositiveBuckets[0] = 0.5
	fh.NegativeBuckets[0] = 0 // empty buckets are left out
	require.Equal(t,
		"{count:10.5, sum:10, [-4,-2):2, [-0.001,0.001]:2, (0.5,1]:0.5, (1,2]:2, (8,16]:3}",
		fh.String())

	// Schema −1: powers of four; schema 1: half powers of two.
	h := &Histogram{Schema: -1, Count: 1, PositiveSpans: []Span{{Offset: 1, Length: 1}}, PositiveBuckets: []int64{1}}
	require.Equal(t, "{count:1, sum:0, (1,4]:1}", h.String())
	h.Schema = 1
	// Prometheus's bound for √2 is one unit in the last place below the
	// correctly rounded 1.4142135623730951; BucketBound returns its value.
	require.Equal(t, "{count:1, sum:0, (1,1.414213562373095]:1}", h.String())

	// Invalid histograms print without panicking.
	bad := []*Histogram{
		{Schema: CustomBucketsSchema, ZeroCount: 3, PositiveSpans: []Span{{Offset: 5, Length: 2}}, PositiveBuckets: []int64{1, 1}},
		{Schema: 40, PositiveSpans: []Span{{Offset: -7, Length: 3}}, PositiveBuckets: []int64{1}},
		{Schema: 8, PositiveSpans: []Span{{Offset: math.MaxInt32, Length: 3}}, PositiveBuckets: []int64{1, 1, 1, 1}},
	}
	for _, b := range bad {
		_ = b.String()
		_ = b.ToFloat().String()
	}
}

func TestEquals(t *testing.T) {
	h := validExponential()
	require.True(t, h.Equals(h.Copy()))
	require.True(t, (*Histogram)(nil).Equals(nil))
	require.False(t, h.Equals(nil))
	require.False(t, (*Histogram)(nil).Equals(h))

	// The hint is not part of the data.
	o := h.Copy()
	o.CounterResetHint = CounterReset
	require.True(t, h.Equals(o))

	// Empty spans do not change the layout; splitting a span does.
	o = h.Copy()
	o.PositiveSpans = []Span{{Offset: -2, Length: 0}, {Offset: 2, Length: 2}, {Offset: 1, Length: 0}, {Offset: 1, Length: 1}, {Offset: 3, Length: 0}}
	require.True(t, h.Equals(o))
	o.PositiveSpans = []Span{{Offset: 0, Length: 1}, {Offset: 0, Length: 1}, {Offset: 2, Length: 1}}
	require.False(t, h.Equals(o))

	// NaN sums match by bit pattern.
	a, b := h.Copy(), h.Copy()
	a.Sum, b.Sum = math.NaN(), math.NaN()
	require.True(t, a.Equals(b))
	b.Sum = math.Float64frombits(0x7ff0000000000002) // another NaN: the stale marker
	require.False(t, a.Equals(b))

	for name, mutate := range map[string]func(*Histogram){
		"schema":         func(o *Histogram) { o.Schema = 1 },
		"count":          func(o *Histogram) { o.Count++ },
		"sum":            func(o *Histogram) { o.Sum = 11 },
		"zero threshold": func(o *Histogram) { o.ZeroThreshold = 0.01 },
		"zero count":     func(o *Histogram) { o.ZeroCount++ },
		"negative spans": func(o *Histogram) { o.NegativeSpans[1].Offset++ },
		"positive delta": func(o *Histogram) { o.PositiveBuckets[2]++ },
		"extra bucket": func(o *Histogram) {
			o.PositiveSpans[1].Length++
			o.PositiveBuckets = append(o.PositiveBuckets, -3)
		},
	} {
		o := h.Copy()
		mutate(o)
		require.False(t, h.Equals(o), name)
		require.False(t, o.Equals(h), name)
		require.False(t, h.ToFloat().Equals(o.ToFloat()), name)
	}

	// Custom bounds count only for custom buckets, and compare by value.
	c := validCustom()
	o = c.Copy()
	o.CustomValues = []float64{1, 2, 6}
	require.False(t, c.Equals(o))
	e1, e2 := validExponential(), validExponential()
	e2.CustomValues = []float64{3}
	require.True(t, e1.Equals(e2))
}

func TestFloatEquals(t *testing.T) {
	h := validFloat()
	require.True(t, h.Equals(h.Copy()))
	o := h.Copy()
	o.PositiveBuckets[0] = math.Copysign(0, -1)
	p := h.Copy()
	p.PositiveBuckets[0] = 0
	require.False(t, o.Equals(p), "0 and -0 differ by bit pattern")
	o.PositiveBuckets[0], p.PositiveBuckets[0] = math.NaN(), math.NaN()
	require.True(t, o.Equals(p))
	o.Count = math.NaN()
	require.False(t, o.Equals(p))
	o.ZeroThreshold, p.ZeroThreshold, o.Count = math.NaN(), math.NaN(), p.Count
	require.False(t, o.Equals(p), "ZeroThreshold compares by value")
}

func TestCounterResetHintString(t *testing.T) {
	for h, want := range map[CounterResetHint]string{
		UnknownCounterReset: "unknown",
		CounterReset:        "reset",
		NotCounterReset:     "not_reset",
		GaugeType:           "gauge",
		7:                   "hint(7)",
	} {
		require.Equal(t, want, h.String())
	}
}

func TestBucketBound(t *testing.T) {
	require.Equal(t, 1.0, BucketBound(0, 0, nil))
	require.Equal(t, 2.0, BucketBound(0, 1, nil))
	require.Equal(t, 0.5, BucketBound(0, -1, nil))
	require.Equal(t, 65536.0, BucketBound(-4, 1, nil))
	require.Equal(t, math.MaxFloat64, BucketBound(0, 1024, nil))
	require.Equal(t, math.Inf(1), BucketBound(0, 1025, nil))
	require.Equal(t, math.MaxFloat64, BucketBound(8, 1024<<8, nil))
	require.Equal(t, math.MaxFloat64, BucketBound(-2, 256, nil))
	require.InDelta(t, math.Sqrt2, BucketBound(1, 1, nil), 1e-15)
	cv := []float64{1, 2}
	require.Equal(t, math.Inf(-1), BucketBound(CustomBucketsSchema, -1, cv))
	require.Equal(t, 2.0, BucketBound(CustomBucketsSchema, 1, cv))
	require.Equal(t, math.Inf(1), BucketBound(CustomBucketsSchema, 2, cv))
	require.True(t, math.IsNaN(BucketBound(CustomBucketsSchema, 3, cv)))
	require.True(t, math.IsNaN(BucketBound(CustomBucketsSchema, -2, cv)))
	require.True(t, math.IsNaN(BucketBound(9, 0, nil)))
	// Bounds increase with the index in every schema, over the normal
	// float64 range (2^−1022 to 2^1024).
	for s := ExponentialSchemaMin; s <= ExponentialSchemaMax; s++ {
		lo, hi := int32(-1022), int32(1024)
		if s < 0 {
			lo, hi = lo>>-s, hi>>-s
		} else {
			lo, hi = lo<<s, hi<<s
		}
		for i := lo + 1; i <= hi+1; i++ {
			if lower, upper := BucketBound(s, i-1, nil), BucketBound(s, i, nil); !(lower < upper) {
				t.Fatalf("schema %d: bucket %d ends at %g, bucket %d at %g", s, i-1, lower, i, upper)
			}
		}
	}
}
