package chunks

import "math/bits"

// The varbit encodings write integers with a unary prefix that selects the
// width of the value that follows. Histogram chunks use them for timestamps,
// counts, bucket deltas and the layout; the prefixes and widths are
// Prometheus's, so the bits are too.
//
//	prefix     width  signed range                  unsigned range
//	0          0      0                             0
//	10         3      [-3, 4]                       [0, 7]
//	110        6      [-31, 32]                     [0, 63]
//	1110       9      [-255, 256]                   [0, 511]
//	11110      12     [-2047, 2048]                 [0, 4095]
//	111110     18     [-131071, 131072]             [0, 262143]
//	1111110    25     [-16777215, 16777216]         [0, 33554431]
//	11111110   56     [-(2^55-1), 2^55]             [0, 2^56-1]
//	11111111   64     all                           all
//
// A signed value is stored in two's complement over its width, and a raw
// value above 2^(width-1) reads back as negative, which is why the signed
// ranges have one more positive value than negative.

// varbitWidths are the value widths selected by a prefix of i ones followed
// by a zero (i = 0..7); eight ones select 64 bits.
var varbitWidths = [8]uint8{0, 3, 6, 9, 12, 18, 25, 56}

// putVarbitInt writes v in the signed varbit encoding.
func (w *bitWriter) putVarbitInt(v int64) {
	for i, width := range varbitWidths {
		if v == 0 || (i > 0 && fitsDoD(v, width)) {
			w.writeVarbitField(i, uint64(v), width)
			return
		}
	}
	w.writeBits(0xff, 8)
	w.writeBits(uint64(v), 64)
}

// putVarbitUint writes v in the unsigned varbit encoding.
func (w *bitWriter) putVarbitUint(v uint64) {
	for i, width := range varbitWidths {
		if bits.Len64(v) <= int(width) {
			w.writeVarbitField(i, v, width)
			return
		}
	}
	w.writeBits(0xff, 8)
	w.writeBits(v, 64)
}

// writeVarbitField writes the prefix of ones ones and a zero, then the low
// width bits of v, in one write (at most 8+56 bits).
func (w *bitWriter) writeVarbitField(ones int, v uint64, width uint8) {
	prefix := uint64(1)<<(ones+1) - 2
	if width > 0 {
		v &= 1<<width - 1
	}
	w.writeBits(prefix<<width|v, uint8(ones+1)+width)
}

// readVarbitPrefix consumes a varbit prefix and returns the width it
// selects (64 for eight ones). ok is false if the stream ends first.
func (r *bitReader) readVarbitPrefix() (width uint8, ok bool) {
	buf, n := r.peek(8)
	ones := min(bits.LeadingZeros64(^buf), 8)
	need := uint8(ones) + 1
	if ones == 8 {
		need = 8
	}
	if n < need {
		return 0, false
	}
	r.skip(need)
	if ones == 8 {
		return 64, true
	}
	return varbitWidths[ones], true
}

// readVarbitInt reads a value written by putVarbitInt.
func (r *bitReader) readVarbitInt() (int64, bool) {
	width, ok := r.readVarbitPrefix()
	if !ok {
		return 0, false
	}
	u, ok := r.readWide(width)
	if !ok {
		return 0, false
	}
	if width > 0 && width < 64 && u > 1<<(width-1) {
		u -= 1 << width
	}
	return int64(u), true
}

// readVarbitUint reads a value written by putVarbitUint.
func (r *bitReader) readVarbitUint() (uint64, bool) {
	width, ok := r.readVarbitPrefix()
	if !ok {
		return 0, false
	}
	return r.readWide(width)
}
