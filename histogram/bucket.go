package histogram

import (
	"iter"
	"strconv"
	"strings"
)

// Bucket is one bucket of a histogram, decoded: its interval, whether each
// end belongs to it, and its absolute count. Index is the bucket's index in
// its schema (meaningless for the zero bucket).
type Bucket[C uint64 | float64] struct {
	Lower, Upper                   float64
	LowerInclusive, UpperInclusive bool
	Count                          C
	Index                          int32
}

// String writes the bucket in interval notation followed by its count, e.g.
// "(0.5,1]:3" or "[-0.001,0.001]:2"; numbers as %g formats them. It is the
// notation of Prometheus's bucket strings and of `promtool tsdb dump`.
func (b Bucket[C]) String() string {
	var sb strings.Builder
	b.appendTo(&sb)
	return sb.String()
}

func (b Bucket[C]) appendTo(sb *strings.Builder) {
	if b.LowerInclusive {
		sb.WriteByte('[')
	} else {
		sb.WriteByte('(')
	}
	sb.WriteString(strconv.FormatFloat(b.Lower, 'g', -1, 64))
	sb.WriteByte(',')
	sb.WriteString(strconv.FormatFloat(b.Upper, 'g', -1, 64))
	if b.UpperInclusive {
		sb.WriteByte(']')
	} else {
		sb.WriteByte(')')
	}
	sb.WriteByte(':')
	switch c := any(b.Count).(type) {
	case uint64:
		sb.WriteString(strconv.FormatUint(c, 10))
	case float64:
		sb.WriteString(strconv.FormatFloat(c, 'g', -1, 64))
	}
}

// newBucket returns the bucket with index idx on the positive or negative
// side, with its bounds. Exponential buckets include the end farther from
// zero; custom buckets are (lower, upper], the first one [−Inf, upper].
func newBucket[C uint64 | float64](schema, idx int32, customValues []float64, positive bool, count C) Bucket[C] {
	b := Bucket[C]{Count: count, Index: idx}
	upper := BucketBound(schema, idx, customValues)
	lower := BucketBound(schema, idx-1, customValues)
	if positive {
		b.Lower, b.Upper = lower, upper
	} else {
		b.Lower, b.Upper = -upper, -lower
	}
	if IsCustomBucketsSchema(schema) {
		b.LowerInclusive = idx == 0
		b.UpperInclusive = true
	} else {
		b.LowerInclusive = b.Lower < 0
		b.UpperInclusive = b.Upper > 0
	}
	return b
}

// zeroBucket returns the zero bucket [−threshold, threshold].
func zeroBucket[C uint64 | float64](threshold float64, count C) Bucket[C] {
	return Bucket[C]{
		Lower: -threshold, Upper: threshold,
		LowerInclusive: true, UpperInclusive: true,
		Count: count,
	}
}

// histogramString writes the notation String uses: count and sum, then every
// bucket with a non-zero count from the lowest to the highest, the zero
// bucket between the negative and the positive ones.
func histogramString[C uint64 | float64](count string, sum float64, neg, pos iter.Seq[Bucket[C]], zero *Bucket[C]) string {
	var sb strings.Builder
	sb.WriteString("{count:")
	sb.WriteString(count)
	sb.WriteString(", sum:")
	sb.WriteString(strconv.FormatFloat(sum, 'g', -1, 64))
	var negs []Bucket[C]
	for b := range neg {
		if b.Count != 0 {
			negs = append(negs, b)
		}
	}
	for i := len(negs) - 1; i >= 0; i-- {
		sb.WriteString(", ")
		negs[i].appendTo(&sb)
	}
	if zero != nil && zero.Count != 0 {
		sb.WriteString(", ")
		zero.appendTo(&sb)
	}
	for b := range pos {
		if b.Count != 0 {
			sb.WriteString(", ")
			b.appendTo(&sb)
		}
	}
	sb.WriteByte('}')
	return sb.String()
}
