package histogram

import "errors"

// ErrInvalid is wrapped by every error Validate returns. The root package
// wraps it further as tsdb.ErrInvalidSample.
var ErrInvalid = errors.New("histogram: invalid histogram")

// invalidReason is a precise validation failure. It unwraps to ErrInvalid so
// that errors.Is(err, ErrInvalid) holds for every reason.
type invalidReason struct{ msg string }

func (r *invalidReason) Error() string { return "histogram: " + r.msg }
func (r *invalidReason) Unwrap() error { return ErrInvalid }

func reason(msg string) error { return &invalidReason{msg: msg} }

// The reasons Validate reports. Each wraps ErrInvalid; the error Validate
// returns wraps exactly one of them, with context such as the side (positive
// or negative), the span or bucket number and the values involved.
var (
	// ErrSchema: Schema is neither an exponential schema (−4…8) nor the
	// custom-bucket schema (−53).
	ErrSchema = reason("schema out of range")

	// ErrSpanNegativeOffset: a span after the first has a negative offset, or
	// (custom buckets) any span has one.
	ErrSpanNegativeOffset = reason("span has a negative offset")
	// ErrSpanIndexRange: the spans reach a bucket index outside int32.
	ErrSpanIndexRange = reason("span reaches a bucket index out of range")
	// ErrSpanBucketMismatch: the span lengths add up to a different number than
	// the number of buckets.
	ErrSpanBucketMismatch = reason("span lengths do not match the number of buckets")

	// ErrNegativeBucketCount: a bucket (or, float form, the zero bucket) has a
	// negative count; in the integer form, a running sum of deltas is negative.
	ErrNegativeBucketCount = reason("bucket has a negative count")
	// ErrNegativeCount: (float form) Count is negative.
	ErrNegativeCount = reason("observation count is negative")
	// ErrCountMismatch: (integer form, Sum not NaN) Count differs from the
	// zero count plus the bucket counts.
	ErrCountMismatch = reason("observation count differs from the bucket total")
	// ErrCountTooSmall: (integer form, Sum NaN) Count is below the zero count
	// plus the bucket counts.
	ErrCountTooSmall = reason("observation count is smaller than the bucket total")

	// ErrCustomBoundsNaN: a custom bound is NaN.
	ErrCustomBoundsNaN = reason("custom bound is NaN")
	// ErrCustomBoundsOrder: the custom bounds are not strictly increasing.
	ErrCustomBoundsOrder = reason("custom bounds are not strictly increasing")
	// ErrCustomBoundsInfinite: the last custom bound is +Inf (the +Inf bucket
	// is implicit).
	ErrCustomBoundsInfinite = reason("custom bounds must not end in +Inf")
	// ErrCustomBoundsTooFew: the spans reach past the last custom bucket.
	ErrCustomBoundsTooFew = reason("spans reach past the custom buckets")
	// ErrCustomZeroCount: custom buckets with a non-zero ZeroCount.
	ErrCustomZeroCount = reason("custom buckets must have a zero count of 0")
	// ErrCustomZeroThreshold: custom buckets with a non-zero ZeroThreshold.
	ErrCustomZeroThreshold = reason("custom buckets must have a zero threshold of 0")
	// ErrCustomNegativeSpans: custom buckets with negative spans.
	ErrCustomNegativeSpans = reason("custom buckets must not have negative spans")
	// ErrCustomNegativeBuckets: custom buckets with negative buckets.
	ErrCustomNegativeBuckets = reason("custom buckets must not have negative buckets")
	// ErrExponentialCustomBounds: an exponential schema with CustomValues set
	// (even to an empty, non-nil slice).
	ErrExponentialCustomBounds = reason("exponential schema must not have custom bounds")
)
