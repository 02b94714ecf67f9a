package chunks

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// noLeading is the value of XORAppender.leading (and xorIterator.leading)
// before any value has been written with an explicit leading/significant
// bit-count header. The first changed value must always write one.
const noLeading = 0xff

// XORAppender appends to an XORChunk. It holds the encoder's state after
// the chunk's last sample. It is used by one goroutine at a time. It is the
// Appender of XORChunk, exported so that callers that keep one per chunk can
// call it without an interface.
type XORAppender struct {
	c *XORChunk

	t      int64  // time of the last sample
	vbits  uint64 // value bits of the last sample
	tDelta uint64 // time delta between the last two samples (0 if < 2)
	// num is the chunk's sample count, as its header holds it: Append and
	// NumSamples read it here, not from the chunk's first bytes, which
	// are in another cache line than its end once it has grown (Append
	// still writes the header, for readers). Only this appender writes to
	// the chunk, so the two stay equal.
	num uint16

	// leading and trailing describe the window of significant bits that
	// the last explicit XOR header set up: leading zero bits (capped at
	// 31) and trailing zero bits. leading is noLeading if there was none.
	leading  uint8
	trailing uint8

	// seek are the seek points recorded so far (xor_seek.go); nil until
	// the chunk's first SnapshotFrom.
	seek *[3]seekPoint
}

// LastValueBits returns the bits of the last sample's value (0 if the
// chunk is empty).
func (a *XORAppender) LastValueBits() uint64 { return a.vbits }

// Append adds (t, v) to the chunk. t must be greater than the last sample's
// time; an Append to a chunk holding MaxSamples samples is ignored.
// It allocates only when the chunk's byte slice has to grow.
func (a *XORAppender) Append(t int64, v float64) {
	w := &a.c.w
	num := a.num
	if num == MaxSamples {
		return
	}
	vbits := math.Float64bits(v)
	var tDelta uint64
	switch num {
	case 0:
		var tmp [binary.MaxVarintLen64]byte
		for _, b := range tmp[:binary.PutVarint(tmp[:], t)] {
			w.writeBits(uint64(b), 8)
		}
		w.writeBits(vbits, 64)
	case 1:
		tDelta = uint64(t - a.t)
		var tmp [binary.MaxVarintLen64]byte
		for _, b := range tmp[:binary.PutUvarint(tmp[:], tDelta)] {
			w.writeBits(uint64(b), 8)
		}
		a.writeValue(vbits)
	default:
		tDelta = uint64(t - a.t)
		a.writeDoD(int64(tDelta - a.tDelta))
		a.writeValue(vbits)
	}
	a.t, a.vbits, a.tDelta, a.num = t, vbits, tDelta, num+1
	binary.BigEndian.PutUint16(w.buf, num+1)
	if a.seek != nil && a.num%seekEvery == 0 {
		a.recordSeekPoint()
	}
}

// fitsDoD reports whether dod can be written in a bucket of width bits. The
// range is [-(2^(width-1)-1), 2^(width-1)]: one more positive value than
// plain two's complement and one less negative, matching the decoder, which
// reads raw values above 2^(width-1) as negative.
func fitsDoD(dod int64, width uint8) bool {
	half := int64(1) << (width - 1)
	return -(half-1) <= dod && dod <= half
}

// writeDoD writes a timestamp delta-of-delta: '0' for 0, else a prefix of
// ones ended by a zero that selects the width of the two's-complement value
// that follows ('10' 14 bits, '110' 17, '1110' 20), or '1111' and 64 bits.
// Prometheus picked these widths for millisecond timestamps. Prefix and
// value go in one write.
func (a *XORAppender) writeDoD(dod int64) {
	w := &a.c.w
	u := uint64(dod)
	switch {
	case dod == 0:
		w.writeBits(0, 1)
	case fitsDoD(dod, 14):
		w.writeBits(0b10<<14|u&(1<<14-1), 2+14)
	case fitsDoD(dod, 17):
		w.writeBits(0b110<<17|u&(1<<17-1), 3+17)
	case fitsDoD(dod, 20):
		w.writeBits(0b1110<<20|u&(1<<20-1), 4+20)
	default:
		w.writeBits(0b1111, 4)
		w.writeBits(u, 64)
	}
}

// writeValue writes vbits XOR the previous value: '0' if equal; else '10'
// and the XOR's significant bits if they fit the current window; else '11',
// 5 bits of leading zeros, 6 bits of significant-bit count (64 written as
// 0) and the significant bits, which sets a new window.
func (a *XORAppender) writeValue(vbits uint64) {
	w := &a.c.w
	delta := vbits ^ a.vbits
	if delta == 0 {
		w.writeBits(0, 1)
		return
	}
	leading := uint8(bits.LeadingZeros64(delta))
	trailing := uint8(bits.TrailingZeros64(delta))
	if leading > 31 {
		leading = 31 // the header has 5 bits for it
	}
	if a.leading != noLeading && leading >= a.leading && trailing >= a.trailing {
		w.writeBits(0b10, 2)
		w.writeBits(delta>>a.trailing, 64-a.leading-a.trailing)
		return
	}
	a.leading, a.trailing = leading, trailing
	sig := 64 - leading - trailing // 1..64; 64 is written as 0
	w.writeBits(0b11<<11|uint64(leading)<<6|uint64(sig&63), 13)
	w.writeBits(delta>>trailing, sig)
}

// NumSamples returns the number of samples in the appender's chunk.
func (a *XORAppender) NumSamples() int { return int(a.num) }
