package chunks

import (
	"math"
	"math/bits"
)

// nextRun decodes up to len(ts) samples (len(vs) >= len(ts)) into ts and
// vs, as that many calls of Next would, and returns how many it decoded.
// It is Next's loop fused into one function whose state lives in local
// variables, for the readers of whole runs (AppendSamples, the head's
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
	if it.done || it.read < 2 {
		return 0
	}
	vs = vs[:len(ts)]
	br := it.br
	t, tDelta, vbits := it.t, it.tDelta, it.vbits
	leading, trailing := it.leading, it.trailing
	read, total := it.read, it.total
	n := 0
	for n < len(ts) && read < total {
		start := br.bitPos()
		// Timestamp: the delta of deltas, prefix and value (at most
		// 4+20 bits) taken at once.
		if br.n < 4+20 {
			br.fill()
		}
		buf := br.buf
		var dod int64
		if ones := bits.LeadingZeros64(^buf); ones == 0 {
			if br.n < 1 {
				break
			}
			br.skip(1)
		} else {
			if ones >= 4 {
				break // a 64-bit delta of deltas: Next's
			}
			width := [...]uint8{0, 14, 17, 20}[ones]
			if br.n < uint8(ones)+1+width {
				break
			}
			raw := br.take(uint8(ones)+1+width) & (1<<width - 1)
			if raw > 1<<(width-1) {
				raw -= 1 << width
			}
			dod = int64(raw)
		}
		sDelta := uint64(int64(tDelta) + dod)
		sT := t + int64(sDelta)

		// Value: same, reuse the window, or a new window.
		if br.n < 13 {
			br.fill()
		}
		buf = br.buf
		sLeading, sTrailing, sVbits := leading, trailing, vbits
		switch {
		case buf>>63 == 0:
			if br.n < 1 {
				br.seekBit(start)
				goto stop
			}
			br.skip(1)
			goto done
		case buf>>62 == 0b10:
			if br.n < 2 || leading == noLeading {
				br.seekBit(start)
				goto stop
			}
			br.skip(2)
		default:
			if br.n < 2+5+6 {
				br.seekBit(start)
				goto stop
			}
			hdr := br.take(2 + 5 + 6)
			l := uint8(hdr>>6) & 31
			sig := uint8(hdr) & 63
			if sig == 0 {
				sig = 64
			}
			if int(l)+int(sig) > 64 {
				br.seekBit(start)
				goto stop
			}
			sLeading, sTrailing = l, 64-l-sig
		}
		{
			sig := 64 - sLeading - sTrailing
			var x uint64
			if sig <= br.n {
				x = br.take(sig)
			} else {
				var ok bool
				if x, ok = br.readWide(sig); !ok {
					br.seekBit(start)
					goto stop
				}
			}
			sVbits ^= x << sTrailing
		}
	done:
		t, tDelta, vbits, leading, trailing = sT, sDelta, sVbits, sLeading, sTrailing
		read++
		ts[n], vs[n] = t, math.Float64frombits(vbits)
		n++
		continue
	stop:
		break
	}
	it.br = br
	it.t, it.tDelta, it.vbits = t, tDelta, vbits
	it.leading, it.trailing = leading, trailing
	it.read = read
	return n
}
