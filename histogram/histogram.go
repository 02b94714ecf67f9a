package histogram

import (
	"iter"
	"math"
	"slices"
	"strconv"
)

// Histogram is a native histogram with integer counts, the form scraped from
// instrumented code. Bucket slices are delta-encoded: the first entry is the
// count of the first bucket, each later entry the difference between its
// bucket's count and the previous bucket's. See the package documentation for
// schemas and spans.
//
// Fields that the schema does not use (CustomValues for exponential schemas;
// ZeroThreshold, ZeroCount and the negative side for custom buckets) must be
// zero or empty; Validate reports them otherwise.
type Histogram struct {
	// CounterResetHint says what is known about a counter reset here.
	CounterResetHint CounterResetHint
	// Schema is an exponential schema (−4…8) or CustomBucketsSchema.
	Schema int32
	// ZeroThreshold is the half-width of the zero bucket.
	ZeroThreshold float64
	// ZeroCount is the number of observations in the zero bucket.
	ZeroCount uint64
	// Count is the number of observations, NaN observations included.
	Count uint64
	// Sum is the sum of the observations. A Prometheus stale marker is a
	// Sum with the stale-NaN bit pattern.
	Sum float64
	// PositiveSpans and NegativeSpans lay out the buckets of each side.
	PositiveSpans, NegativeSpans []Span
	// PositiveBuckets and NegativeBuckets are the delta-encoded counts, one
	// per bucket the matching spans describe.
	PositiveBuckets, NegativeBuckets []int64
	// CustomValues are the upper bounds of the custom buckets, nil for
	// exponential schemas.
	CustomValues []float64
}

// UsesCustomBuckets reports whether h has the custom-bucket schema.
func (h *Histogram) UsesCustomBuckets() bool { return IsCustomBucketsSchema(h.Schema) }

// Copy returns a deep copy of h: every field, used by the schema or not, with
// slices that share no memory with h. A nil slice stays nil, an empty one
// stays empty, so the copy validates exactly as h does.
func (h *Histogram) Copy() *Histogram {
	c := *h
	c.PositiveSpans = slices.Clone(h.PositiveSpans)
	c.NegativeSpans = slices.Clone(h.NegativeSpans)
	c.PositiveBuckets = slices.Clone(h.PositiveBuckets)
	c.NegativeBuckets = slices.Clone(h.NegativeBuckets)
	c.CustomValues = slices.Clone(h.CustomValues)
	return &c
}

// ToFloat returns h as a FloatHistogram with absolute counts, sharing no
// memory with h. Like Prometheus, it keeps only the fields the schema uses:
// for custom buckets ZeroThreshold, ZeroCount and the negative side become
// zero, for exponential schemas CustomValues becomes nil; empty slices become
// nil. Counts are decoded by adding the deltas in float64, so counts above
// 2^53 may round.
func (h *Histogram) ToFloat() *FloatHistogram {
	fh := &FloatHistogram{
		CounterResetHint: h.CounterResetHint,
		Schema:           h.Schema,
		Count:            float64(h.Count),
		Sum:              h.Sum,
		PositiveSpans:    cloneNonEmpty(h.PositiveSpans),
		PositiveBuckets:  deltasToFloat(h.PositiveBuckets),
	}
	if h.UsesCustomBuckets() {
		fh.CustomValues = slices.Clone(h.CustomValues)
		return fh
	}
	fh.ZeroThreshold = h.ZeroThreshold
	fh.ZeroCount = float64(h.ZeroCount)
	fh.NegativeSpans = cloneNonEmpty(h.NegativeSpans)
	fh.NegativeBuckets = deltasToFloat(h.NegativeBuckets)
	return fh
}

// cloneNonEmpty copies s, returning nil if s is empty.
func cloneNonEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// deltasToFloat decodes delta-encoded counts into absolute float64 counts,
// summing in float64; nil if there are none.
func deltasToFloat(deltas []int64) []float64 {
	if len(deltas) == 0 {
		return nil
	}
	out := make([]float64, len(deltas))
	var cur float64
	for i, d := range deltas {
		cur += float64(d)
		out[i] = cur
	}
	return out
}

// Equals reports whether h and o hold the same data. Sum is compared by bit
// pattern (so equal NaNs, including stale markers, match); ZeroThreshold and
// custom bounds by value. Span lists match if they describe the same layout
// (empty spans aside), bucket slices must be equal. CustomValues are compared
// only for custom buckets; every other field always. The counter-reset hint
// is not compared.
func (h *Histogram) Equals(o *Histogram) bool {
	if h == nil || o == nil {
		return h == o
	}
	if h.Schema != o.Schema || h.Count != o.Count ||
		math.Float64bits(h.Sum) != math.Float64bits(o.Sum) {
		return false
	}
	if h.UsesCustomBuckets() && !boundsEqual(h.CustomValues, o.CustomValues) {
		return false
	}
	return h.ZeroThreshold == o.ZeroThreshold && h.ZeroCount == o.ZeroCount &&
		spansEqual(h.NegativeSpans, o.NegativeSpans) && slices.Equal(h.NegativeBuckets, o.NegativeBuckets) &&
		spansEqual(h.PositiveSpans, o.PositiveSpans) && slices.Equal(h.PositiveBuckets, o.PositiveBuckets)
}

// boundsEqual compares custom bounds by value (so a NaN bound never matches).
func boundsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// PositiveBucketSeq yields the positive buckets with absolute counts, from
// the lowest index up. Buckets the spans describe but the slice lacks (only
// in an invalid histogram) are not yielded.
func (h *Histogram) PositiveBucketSeq() iter.Seq[Bucket[uint64]] {
	return intBuckets(h.Schema, h.PositiveSpans, h.PositiveBuckets, h.CustomValues, true)
}

// NegativeBucketSeq yields the negative buckets with absolute counts, from
// the one next to zero downwards (lowest index first).
func (h *Histogram) NegativeBucketSeq() iter.Seq[Bucket[uint64]] {
	return intBuckets(h.Schema, h.NegativeSpans, h.NegativeBuckets, nil, false)
}

func intBuckets(schema int32, spans []Span, deltas []int64, customValues []float64, positive bool) iter.Seq[Bucket[uint64]] {
	return func(yield func(Bucket[uint64]) bool) {
		var cur int64
		forEachBucketIndex(spans, len(deltas), func(pos int, idx int32) bool {
			cur += deltas[pos]
			return yield(newBucket(schema, idx, customValues, positive, uint64(cur)))
		})
	}
}

// String returns h in Prometheus's notation, as `promtool tsdb dump` prints
// it: "{count:5, sum:10, [-1,-0.5):1, [-0.001,0.001]:2, (0.5,1]:2}", listing
// count, sum and every non-empty bucket from lowest to highest.
func (h *Histogram) String() string {
	var zero *Bucket[uint64]
	if !h.UsesCustomBuckets() {
		z := zeroBucket(h.ZeroThreshold, h.ZeroCount)
		zero = &z
	}
	return histogramString(strconv.FormatUint(h.Count, 10), h.Sum, h.NegativeBucketSeq(), h.PositiveBucketSeq(), zero)
}
