package chunks

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// nextRun decodes up to len(ts) samples (len(vs) >= len(ts)) into ts and
// vs, as that many calls of Next would, and returns how many it decoded.
// It is Next's loop fused into one function whose state, the bit
// reader's included, lives in local variables the compiler can keep in
// registers, for the readers of whole runs (AppendSamples, the head's
// batches): Next keeps its state in the iterator and costs a few calls a
// sample.
//
// It decodes only the common forms: samples after the second, timestamps
// whose delta of deltas fits in 20 bits, values in an existing or a valid
// new window. It stops before anything else (the chunk's end, a rare form,
// a truncated or corrupt sample), leaving the iterator on the last sample
// it decoded, so that the caller's Next takes that sample through the
// general decoder, which also reports any error exactly.
func (it *xorIterator) nextRun(ts []int64, vs []float64) int {
	return it.run(ts, vs[:len(ts)], len(ts), math.MaxInt64)
}

// skipRun moves as Next would to the first sample at or after time t
// and reports whether it got there. It decodes as nextRun does and stops
// where nextRun would, short of the sample: the caller then takes one
// step with Next, and may skip on from there.
func (it *xorIterator) skipRun(t int64) bool {
	it.run(nil, nil, math.MaxInt, t)
	return it.read > 0 && it.t >= t
}

// run is nextRun and skipRun: it decodes up to max samples, storing them
// in ts and vs unless ts is nil, and stops after the first at or after
// until.
func (it *xorIterator) run(ts []int64, vs []float64, max int, until int64) int {
	if it.done || it.read < 2 || it.t >= until {
		return 0
	}
	data, last := it.br.data, it.br.last
	off, buf, nb := it.br.off, it.br.buf, it.br.n
	t, tDelta, vbits := it.t, it.tDelta, it.vbits
	leading, trailing := it.leading, it.trailing
	read, total := it.read, it.total
	n := 0
	for n < max && read < total {
		// Where the sample starts, to come back to if it is left to Next.
		off0, buf0, nb0 := off, buf, nb

		// Timestamp: the delta of deltas, prefix and value (at most
		// 4+20 bits) taken at once.
		if nb < 4+20 {
			// fillLocal, its 8-byte load inline.
			if off+8 < len(data) {
				word := binary.BigEndian.Uint64(data[off:])
				whole := (64 - nb) >> 3
				buf |= word >> nb
				nb += whole * 8
				buf &^= ^uint64(0) >> nb
				off += int(whole)
			} else {
				off, buf, nb = fillTail(data, off, buf, nb, last)
			}
		}
		var dod int64
		if ones := uint8(bits.LeadingZeros64(^buf)); ones == 0 {
			if nb < 1 {
				break
			}
			buf <<= 1
			nb--
		} else {
			if ones >= 4 {
				break // a 64-bit delta of deltas: Next's
			}
			width := 11 + 3*ones // 14, 17, 20
			w := ones + 1 + width
			if nb < w {
				break
			}
			raw := buf >> (64 - w) & (1<<width - 1)
			buf <<= w
			nb -= w
			if raw > 1<<(width-1) {
				raw -= 1 << width
			}
			dod = int64(raw)
		}
		sDelta := uint64(int64(tDelta) + dod)
		sT := t + int64(sDelta)

		// Value: the same, or significant bits in the window in use or in
		// a new one.
		if nb < 13 {
			// fillLocal, its 8-byte load inline.
			if off+8 < len(data) {
				word := binary.BigEndian.Uint64(data[off:])
				whole := (64 - nb) >> 3
				buf |= word >> nb
				nb += whole * 8
				buf &^= ^uint64(0) >> nb
				off += int(whole)
			} else {
				off, buf, nb = fillTail(data, off, buf, nb, last)
			}
		}
		sLeading, sTrailing, sVbits := leading, trailing, vbits
		ok, bitsFollow := true, true
		switch {
		case buf>>63 == 0:
			ok, bitsFollow = nb >= 1, false
			buf <<= 1
			nb--
		case buf>>62 == 0b10:
			ok = nb >= 2 && leading != noLeading
			buf <<= 2
			nb -= 2
		default:
			ok = nb >= 2+5+6
			hdr := buf >> (64 - 13)
			buf <<= 13
			nb -= 13
			l := uint8(hdr>>6) & 31
			sig := uint8(hdr) & 63
			if sig == 0 {
				sig = 64
			}
			ok = ok && int(l)+int(sig) <= 64
			sLeading, sTrailing = l, 64-l-sig
		}
		if ok && bitsFollow {
			sig := 64 - sLeading - sTrailing
			if nb < sig {
				off, buf, nb = fillLocal(data, off, buf, nb, last)
			}
			var x uint64
			switch {
			case sig <= nb:
				x = buf >> (64 - sig) // sig is at least 1
				buf <<= sig
				nb -= sig
			case sig > maxFastRead && nb >= sig-32:
				// Wider than one fill holds: in two parts.
				hi := sig - 32
				x = buf >> (64 - hi)
				buf <<= hi
				nb -= hi
				off, buf, nb = fillLocal(data, off, buf, nb, last)
				if ok = nb >= 32; ok {
					x = x<<32 | buf>>32
					buf <<= 32
					nb -= 32
				}
			default:
				ok = false
			}
			sVbits ^= x << sTrailing
		}
		if !ok {
			off, buf, nb = off0, buf0, nb0
			break
		}
		t, tDelta, vbits, leading, trailing = sT, sDelta, sVbits, sLeading, sTrailing
		read++
		if ts != nil {
			ts[n], vs[n] = t, math.Float64frombits(vbits)
		}
		n++
		if t >= until {
			break
		}
	}
	it.br.off, it.br.buf, it.br.n = off, buf, nb
	it.t, it.tDelta, it.vbits = t, tDelta, vbits
	it.leading, it.trailing = leading, trailing
	it.read = read
	return n
}

// fillLocal is bitReader.fill on a reader's fields passed by value, for
// callers that keep them in local variables: the 8-byte load inline, the
// bytes near the end of data (whose last is last) out of line.
func fillLocal(data []byte, off int, buf uint64, nb uint8, last byte) (int, uint64, uint8) {
	if off+8 < len(data) {
		word := binary.BigEndian.Uint64(data[off:])
		whole := (64 - nb) >> 3
		buf |= word >> nb
		nb += whole * 8
		buf &^= ^uint64(0) >> nb
		return off + int(whole), buf, nb
	}
	return fillTail(data, off, buf, nb, last)
}

// fillTail is bitReader.fill on a reader's fields, for the last bytes of
// data, which the 8-byte load does not reach.
func fillTail(data []byte, off int, buf uint64, nb uint8, last byte) (int, uint64, uint8) {
	r := bitReader{data: data, off: off, buf: buf, n: nb, last: last}
	r.fill()
	return r.off, r.buf, r.n
}
