package histogram

import (
	"fmt"
	"math"
)

// Validate reports whether h is a well-formed histogram, accepting exactly
// what Prometheus v0.316.0 accepts. The error wraps ErrInvalid and one of the
// reasons in errors.go. In order, it checks:
//
//   - custom buckets: the bounds and spans (checkCustomBounds), then that
//     ZeroCount, ZeroThreshold and the negative side are unset;
//   - exponential schemas: the spans of both sides, the negative bucket
//     counts, and that CustomValues is nil;
//   - any other schema: ErrSchema;
//   - the positive bucket counts: no running sum of deltas below zero;
//   - Count: equal to ZeroCount plus the bucket counts, or at least that if
//     Sum is NaN (NaN observations are counted but land in no bucket). The
//     total is taken modulo 2^64, as Prometheus takes it.
//
// ZeroThreshold of an exponential histogram is not checked. Validate does not
// allocate unless it fails.
func (h *Histogram) Validate() error {
	var negTotal, posTotal uint64
	switch {
	case IsCustomBucketsSchema(h.Schema):
		if err := checkCustomBounds(h.CustomValues, h.PositiveSpans, len(h.PositiveBuckets)); err != nil {
			return fmt.Errorf("custom buckets: %w", err)
		}
		if err := checkCustomUnused(h.ZeroCount != 0, h.ZeroThreshold, h.NegativeSpans, len(h.NegativeBuckets)); err != nil {
			return err
		}
	case IsExponentialSchema(h.Schema):
		if err := checkExponentialSpans(h.PositiveSpans, len(h.PositiveBuckets)); err != nil {
			return fmt.Errorf("positive side: %w", err)
		}
		if err := checkExponentialSpans(h.NegativeSpans, len(h.NegativeBuckets)); err != nil {
			return fmt.Errorf("negative side: %w", err)
		}
		var err error
		if negTotal, err = deltaTotal(h.NegativeBuckets); err != nil {
			return fmt.Errorf("negative side: %w", err)
		}
		if h.CustomValues != nil {
			return fmt.Errorf("schema %d with %d custom bounds: %w", h.Schema, len(h.CustomValues), ErrExponentialCustomBounds)
		}
	default:
		return schemaError(h.Schema)
	}
	posTotal, err := deltaTotal(h.PositiveBuckets)
	if err != nil {
		return fmt.Errorf("positive side: %w", err)
	}
	inBuckets := negTotal + posTotal + h.ZeroCount
	if math.IsNaN(h.Sum) {
		if inBuckets > h.Count {
			return fmt.Errorf("buckets hold %d observations, count is %d: %w", inBuckets, h.Count, ErrCountTooSmall)
		}
	} else if inBuckets != h.Count {
		return fmt.Errorf("buckets hold %d observations, count is %d: %w", inBuckets, h.Count, ErrCountMismatch)
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
			return fmt.Errorf("custom buckets: %w", err)
		}
		if err := checkCustomUnused(h.ZeroCount != 0, h.ZeroThreshold, h.NegativeSpans, len(h.NegativeBuckets)); err != nil {
			return err
		}
	case IsExponentialSchema(h.Schema):
		if err := checkExponentialSpans(h.PositiveSpans, len(h.PositiveBuckets)); err != nil {
			return fmt.Errorf("positive side: %w", err)
		}
		if err := checkExponentialSpans(h.NegativeSpans, len(h.NegativeBuckets)); err != nil {
			return fmt.Errorf("negative side: %w", err)
		}
		if err := checkFloatCounts(h.NegativeBuckets); err != nil {
			return fmt.Errorf("negative side: %w", err)
		}
		if h.ZeroCount < 0 {
			return fmt.Errorf("zero bucket count is %g: %w", h.ZeroCount, ErrNegativeBucketCount)
		}
		if h.CustomValues != nil {
			return fmt.Errorf("schema %d with %d custom bounds: %w", h.Schema, len(h.CustomValues), ErrExponentialCustomBounds)
		}
	default:
		return schemaError(h.Schema)
	}
	if h.Count < 0 {
		return fmt.Errorf("count is %g: %w", h.Count, ErrNegativeCount)
	}
	if err := checkFloatCounts(h.PositiveBuckets); err != nil {
		return fmt.Errorf("positive side: %w", err)
	}
	return nil
}

func schemaError(schema int32) error {
	return fmt.Errorf("schema %d, want %d…%d or %d: %w",
		schema, ExponentialSchemaMin, ExponentialSchemaMax, CustomBucketsSchema, ErrSchema)
}

// checkCustomUnused checks that a custom-bucket histogram leaves the fields
// of exponential schemas unset.
func checkCustomUnused(zeroCountSet bool, zeroThreshold float64, negSpans []Span, negBuckets int) error {
	switch {
	case zeroCountSet:
		return fmt.Errorf("custom buckets: %w", ErrCustomZeroCount)
	case zeroThreshold != 0:
		return fmt.Errorf("custom buckets: zero threshold %g: %w", zeroThreshold, ErrCustomZeroThreshold)
	case len(negSpans) > 0:
		return fmt.Errorf("custom buckets: %d negative spans: %w", len(negSpans), ErrCustomNegativeSpans)
	case negBuckets > 0:
		return fmt.Errorf("custom buckets: %d negative buckets: %w", negBuckets, ErrCustomNegativeBuckets)
	}
	return nil
}

// deltaTotal decodes delta-encoded counts and returns their total. It fails
// if a decoded count is negative. Decoding wraps in int64 and the total in
// uint64, as Prometheus's do.
func deltaTotal(deltas []int64) (uint64, error) {
	var cur int64
	var total uint64
	for i, d := range deltas {
		cur += d
		if cur < 0 {
			return 0, fmt.Errorf("bucket %d has count %d: %w", i+1, cur, ErrNegativeBucketCount)
		}
		total += uint64(cur)
	}
	return total, nil
}

// checkFloatCounts fails if a count is negative (NaN is not).
func checkFloatCounts(counts []float64) error {
	for i, c := range counts {
		if c < 0 {
			return fmt.Errorf("bucket %d has count %g: %w", i+1, c, ErrNegativeBucketCount)
		}
	}
	return nil
}
