package chunks

import "encoding/binary"

// maxFastRead is the widest read that one refill always satisfies: fill
// leaves at least 57 bits buffered unless the stream ends, so any read of at
// most 56 bits needs at most one fill.
const maxFastRead = 56

// bitReader reads bits, most significant first, from a byte slice that a
// writer may still be extending.
//
// Invariants: buf holds the next n unread bits left-aligned (bit 63 is the
// next bit); the bits below them are zero. off is the index of the next byte
// of data not yet in buf. The reader never reads data[len(data)-1] after
// reset: it uses last, a copy taken by reset, because a concurrent writer may
// be ORing bits into that byte. Nor does it read past len(data), where a
// writer may be appending.
type bitReader struct {
	data []byte
	off  int
	buf  uint64
	n    uint8
	last byte
}

// reset points r at data, starting at byte off, and copies the last byte.
func (r *bitReader) reset(data []byte, off int) {
	var last byte
	if len(data) > 0 {
		last = data[len(data)-1]
	}
	r.resetTo(data, off, last)
}

// resetTo points r at data, starting at byte off, with last standing in
// for data's last byte, which r never reads.
func (r *bitReader) resetTo(data []byte, off int, last byte) {
	r.data = data
	r.off = off
	r.buf = 0
	r.n = 0
	r.last = last
}

// seekBit moves r to bit pos of data, counting from its start; pos is at
// most 8*len(data).
func (r *bitReader) seekBit(pos int) {
	r.off, r.buf, r.n = pos>>3, 0, 0
	if rem := uint8(pos & 7); rem != 0 {
		r.fill()
		r.skip(rem)
	}
}

// bitPos returns the position of the next unread bit, counting from the
// start of data.
func (r *bitReader) bitPos() int { return r.off*8 - int(r.n) }

// fill tops up buf to at least maxFastRead+1 bits, or with everything that is
// left if the stream is shorter.
func (r *bitReader) fill() {
	// Fast path: an 8-byte load that stays clear of the last byte.
	if r.off+8 < len(r.data) {
		word := binary.BigEndian.Uint64(r.data[r.off:])
		whole := (64 - r.n) >> 3 // bytes of word that fit entirely
		r.buf |= word >> r.n
		r.n += whole * 8
		r.off += int(whole)
		// Drop the bits of the byte that only partly fitted, to keep the
		// "zero below n" invariant. (When n reaches 64 the shift yields 0.)
		r.buf &^= ^uint64(0) >> r.n
		return
	}
	for r.n <= maxFastRead && r.off < len(r.data) {
		b := r.last
		if r.off < len(r.data)-1 {
			b = r.data[r.off]
		}
		r.buf |= uint64(b) << (maxFastRead - r.n)
		r.n += 8
		r.off++
	}
}

// readBits returns the next nbits bits (0 <= nbits <= maxFastRead) in the
// low bits of the result. ok is false if the stream ends first; r is then
// unusable. Hot paths use peek and take instead, which inline.
func (r *bitReader) readBits(nbits uint8) (v uint64, ok bool) {
	if r.n < nbits {
		r.fill()
		if r.n < nbits {
			return 0, false
		}
	}
	v = r.buf >> (64 - nbits) // nbits == 0 shifts by 64, giving 0
	r.buf <<= nbits
	r.n -= nbits
	return v, true
}

// readWide is readBits for any width up to 64 bits.
func (r *bitReader) readWide(nbits uint8) (uint64, bool) {
	if nbits <= maxFastRead {
		return r.readBits(nbits)
	}
	hi, ok := r.readBits(nbits - 32)
	if !ok {
		return 0, false
	}
	lo, ok := r.readBits(32)
	return hi<<32 | lo, ok
}

// peek returns buf with at least need valid bits at the top (need <=
// maxFastRead+1), or fewer if the stream ends; the bits past the end read as
// zero. It does not consume anything.
func (r *bitReader) peek(need uint8) (bits uint64, n uint8) {
	if r.n < need {
		r.fill()
	}
	return r.buf, r.n
}

// skip consumes nbits bits that are known to be buffered (nbits <= r.n).
func (r *bitReader) skip(nbits uint8) {
	r.buf <<= nbits
	r.n -= nbits
}

// take consumes and returns nbits bits (1..64) that are known to be buffered
// (nbits <= r.n).
func (r *bitReader) take(nbits uint8) uint64 {
	v := r.buf >> (64 - nbits)
	r.buf <<= nbits
	r.n -= nbits
	return v
}
