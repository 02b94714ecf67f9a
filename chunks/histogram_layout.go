package chunks

import (
	"fmt"
	"math"

	"github.com/isotsdb/tsdb/histogram"
)

// The layout of a histogram chunk is written once, before its first sample:
// the zero threshold, the schema (signed varbit), the positive then the
// negative spans (each a varbit count of spans, then per span the length as
// unsigned and the offset as signed varbit) and, for the custom-buckets
// schema only, the custom bounds (a varbit count, then each bound). Every
// sample in the chunk has exactly the buckets the layout describes.

// histLayout is the bucket layout shared by all samples of a histogram
// chunk. customValues is nil unless schema is the custom-buckets schema.
type histLayout struct {
	schema         int32
	zeroThreshold  float64
	pSpans, nSpans []histogram.Span
	customValues   []float64
}

// zeroThresholdExpBias maps the binary exponent of a power-of-two zero
// threshold to its one-byte code: thresholds 2^-243 (0.5·2^-242) through
// 2^10 (0.5·2^11) are stored as exponent+243, 1..254. Byte 0 stands for a
// zero threshold and byte 255 announces the threshold's 64 float bits.
const zeroThresholdExpBias = 243

func (w *bitWriter) putZeroThreshold(z float64) {
	if z == 0 {
		w.writeBits(0, 8)
		return
	}
	frac, exp := math.Frexp(z)
	if frac == 0.5 && exp >= 1-zeroThresholdExpBias && exp <= 254-zeroThresholdExpBias {
		w.writeBits(uint64(exp+zeroThresholdExpBias), 8)
		return
	}
	w.writeBits(0xff, 8)
	w.writeBits(math.Float64bits(z), 64)
}

func (r *bitReader) readZeroThreshold() (float64, bool) {
	code, ok := r.readBits(8)
	if !ok {
		return 0, false
	}
	switch code {
	case 0:
		return 0, true
	case 0xff:
		u, ok := r.readWide(64)
		return math.Float64frombits(u), ok
	}
	return math.Ldexp(0.5, int(code)-zeroThresholdExpBias), true
}

// maxCompactBound is the largest custom bound, in thousandths, that is
// stored compactly: 1 plus it is the largest value a varbit of at most 25
// value bits holds, so such bounds take at most 4 bytes.
const maxCompactBound = 1<<25 - 2

// putCustomBound writes a custom bucket bound. A bound in [0, 33554.430]
// that is a whole number of thousandths is written as that number plus one,
// unsigned varbit (never 0, so never a lone 0 bit); any other bound is a 0
// bit and its 64 float bits.
func (w *bitWriter) putCustomBound(b float64) {
	milli := b * 1000
	if milli >= 0 && milli <= maxCompactBound && float64(uint(math.Round(milli)))/1000 == b {
		w.putVarbitUint(uint64(math.Round(milli)) + 1)
		return
	}
	w.writeBits(0, 1)
	w.writeBits(math.Float64bits(b), 64)
}

func (r *bitReader) readCustomBound() (float64, bool) {
	u, ok := r.readVarbitUint()
	if !ok {
		return 0, false
	}
	if u != 0 {
		return float64(u-1) / 1000, true
	}
	u, ok = r.readWide(64)
	return math.Float64frombits(u), ok
}

// writeLayout writes l as the chunk's layout.
func (w *bitWriter) writeLayout(l *histLayout) {
	w.putZeroThreshold(l.zeroThreshold)
	w.putVarbitInt(int64(l.schema))
	w.writeSpans(l.pSpans)
	w.writeSpans(l.nSpans)
	if histogram.IsCustomBucketsSchema(l.schema) {
		w.putVarbitUint(uint64(len(l.customValues)))
		for _, b := range l.customValues {
			w.putCustomBound(b)
		}
	}
}

func (w *bitWriter) writeSpans(spans []histogram.Span) {
	w.putVarbitUint(uint64(len(spans)))
	for _, s := range spans {
		w.putVarbitUint(uint64(s.Length))
		w.putVarbitInt(int64(s.Offset))
	}
}

// bitsLeft returns how many bits of data are not consumed yet: an upper
// bound on what any further field can need, used to bound allocations
// before trusting a count read from the chunk.
func (r *bitReader) bitsLeft() int { return len(r.data)*8 - r.bitPos() }

// readLayout reads a layout written by writeLayout into l, reusing l's
// slices. Counts are checked against the bits left before anything is
// allocated, and a schema this package cannot represent is an error.
func (r *bitReader) readLayout(l *histLayout) error {
	start := r.bitPos() / 8
	z, ok := r.readZeroThreshold()
	if !ok {
		return layoutErr(start, "truncated zero threshold")
	}
	s, ok := r.readVarbitInt()
	if !ok {
		return layoutErr(start, "truncated schema")
	}
	if !histogram.IsValidSchema(int32(s)) || int64(int32(s)) != s {
		return layoutErr(start, fmt.Sprintf("unknown schema %d", s))
	}
	l.schema, l.zeroThreshold = int32(s), z
	var err error
	if l.pSpans, err = r.readSpans(l.pSpans[:0], start, "positive"); err != nil {
		return err
	}
	if l.nSpans, err = r.readSpans(l.nSpans[:0], start, "negative"); err != nil {
		return err
	}
	l.customValues = l.customValues[:0]
	if !histogram.IsCustomBucketsSchema(l.schema) {
		return nil
	}
	n, ok := r.readVarbitUint()
	if !ok {
		return layoutErr(start, "truncated custom bound count")
	}
	// A bound takes at least 5 bits (a non-zero varbit) or 65.
	if n > uint64(r.bitsLeft()/5) {
		return layoutErr(start, fmt.Sprintf("%d custom bounds cannot fit in the chunk", n))
	}
	for range n {
		b, ok := r.readCustomBound()
		if !ok {
			return layoutErr(start, "truncated custom bound")
		}
		l.customValues = append(l.customValues, b)
	}
	return nil
}

func (r *bitReader) readSpans(spans []histogram.Span, start int, side string) ([]histogram.Span, error) {
	n, ok := r.readVarbitUint()
	if !ok {
		return spans, layoutErr(start, "truncated "+side+" span count")
	}
	// A span takes at least 2 bits: two zero varbits.
	if n > uint64(r.bitsLeft()/2) {
		return spans, layoutErr(start, fmt.Sprintf("%d %s spans cannot fit in the chunk", n, side))
	}
	for range n {
		length, ok1 := r.readVarbitUint()
		offset, ok2 := r.readVarbitInt()
		if !ok1 || !ok2 {
			return spans, layoutErr(start, "truncated "+side+" span")
		}
		if length > math.MaxUint32 || offset < math.MinInt32 || offset > math.MaxInt32 {
			return spans, layoutErr(start, fmt.Sprintf("%s span out of range (offset %d, length %d)", side, offset, length))
		}
		spans = append(spans, histogram.Span{Offset: int32(offset), Length: uint32(length)})
	}
	return spans, nil
}

func layoutErr(off int, reason string) error {
	return corruptAt(off, -1, "histogram chunk layout: "+reason)
}

// numBuckets returns how many buckets spans cover.
func numBuckets(spans []histogram.Span) int {
	n := 0
	for _, s := range spans {
		n += int(s.Length)
	}
	return n
}

// bucketCursor walks the absolute bucket indexes that a list of spans
// covers, in increasing order. Zero-length spans only move the index on.
type bucketCursor struct {
	spans []histogram.Span
	left  uint32 // buckets left in the current span
	next  int64  // index the next bucket has if no span boundary intervenes
}

func newBucketCursor(spans []histogram.Span) bucketCursor {
	return bucketCursor{spans: spans}
}

// advance returns the next bucket index, or false when the spans end.
func (c *bucketCursor) advance() (int64, bool) {
	for c.left == 0 {
		if len(c.spans) == 0 {
			return 0, false
		}
		c.next += int64(c.spans[0].Offset)
		c.left = c.spans[0].Length
		c.spans = c.spans[1:]
	}
	c.left--
	idx := c.next
	c.next++
	return idx, true
}

// spanBuilder builds the canonical spans of an increasing sequence of
// bucket indexes: adjacent indexes share a span.
type spanBuilder struct {
	spans []histogram.Span
	last  int64
}

func (b *spanBuilder) add(idx int64) {
	if len(b.spans) > 0 && idx == b.last+1 {
		b.spans[len(b.spans)-1].Length++
	} else {
		off := idx
		if len(b.spans) > 0 {
			off = idx - b.last - 1
		}
		b.spans = append(b.spans, histogram.Span{Offset: int32(off), Length: 1})
	}
	b.last = idx
}

// bucketInsert describes num zero buckets, the first with index idx, to be
// inserted into a list of buckets before its bucket at position pos (pos ==
// length appends them).
type bucketInsert struct {
	pos int
	num int
	idx int64
}

// insertBuckets returns counts with the inserts' zero buckets added. counts
// are absolute, or deltas between neighbouring buckets if deltas is set (the
// integer encoding's form); either way the result represents the same
// non-inserted bucket values.
func insertBuckets[V int64 | float64](counts []V, ins []bucketInsert, deltas bool) []V {
	n := len(counts)
	for _, in := range ins {
		n += in.num
	}
	out := make([]V, 0, n)
	var prev, cur V // absolute value of the last bucket written, and of counts[i]
	emit := func(abs V) {
		if deltas {
			out = append(out, abs-prev)
		} else {
			out = append(out, abs)
		}
		prev = abs
	}
	for i := 0; i <= len(counts); i++ {
		for len(ins) > 0 && ins[0].pos == i {
			for range ins[0].num {
				emit(0)
			}
			ins = ins[1:]
		}
		if i == len(counts) {
			break
		}
		if deltas {
			cur += counts[i]
		} else {
			cur = counts[i]
		}
		emit(cur)
	}
	return out
}

// absoluteAt returns a function giving the absolute count at position i
// of counts, summing deltas if set. For deltas, successive calls must not
// decrease i: the sum is kept between calls, so a walk over all positions
// costs O(len(counts)).
func absoluteAt[V int64 | float64](counts []V, deltas bool) func(i int) V {
	if !deltas {
		return func(i int) V { return counts[i] }
	}
	var sum V
	next := 0
	return func(i int) V {
		for ; next <= i; next++ {
			sum += counts[next]
		}
		return sum
	}
}

// growInto compares a chunk's layout (old, with its last sample's counts)
// with a new counter histogram's (new) on one side. forward lists the buckets to add
// to the chunk's samples for buckets only new has; backward lists buckets
// to add to the new sample for buckets only old has, which is allowed only
// if the chunk's last sample has them empty. ok is false if a bucket's count
// went down or a non-empty bucket disappeared: a counter reset. Both span
// lists must list bucket indexes in increasing order (see checkShape).
func growInto[V int64 | float64](old, new []histogram.Span, oldCounts, newCounts []V, deltas bool) (forward, backward []bucketInsert, ok bool) {
	oc, nc := newBucketCursor(old), newBucketCursor(new)
	oAt, nAt := absoluteAt(oldCounts, deltas), absoluteAt(newCounts, deltas)
	oi, oOK := oc.advance()
	ni, nOK := nc.advance()
	oPos, nPos := 0, 0
	add := func(list []bucketInsert, pos int, idx int64) []bucketInsert {
		if k := len(list) - 1; k >= 0 && list[k].pos == pos && list[k].idx+int64(list[k].num) == idx {
			list[k].num++
			return list
		}
		return append(list, bucketInsert{pos: pos, num: 1, idx: idx})
	}
	for oOK || nOK {
		switch {
		case oOK && nOK && oi == ni:
			if oAt(oPos) > nAt(nPos) {
				return nil, nil, false
			}
			oi, oOK = oc.advance()
			ni, nOK = nc.advance()
			oPos++
			nPos++
		case oOK && (!nOK || oi < ni):
			if oAt(oPos) != 0 {
				return nil, nil, false
			}
			backward = add(backward, nPos, oi)
			oi, oOK = oc.advance()
			oPos++
		default:
			forward = add(forward, oPos, ni)
			ni, nOK = nc.advance()
			nPos++
		}
	}
	return forward, backward, true
}

// mergeLayouts is growInto for gauge histograms, whose buckets may come and
// go freely: it returns the inserts that extend each side to the union of
// both, and the union's canonical spans.
func mergeLayouts(old, new []histogram.Span) (forward, backward []bucketInsert, union []histogram.Span) {
	oc, nc := newBucketCursor(old), newBucketCursor(new)
	oi, oOK := oc.advance()
	ni, nOK := nc.advance()
	oPos, nPos := 0, 0
	var sb spanBuilder
	add := func(list []bucketInsert, pos int, idx int64) []bucketInsert {
		if k := len(list) - 1; k >= 0 && list[k].pos == pos {
			list[k].num++
			return list
		}
		return append(list, bucketInsert{pos: pos, num: 1, idx: idx})
	}
	for oOK || nOK {
		switch {
		case oOK && nOK && oi == ni:
			sb.add(oi)
			oi, oOK = oc.advance()
			ni, nOK = nc.advance()
			oPos++
			nPos++
		case oOK && (!nOK || oi < ni):
			sb.add(oi)
			backward = add(backward, nPos, oi)
			oi, oOK = oc.advance()
			oPos++
		default:
			sb.add(ni)
			forward = add(forward, oPos, ni)
			ni, nOK = nc.advance()
			nPos++
		}
	}
	return forward, backward, sb.spans
}

// spansWithInserts returns the canonical spans covering the buckets of
// spans plus the inserted ones. With no inserts it returns spans itself.
func spansWithInserts(spans []histogram.Span, ins []bucketInsert) []histogram.Span {
	if len(ins) == 0 {
		return spans
	}
	var extra []int64
	for _, in := range ins {
		for k := range in.num {
			extra = append(extra, in.idx+int64(k))
		}
	}
	var sb spanBuilder
	c := newBucketCursor(spans)
	idx, ok := c.advance()
	for ok || len(extra) > 0 {
		if len(extra) > 0 && (!ok || extra[0] < idx) {
			sb.add(extra[0])
			extra = extra[1:]
			continue
		}
		sb.add(idx)
		idx, ok = c.advance()
	}
	return sb.spans
}
