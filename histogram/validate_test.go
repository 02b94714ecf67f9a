package histogram

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// validExponential is a valid schema-0 histogram with both sides and a zero
// bucket: negative counts 1 (index 0) and 2 (index 2), zero count 2,
// positive counts 1, 2 (indexes 0, 1) and 3 (index 4): 11 in all.
func validExponential() *Histogram {
	return &Histogram{
		Schema:          0,
		ZeroThreshold:   0.001,
		ZeroCount:       2,
		Count:           11,
		Sum:             10,
		NegativeSpans:   []Span{{Offset: 0, Length: 1}, {Offset: 1, Length: 1}},
		NegativeBuckets: []int64{1, 1},
		PositiveSpans:   []Span{{Offset: 0, Length: 2}, {Offset: 2, Length: 1}},
		PositiveBuckets: []int64{1, 1, 1},
	}
}

// validCustom is a valid custom-bucket histogram with bounds 1, 2, 5:
// counts 1, 3 in buckets 0, 1 and 2 in the +Inf bucket (index 3).
func validCustom() *Histogram {
	return &Histogram{
		Schema:          CustomBucketsSchema,
		Count:           6,
		Sum:             20,
		CustomValues:    []float64{1, 2, 5},
		PositiveSpans:   []Span{{Offset: 0, Length: 2}, {Offset: 1, Length: 1}},
		PositiveBuckets: []int64{1, 2, -1},
	}
}

func TestHistogramValidate(t *testing.T) {
	cases := []struct {
		name   string
		base   func() *Histogram
		mutate func(h *Histogram)
		want   error // nil: valid
	}{
		{"exponential", validExponential, func(*Histogram) {}, nil},
		{"custom", validCustom, func(*Histogram) {}, nil},
		{"empty", func() *Histogram { return &Histogram{} }, func(*Histogram) {}, nil},
		{"every exponential schema", validExponential, func(h *Histogram) { h.Schema = 8 }, nil},
		{"lowest schema", validExponential, func(h *Histogram) { h.Schema = -4 }, nil},
		{"schema 9", validExponential, func(h *Histogram) { h.Schema = 9 }, ErrSchema},
		{"schema -5", validExponential, func(h *Histogram) { h.Schema = -5 }, ErrSchema},
		{"schema -52", validExponential, func(h *Histogram) { h.Schema = -52 }, ErrSchema},
		{"negative first offset", validExponential, func(h *Histogram) { h.PositiveSpans[0].Offset = -3 }, nil},
		{"negative later offset", validExponential, func(h *Histogram) { h.PositiveSpans[1].Offset = -1 }, ErrSpanNegativeOffset},
		{"negative later offset, negative side", validExponential, func(h *Histogram) { h.NegativeSpans[1].Offset = -1 }, ErrSpanNegativeOffset},
		{"first offset MinInt32", validExponential, func(h *Histogram) { h.PositiveSpans[0].Offset = math.MinInt32 }, ErrSpanIndexRange},
		{"index past MaxInt32", validExponential, func(h *Histogram) { h.PositiveSpans[1].Offset = math.MaxInt32 }, ErrSpanIndexRange},
		{"last index MaxInt32", validExponential, func(h *Histogram) {
			h.PositiveSpans = []Span{{Offset: math.MaxInt32 - 2, Length: 3}}
		}, nil},
		{"zero-length spans", validExponential, func(h *Histogram) {
			h.PositiveSpans = []Span{{Offset: 0, Length: 0}, {Offset: 0, Length: 2}, {Offset: 2, Length: 0}, {Offset: 0, Length: 1}}
		}, nil},
		{"more buckets than spans", validExponential, func(h *Histogram) {
			h.PositiveBuckets = append(h.PositiveBuckets, 0)
		}, ErrSpanBucketMismatch},
		{"fewer buckets than spans", validExponential, func(h *Histogram) {
			h.NegativeBuckets = h.NegativeBuckets[:1]
			h.Count--
		}, ErrSpanBucketMismatch},
		{"negative bucket count", validExponential, func(h *Histogram) { h.PositiveBuckets[1] = -2 }, ErrNegativeBucketCount},
		{"negative bucket count, negative side", validExponential, func(h *Histogram) { h.NegativeBuckets[0] = -1 }, ErrNegativeBucketCount},
		{"count too high", validExponential, func(h *Histogram) { h.Count++ }, ErrCountMismatch},
		{"count too low", validExponential, func(h *Histogram) { h.Count-- }, ErrCountMismatch},
		{"NaN sum, count higher", validExponential, func(h *Histogram) { h.Sum = math.NaN(); h.Count += 3 }, nil},
		{"NaN sum, count lower", validExponential, func(h *Histogram) { h.Sum = math.NaN(); h.Count-- }, ErrCountTooSmall},
		{"exponential with custom bounds", validExponential, func(h *Histogram) { h.CustomValues = []float64{1} }, ErrExponentialCustomBounds},
		{"exponential with empty custom bounds", validExponential, func(h *Histogram) { h.CustomValues = []float64{} }, ErrExponentialCustomBounds},
		{"negative zero threshold accepted", validExponential, func(h *Histogram) { h.ZeroThreshold = -1 }, nil},
		{"custom without bounds", validCustom, func(h *Histogram) {
			h.CustomValues = nil
			h.PositiveSpans = []Span{{Offset: 0, Length: 1}}
			h.PositiveBuckets = []int64{6}
		}, nil},
		{"custom NaN bound", validCustom, func(h *Histogram) { h.CustomValues = []float64{1, math.NaN(), 5} }, ErrCustomBoundsNaN},
		{"custom bounds equal", validCustom, func(h *Histogram) { h.CustomValues = []float64{1, 1, 5} }, ErrCustomBoundsOrder},
		{"custom bounds decreasing", validCustom, func(h *Histogram) { h.CustomValues = []float64{1, 3, 2} }, ErrCustomBoundsOrder},
		{"custom +Inf bound", validCustom, func(h *Histogram) { h.CustomValues = []float64{1, 2, math.Inf(1)} }, ErrCustomBoundsInfinite},
		{"custom -Inf first bound accepted", validCustom, func(h *Histogram) { h.CustomValues = []float64{math.Inf(-1), 2, 5} }, nil},
		{"custom negative first offset", validCustom, func(h *Histogram) { h.PositiveSpans[0].Offset = -1 }, ErrSpanNegativeOffset},
		{"custom negative later offset", validCustom, func(h *Histogram) { h.PositiveSpans[1].Offset = -1 }, ErrSpanNegativeOffset},
		{"custom span bucket mismatch", validCustom, func(h *Histogram) { h.PositiveBuckets = h.PositiveBuckets[:2] }, ErrSpanBucketMismatch},
		{"custom spans past +Inf bucket", validCustom, func(h *Histogram) { h.PositiveSpans[1].Offset = 2 }, ErrCustomBoundsTooFew},
		{"custom zero count", validCustom, func(h *Histogram) { h.ZeroCount = 1; h.Count++ }, ErrCustomZeroCount},
		{"custom zero threshold", validCustom, func(h *Histogram) { h.ZeroThreshold = 0.1 }, ErrCustomZeroThreshold},
		{"custom negative spans", validCustom, func(h *Histogram) { h.NegativeSpans = []Span{{Offset: 0, Length: 0}} }, ErrCustomNegativeSpans},
		{"custom negative buckets", validCustom, func(h *Histogram) { h.NegativeBuckets = []int64{0} }, ErrCustomNegativeBuckets},
		{"custom negative bucket count", validCustom, func(h *Histogram) { h.PositiveBuckets[2] = -4 }, ErrNegativeBucketCount},
		{"custom count mismatch", validCustom, func(h *Histogram) { h.Count = 7 }, ErrCountMismatch},
		{"custom empty bounds slice", validCustom, func(h *Histogram) {
			h.CustomValues = []float64{}
			h.PositiveSpans = nil
			h.PositiveBuckets = nil
			h.Count = 0
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.base()
			c.mutate(h)
			err := h.Validate()
			if c.want == nil {
				require.NoError(t, err)
				require.NoError(t, h.ToFloat().Validate(), "ToFloat of a valid histogram")
				return
			}
			require.ErrorIs(t, err, c.want)
			require.ErrorIs(t, err, ErrInvalid)
			t.Log(err)
		})
	}
}

// validFloat is validExponential as a float histogram with a fractional
// count.
func validFloat() *FloatHistogram {
	fh := validExponential().ToFloat()
	fh.PositiveBuckets[0] = 0.5
	return fh
}

func TestFloatHistogramValidate(t *testing.T) {
	cases := []struct {
		name   string
		base   func() *FloatHistogram
		mutate func(h *FloatHistogram)
		want   error
	}{
		{"exponential", validFloat, func(*FloatHistogram) {}, nil},
		{"custom", func() *FloatHistogram { return validCustom().ToFloat() }, func(*FloatHistogram) {}, nil},
		{"count not checked against buckets", validFloat, func(h *FloatHistogram) { h.Count = 1 }, nil},
		{"NaN counts accepted", validFloat, func(h *FloatHistogram) {
			h.Count, h.ZeroCount, h.PositiveBuckets[1] = math.NaN(), math.NaN(), math.NaN()
		}, nil},
		{"negative count", validFloat, func(h *FloatHistogram) { h.Count = -1 }, ErrNegativeCount},
		{"negative zero count", validFloat, func(h *FloatHistogram) { h.ZeroCount = -0.5 }, ErrNegativeBucketCount},
		{"negative positive bucket", validFloat, func(h *FloatHistogram) { h.PositiveBuckets[2] = -1 }, ErrNegativeBucketCount},
		{"negative negative bucket", validFloat, func(h *FloatHistogram) { h.NegativeBuckets[1] = -1 }, ErrNegativeBucketCount},
		{"minus zero bucket accepted", validFloat, func(h *FloatHistogram) { h.PositiveBuckets[2] = math.Copysign(0, -1) }, nil},
		{"schema", validFloat, func(h *FloatHistogram) { h.Schema = 10 }, ErrSchema},
		{"span bucket mismatch", validFloat, func(h *FloatHistogram) { h.PositiveSpans[0].Length = 3 }, ErrSpanBucketMismatch},
		{"negative offset", validFloat, func(h *FloatHistogram) { h.NegativeSpans[1].Offset = -2 }, ErrSpanNegativeOffset},
		{"exponential with custom bounds", validFloat, func(h *FloatHistogram) { h.CustomValues = []float64{} }, ErrExponentialCustomBounds},
		{"custom NaN zero count", func() *FloatHistogram { return validCustom().ToFloat() }, func(h *FloatHistogram) { h.ZeroCount = math.NaN() }, ErrCustomZeroCount},
		{"custom NaN zero threshold", func() *FloatHistogram { return validCustom().ToFloat() }, func(h *FloatHistogram) { h.ZeroThreshold = math.NaN() }, ErrCustomZeroThreshold},
		{"custom negative spans", func() *FloatHistogram { return validCustom().ToFloat() }, func(h *FloatHistogram) { h.NegativeSpans = []Span{{}} }, ErrCustomNegativeSpans},
		{"custom negative buckets", func() *FloatHistogram { return validCustom().ToFloat() }, func(h *FloatHistogram) { h.NegativeBuckets = []float64{1} }, ErrCustomNegativeBuckets},
		{"custom bounds too few", func() *FloatHistogram { return validCustom().ToFloat() }, func(h *FloatHistogram) { h.CustomValues = h.CustomValues[:1] }, ErrCustomBoundsTooFew},
		{"custom +Inf", func() *FloatHistogram { return validCustom().ToFloat() }, func(h *FloatHistogram) { h.CustomValues = []float64{1, 2, 5, math.Inf(1)} }, ErrCustomBoundsInfinite},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.base()
			c.mutate(h)
			err := h.Validate()
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.want)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
}

// BenchmarkValidate validates a 20-bucket schema-3 histogram in two spans,
// the size of a typical latency histogram. It must not allocate.
func BenchmarkValidate(b *testing.B) {
	h := &Histogram{
		Schema:          3,
		ZeroThreshold:   1e-128,
		PositiveSpans:   []Span{{Offset: -2, Length: 12}, {Offset: 3, Length: 8}},
		PositiveBuckets: make([]int64, 20),
		Sum:             1234.5,
	}
	for i := range h.PositiveBuckets {
		h.PositiveBuckets[i] = 1 // counts 1, 2, …, 20
	}
	h.Count = 20 * 21 / 2
	fh := h.ToFloat()
	require.NoError(b, h.Validate())
	require.NoError(b, fh.Validate())
	b.Run("integer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := h.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("float", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := fh.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestValidateDoesNotAllocate(t *testing.T) {
	h := validExponential()
	fh := h.ToFloat()
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = h.Validate() }))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = fh.Validate() }))
}
