package histogram

import (
	"fmt"
	"math"
)

// Validate reports whether h is a well-formed histogram, accepting exactly
// what Prometheus v0.316.0 accepts. The error wraps ErrInvalid and one of the
// reasons in errors.go. In order, it checks:
//
//   - custom buckets: bounds not NaN, strictly increasing and not ending in
//     +Inf; span offsets not negative, span lengths adding up to the number
//     of buckets, no bucket beyond the +Inf one; then ZeroCount,
//     ZeroThreshold and the negative side unset;
//   - exponential schemas: for each side, no negative offset after the first
//     span, every bucket index within int32, span lengths adding up to the
//     number of buckets; then the negative bucket counts, and CustomValues
//     nil;
//   - any other schema: ErrSchema;
//   - the positive bucket counts: no running sum of deltas below zero;
//   - Count: equal to ZeroCount plus the bucket counts, or at least that if
//     Sum is NaN (NaN observations are counted but land in no bucket). The
//     total is taken modulo 2^64, as Prometheus takes it.
//
// ZeroThreshold of an exponential histogram is not checked (Prometheus
// accepts a negative or NaN one too). Validate does not allocate unless it
// fails.
func (h *Histogram) Validate() error {
	var negTotal, posTotal uint64
	switch {
	case IsCustomBucketsSchema(h.Schema):
		if err := checkCustomBounds(h.CustomValues, h.PositiveSpans, len(h.PositiveBuckets)); err != nil {
			return err
		}
		if err := checkCustomUnused(h.ZeroCount != 0, h.ZeroThreshold, h.NegativeSpans, len(h.NegativeBuckets)); err != nil {
			return err
		}
	case IsExponentialSchema(h.Schema):
		if err := checkExponentialSpans("positive side", h.PositiveSpans, len(h.PositiveBuckets)); err != nil {
			return err
		}
		if err := checkExponentialSpans("negative side", h.NegativeSpans, len(h.NegativeBuckets)); err != nil {
			return err
		}
		var err error
		if negTotal, err = deltaTotal("negative side", h.NegativeBuckets); err != nil {
			return err
		}
		if h.CustomValues != nil {
			return fmt.Errorf("%w: schema %d has %d custom bounds", ErrExponentialCustomBounds, h.Schema, len(h.CustomValues))
		}
	default:
		return schemaError(h.Schema)
	}
	posTotal, err := deltaTotal("positive side", h.PositiveBuckets)
	if err != nil {
		return err
	}
	inBuckets := negTotal + posTotal + h.ZeroCount
	if math.IsNaN(h.Sum) {
		if inBuckets > h.Count {
			return fmt.Errorf("%w: count is %d, buckets hold %d (sum is NaN)", ErrCountTooSmall, h.Count, inBuckets)
		}
	} else if inBuckets != h.Count {
		return fmt.Errorf("%w: count is %d, buckets hold %d", ErrCountMismatch, h.Count, inBuckets)
	}
	return nil
}

// Validate reports whether h is a well-formed float histogram, accepting
// exactly what Prometheus v0.316.0 accepts. The error wraps ErrInvalid and one
// of the reasons in errors.go. The checks are those of Histogram.Validate,
// except that counts are absolute: no bucket count, ZeroCount (exponential
// schemas) or Count may be negative. NaN counts pass, and Count is not
// compared with the bucket counts, since float rounding makes them drift.
func (h *FloatHistogram) Validate() error {
	switch {
	case IsCustomBucketsSchema(h.Schema):
		if err := checkCustomBounds(h.CustomValues, h.PositiveSpans, len(h.PositiveBuckets)); err != nil {
			return err
		}
		if err := checkCustomUnused(h.ZeroCount != 0, h.ZeroThreshold, h.NegativeSpans, len(h.NegativeBuckets)); err != nil {
			return err
		}
	case IsExponentialSchema(h.Schema):
		if err := checkExponentialSpans("positive side", h.PositiveSpans, len(h.PositiveBuckets)); err != nil {
			return err
		}
		if err := checkExponentialSpans("negative side", h.NegativeSpans, len(h.NegativeBuckets)); err != nil {
			return err
		}
		if err := checkFloatCounts("negative side", h.NegativeBuckets); err != nil {
			return err
		}
		if h.ZeroCount < 0 {
			return fmt.Errorf("%w: zero bucket has count %g", ErrNegativeBucketCount, h.ZeroCount)
		}
		if h.CustomValues != nil {
			return fmt.Errorf("%w: schema %d has %d custom bounds", ErrExponentialCustomBounds, h.Schema, len(h.CustomValues))
		}
	default:
		return schemaError(h.Schema)
	}
	if h.Count < 0 {
		return fmt.Errorf("%w: count is %g", ErrNegativeCount, h.Count)
	}
	if err := checkFloatCounts("positive side", h.PositiveBuckets); err != nil {
		return err
	}
	return nil
}

func schemaError(schema int32) error {
	return fmt.Errorf("%w: schema %d, want %d…%d or %d",
		ErrSchema, schema, ExponentialSchemaMin, ExponentialSchemaMax, CustomBucketsSchema)
}

// checkCustomUnused checks that a custom-bucket histogram leaves the fields
// of exponential schemas unset.
func checkCustomUnused(zeroCountSet bool, zeroThreshold float64, negSpans []Span, negBuckets int) error {
	switch {
	case zeroCountSet:
		return ErrCustomZeroCount
	case zeroThreshold != 0:
		return fmt.Errorf("%w: it is %g", ErrCustomZeroThreshold, zeroThreshold)
	case len(negSpans) > 0:
		return fmt.Errorf("%w: there are %d", ErrCustomNegativeSpans, len(negSpans))
	case negBuckets > 0:
		return fmt.Errorf("%w: there are %d", ErrCustomNegativeBuckets, negBuckets)
	}
	return nil
}

// deltaTotal decodes delta-encoded counts and returns their total. It fails
// if a decoded count is negative. Decoding wraps in int64 and the total in
// uint64, as Prometheus's do.
func deltaTotal(side string, deltas []int64) (uint64, error) {
	var cur int64
	var total uint64
	for i, d := range deltas {
		cur += d
		if cur < 0 {
			return 0, fmt.Errorf("%w: %s, bucket %d has count %d", ErrNegativeBucketCount, side, i+1, cur)
		}
		total += uint64(cur)
	}
	return total, nil
}

// checkFloatCounts fails if a count is negative (NaN is not).
func checkFloatCounts(side string, counts []float64) error {
	for i, c := range counts {
		if c < 0 {
			return fmt.Errorf("%w: %s, bucket %d has count %g", ErrNegativeBucketCount, side, i+1, c)
		}
	}
	return nil
}
