package histogram

import (
	"iter"
	"math"
	"slices"
	"strconv"
)

// FloatHistogram is a native histogram with float64 counts, the form PromQL
// computes with. Bucket slices hold absolute counts, which may be
// fractional. Otherwise it is laid out like Histogram.
type FloatHistogram struct {
	// CounterResetHint says what is known about a counter reset here.
	CounterResetHint CounterResetHint
	// Schema is an exponential schema (−4…8) or CustomBucketsSchema.
	Schema int32
	// ZeroThreshold is the half-width of the zero bucket.
	ZeroThreshold float64
	// ZeroCount is the number of observations in the zero bucket; not
	// negative.
	ZeroCount float64
	// Count is the number of observations; not negative. It is not checked
	// against the buckets, since float rounding makes the two drift.
	Count float64
	// Sum is the sum of the observations.
	Sum float64
	// PositiveSpans and NegativeSpans lay out the buckets of each side.
	PositiveSpans, NegativeSpans []Span
	// PositiveBuckets and NegativeBuckets are the absolute counts, one per
	// bucket the matching spans describe; none negative.
	PositiveBuckets, NegativeBuckets []float64
	// CustomValues are the upper bounds of the custom buckets, nil for
	// exponential schemas.
	CustomValues []float64
}

// UsesCustomBuckets reports whether h has the custom-bucket schema.
func (h *FloatHistogram) UsesCustomBuckets() bool { return IsCustomBucketsSchema(h.Schema) }

// Copy returns a deep copy of h: every field, with slices that share no
// memory with h; nil and empty slices are kept as they are.
func (h *FloatHistogram) Copy() *FloatHistogram {
	c := *h
	c.PositiveSpans = slices.Clone(h.PositiveSpans)
	c.NegativeSpans = slices.Clone(h.NegativeSpans)
	c.PositiveBuckets = slices.Clone(h.PositiveBuckets)
	c.NegativeBuckets = slices.Clone(h.NegativeBuckets)
	c.CustomValues = slices.Clone(h.CustomValues)
	return &c
}

// Equals reports whether h and o hold the same data. Count, Sum, ZeroCount
// and bucket counts are compared by bit pattern (NaN matches the same NaN,
// 0 does not match −0); ZeroThreshold and custom bounds by value. Span lists
// match if they describe the same layout (empty spans aside). CustomValues
// are compared only for custom buckets; every other field always. The
// counter-reset hint is not compared.
func (h *FloatHistogram) Equals(o *FloatHistogram) bool {
	if h == nil || o == nil {
		return h == o
	}
	if h.Schema != o.Schema || !sameBits(h.Count, o.Count) || !sameBits(h.Sum, o.Sum) {
		return false
	}
	if h.UsesCustomBuckets() && !boundsEqual(h.CustomValues, o.CustomValues) {
		return false
	}
	return h.ZeroThreshold == o.ZeroThreshold && sameBits(h.ZeroCount, o.ZeroCount) &&
		spansEqual(h.NegativeSpans, o.NegativeSpans) && countsEqual(h.NegativeBuckets, o.NegativeBuckets) &&
		spansEqual(h.PositiveSpans, o.PositiveSpans) && countsEqual(h.PositiveBuckets, o.PositiveBuckets)
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// countsEqual compares float counts by bit pattern.
func countsEqual(a, b []float64) bool {
	return slices.EqualFunc(a, b, sameBits)
}

// PositiveBucketSeq yields the positive buckets from the lowest index up.
// Buckets the spans describe but the slice lacks (only in an invalid
// histogram) are not yielded.
func (h *FloatHistogram) PositiveBucketSeq() iter.Seq[Bucket[float64]] {
	return floatBuckets(h.Schema, h.PositiveSpans, h.PositiveBuckets, h.CustomValues, true)
}

// NegativeBucketSeq yields the negative buckets from the one next to zero
// downwards (lowest index first).
func (h *FloatHistogram) NegativeBucketSeq() iter.Seq[Bucket[float64]] {
	return floatBuckets(h.Schema, h.NegativeSpans, h.NegativeBuckets, nil, false)
}

func floatBuckets(schema int32, spans []Span, counts, customValues []float64, positive bool) iter.Seq[Bucket[float64]] {
	return func(yield func(Bucket[float64]) bool) {
		forEachBucketIndex(spans, len(counts), func(pos int, idx int32) bool {
			return yield(newBucket(schema, idx, customValues, positive, counts[pos]))
		})
	}
}

// String returns h in Prometheus's notation, e.g.
// "{count:5.5, sum:10, [-1,-0.5):1, (0.5,1]:4.5}"; see Histogram.String.
func (h *FloatHistogram) String() string {
	var zero *Bucket[float64]
	if !h.UsesCustomBuckets() {
		z := zeroBucket(h.ZeroThreshold, h.ZeroCount)
		zero = &z
	}
	return histogramString(strconv.FormatFloat(h.Count, 'g', -1, 64), h.Sum, h.NegativeBucketSeq(), h.PositiveBucketSeq(), zero)
}
