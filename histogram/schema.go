package histogram

import "math"

// Schema numbers.
const (
	// ExponentialSchemaMin is the coarsest exponential schema: each bucket
	// spans a factor of 2^16.
	ExponentialSchemaMin int32 = -4
	// ExponentialSchemaMax is the finest exponential schema: 256 buckets per
	// power of two.
	ExponentialSchemaMax int32 = 8
	// CustomBucketsSchema marks a histogram whose bucket bounds are listed in
	// CustomValues (NHCB).
	CustomBucketsSchema int32 = -53
)

// IsExponentialSchema reports whether s is one of the exponential schemas.
func IsExponentialSchema(s int32) bool {
	return s >= ExponentialSchemaMin && s <= ExponentialSchemaMax
}

// IsCustomBucketsSchema reports whether s is the custom-bucket schema.
func IsCustomBucketsSchema(s int32) bool { return s == CustomBucketsSchema }

// IsValidSchema reports whether s is an exponential or the custom-bucket
// schema.
func IsValidSchema(s int32) bool { return IsExponentialSchema(s) || IsCustomBucketsSchema(s) }

// BucketBound returns the upper bound of positive bucket idx in the given
// schema (the lower bound is BucketBound(schema, idx-1, customValues); a
// negative bucket covers the same interval mirrored at zero).
//
// Exponential schemas: 2^(idx·2^−schema), except that the last bucket below
// the one for ±Inf ends at math.MaxFloat64 rather than +Inf, so that only
// infinite observations fall into the bucket above it. Custom buckets:
// customValues[idx], −Inf for idx −1 and +Inf for idx len(customValues). For
// any other schema or index, NaN.
func BucketBound(schema, idx int32, customValues []float64) float64 {
	if IsCustomBucketsSchema(schema) {
		switch n := int64(len(customValues)); {
		case int64(idx) == n:
			return math.Inf(1)
		case idx == -1:
			return math.Inf(-1)
		case idx < -1 || int64(idx) > n:
			return math.NaN()
		default:
			return customValues[idx]
		}
	}
	if !IsExponentialSchema(schema) {
		return math.NaN()
	}
	if schema < 0 {
		// Whole powers of two: bucket idx ends at 2^(idx·2^−schema).
		exp := int(idx) << -schema
		if exp == 1024 {
			return math.MaxFloat64 // 2^1024 itself overflows.
		}
		return math.Ldexp(1, exp)
	}
	// Split idx into the power of two it falls in and its position inside
	// that power; the table holds the fractions in [0.5, 1) for schema 8, and
	// a coarser schema takes every 2^(8−schema)-th of them.
	pos := idx & (1<<schema - 1)
	frac := boundFractions[pos<<(ExponentialSchemaMax-schema)]
	exp := int(idx>>schema) + 1
	if frac == 0.5 && exp == 1025 {
		return math.MaxFloat64 // 0.5·2^1025 = 2^1024 overflows.
	}
	return math.Ldexp(frac, exp)
}
