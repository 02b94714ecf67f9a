package histogram

import (
	"fmt"
	"math"
)

// Span is a run of consecutive buckets. For the first span of a side, Offset
// is the index of its first bucket and may be negative; for every later span
// it is the number of buckets skipped since the end of the previous span and
// must not be negative. Length is the number of buckets in the run; a span of
// length 0 is allowed and only moves the index along.
type Span struct {
	Offset int32
	Length uint32
}

// spanBuckets is the number of buckets the spans describe.
func spanBuckets(spans []Span) int {
	n := 0
	for _, s := range spans {
		n += int(s.Length)
	}
	return n
}

// checkExponentialSpans checks the spans of one side of an exponential
// histogram against its number of buckets: later offsets are not negative,
// every index fits in an int32, and the lengths add up to numBuckets.
func checkExponentialSpans(side string, spans []Span, numBuckets int) error {
	// end is one past the index of the last bucket so far; int64 so that
	// offsets that would wrap an int32 are caught.
	var end int64
	for i, s := range spans {
		switch {
		case i > 0 && s.Offset < 0:
			return fmt.Errorf("%w: %s, span %d has offset %d", ErrSpanNegativeOffset, side, i+1, s.Offset)
		case i == 0 && s.Offset == math.MinInt32:
			return fmt.Errorf("%w: %s, span 1 starts at bucket index %d", ErrSpanIndexRange, side, s.Offset)
		}
		end += int64(s.Offset) + int64(s.Length)
		if end-1 > math.MaxInt32 {
			return fmt.Errorf("%w: %s, span %d ends at bucket index %d", ErrSpanIndexRange, side, i+1, end-1)
		}
	}
	if n := spanBuckets(spans); n != numBuckets {
		return fmt.Errorf("%w: %s, spans cover %d buckets, there are %d", ErrSpanBucketMismatch, side, n, numBuckets)
	}
	return nil
}

// checkCustomBounds checks the custom bounds and the positive spans of a
// custom-bucket histogram: bounds not NaN, strictly increasing, not ending in
// +Inf (a first bound of −Inf is accepted, as Prometheus accepts it); no span
// offset negative; span lengths adding up to numBuckets; and no bucket index
// beyond len(bounds), the implicit +Inf bucket.
func checkCustomBounds(bounds []float64, spans []Span, numBuckets int) error {
	for i, b := range bounds {
		if math.IsNaN(b) {
			return fmt.Errorf("%w: bound %d", ErrCustomBoundsNaN, i+1)
		}
		if i > 0 && b <= bounds[i-1] {
			return fmt.Errorf("%w: bound %d is %g, bound %d is %g", ErrCustomBoundsOrder, i, bounds[i-1], i+1, b)
		}
	}
	if len(bounds) > 0 && math.IsInf(bounds[len(bounds)-1], 1) {
		return fmt.Errorf("%w: bound %d is +Inf", ErrCustomBoundsInfinite, len(bounds))
	}
	// reach is one past the index of the last bucket; int64 cannot overflow
	// here since offsets are non-negative int32 and lengths uint32.
	var reach int64
	for i, s := range spans {
		if s.Offset < 0 {
			return fmt.Errorf("%w: custom buckets, span %d has offset %d", ErrSpanNegativeOffset, i+1, s.Offset)
		}
		reach += int64(s.Offset) + int64(s.Length)
	}
	if n := spanBuckets(spans); n != numBuckets {
		return fmt.Errorf("%w: custom buckets, spans cover %d buckets, there are %d", ErrSpanBucketMismatch, n, numBuckets)
	}
	if reach > int64(len(bounds))+1 {
		return fmt.Errorf("%w: spans reach bucket index %d, %d bounds allow indexes 0 to %d",
			ErrCustomBoundsTooFew, reach-1, len(bounds), len(bounds))
	}
	return nil
}

// spansEqual reports whether two span lists describe the same bucket layout.
// Empty spans are folded into the next non-empty one (their offsets add up),
// trailing empty spans are ignored, but adjacent non-empty spans are not
// merged: {0,2},{0,1} and {0,3} differ, as they do for Prometheus. Offsets add
// up in int32, wrapping as Prometheus's do.
func spansEqual(a, b []Span) bool {
	for {
		sa, restA, okA := nextNonEmptySpan(a)
		sb, restB, okB := nextNonEmptySpan(b)
		if !okA || !okB {
			return okA == okB
		}
		if sa != sb {
			return false
		}
		a, b = restA, restB
	}
}

// nextNonEmptySpan returns the first non-empty span of spans, with the
// offsets of the empty spans before it added to its own, and the spans after
// it. ok is false if spans holds no non-empty span.
func nextNonEmptySpan(spans []Span) (s Span, rest []Span, ok bool) {
	var offset int32
	for i, sp := range spans {
		offset += sp.Offset
		if sp.Length > 0 {
			return Span{Offset: offset, Length: sp.Length}, spans[i+1:], true
		}
	}
	return Span{}, nil, false
}

// forEachBucketIndex calls f with the position in the bucket slice and the
// bucket index of every bucket the spans describe, in order, stopping after
// numBuckets buckets (spans of an invalid histogram may describe more) or
// when f returns false.
func forEachBucketIndex(spans []Span, numBuckets int, f func(pos int, idx int32) bool) {
	pos := 0
	var idx int32
	for i, s := range spans {
		if i == 0 {
			idx = s.Offset
		} else {
			idx += s.Offset
		}
		for j := uint32(0); j < s.Length; j++ {
			if pos >= numBuckets {
				return
			}
			if !f(pos, idx) {
				return
			}
			pos++
			idx++
		}
	}
}
