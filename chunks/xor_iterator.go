package chunks

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/isotsdb/tsdb/histogram"
)

// xorIterator decodes an XORChunk. Everything it needs that an Append could
// change later is captured by reset: the sample count, the slice header and
// (inside br) the last byte. See the package documentation.
type xorIterator struct {
	br    bitReader
	total uint16 // samples to decode, read from the header by reset
	read  uint16 // samples decoded so far

	t      int64
	vbits  uint64
	tDelta uint64

	leading  uint8 // as XORAppender.leading
	trailing uint8

	done bool // Next returned ValNone; sticky
	err  error

	// from is a seek point of the chunk (xor_seek.go) Seek may resume
	// at; its num is 0 if there is none.
	from seekPoint
}

// reset starts the iterator over chunk bytes b (header included).
func (it *xorIterator) reset(b []byte) {
	var total uint16
	if len(b) >= headerSize {
		total = binary.BigEndian.Uint16(b)
	}
	var last byte
	if len(b) > 0 {
		last = b[len(b)-1]
	}
	it.resetTo(b, total, last)
}

// resetTo starts the iterator over chunk bytes b holding total samples,
// whose last byte is last; it reads neither the header nor the last byte
// of b (see XORSnapshot).
func (it *xorIterator) resetTo(b []byte, total uint16, last byte) {
	it.total = total
	it.br.resetTo(b, headerSize, last)
	it.read = 0
	it.t, it.vbits, it.tDelta = 0, 0, 0
	it.leading, it.trailing = noLeading, 0
	it.done = false
	it.err = nil
	it.from = seekPoint{}
}

// At returns the current sample.
func (it *xorIterator) At() (int64, float64) { return it.t, math.Float64frombits(it.vbits) }

// AtT returns the current sample's time.
func (it *xorIterator) AtT() int64 { return it.t }

// AtST returns 0: XOR chunks store no start timestamps.
func (it *xorIterator) AtST() int64 { return 0 }

// AtHistogram panics: an XOR chunk holds only floats.
func (it *xorIterator) AtHistogram(*histogram.Histogram) (int64, *histogram.Histogram) {
	wrongType("AtHistogram", ValFloat)
	return 0, nil
}

// AtFloatHistogram panics: an XOR chunk holds only floats.
func (it *xorIterator) AtFloatHistogram(*histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	wrongType("AtFloatHistogram", ValFloat)
	return 0, nil
}

// Err returns the decode error that stopped the iterator, if any.
func (it *xorIterator) Err() error { return it.err }

// Seek advances to the first sample with time >= t; see Iterator.Seek.
func (it *xorIterator) Seek(t millis) ValueType {
	if it.done {
		return ValNone
	}
	if it.from.packed != 0 {
		it.seekTo(&it.from, t)
	}
	for it.read == 0 || it.t < t {
		// Runs of common samples skipped fused (skipRun), each other
		// sample through Next.
		if it.skipRun(t) {
			break
		}
		if it.Next() == ValNone {
			return ValNone
		}
	}
	return ValFloat
}

// Next advances to the next sample; see Iterator.Next. It does not allocate
// unless it fails.
func (it *xorIterator) Next() ValueType {
	if it.done {
		return ValNone
	}
	if it.read == it.total {
		it.done = true
		return ValNone
	}
	switch it.read {
	case 0:
		return it.nextFirst()
	case 1:
		return it.nextSecond()
	}

	// Timestamp delta-of-delta: the number of leading ones (at most 4)
	// selects the bucket.
	br := &it.br
	start := br.bitPos()
	buf, n := br.peek(4 + 20)
	var dod int64
	switch ones := bits.LeadingZeros64(^buf); {
	case ones == 0:
		if n < 1 {
			return it.fail(start, "truncated timestamp")
		}
		br.skip(1)
	case ones < 4:
		// '10', '110', '1110': prefix and value taken together. peek
		// filled the buffer, so if they are not all in it the stream
		// ends too soon.
		width := [...]uint8{0, 14, 17, 20}[ones]
		if n < uint8(ones)+1+width {
			return it.fail(start, "truncated timestamp")
		}
		raw := br.take(uint8(ones)+1+width) & (1<<width - 1)
		if raw > 1<<(width-1) {
			raw -= 1 << width // negative: wraps to the two's-complement value
		}
		dod = int64(raw)
	default:
		if n < 4 {
			return it.fail(start, "truncated timestamp")
		}
		br.skip(4)
		raw, ok := br.readWide(64)
		if !ok {
			return it.fail(start, "truncated timestamp")
		}
		dod = int64(raw)
	}
	it.tDelta = uint64(int64(it.tDelta) + dod)
	it.t += int64(it.tDelta)
	return it.nextValue()
}

// nextFirst decodes sample 0: varint time, 64 raw value bits.
func (it *xorIterator) nextFirst() ValueType {
	start := it.br.bitPos()
	u, reason := it.readUvarint()
	if reason != "" {
		return it.fail(start, reason+" in first timestamp")
	}
	t := int64(u >> 1) // zig-zag decoding
	if u&1 != 0 {
		t = ^t
	}
	start = it.br.bitPos()
	v, ok := it.br.readWide(64)
	if !ok {
		return it.fail(start, "truncated first value")
	}
	it.t, it.vbits = t, v
	it.read++
	return ValFloat
}

// nextSecond decodes sample 1: uvarint time delta, XOR value.
func (it *xorIterator) nextSecond() ValueType {
	start := it.br.bitPos()
	d, reason := it.readUvarint()
	if reason != "" {
		return it.fail(start, reason+" in second timestamp")
	}
	it.tDelta = d
	it.t += int64(d)
	return it.nextValue()
}

// readUvarint reads a uvarint as whole 8-bit groups from the bit stream
// (valid chunks have it byte-aligned); see bitReader.readUvarintBytes.
func (it *xorIterator) readUvarint() (uint64, string) { return it.br.readUvarintBytes() }

// nextValue decodes an XOR-encoded value (see XORAppender.writeValue) and
// completes the sample.
func (it *xorIterator) nextValue() ValueType {
	br := &it.br
	start := br.bitPos()
	buf, n := br.peek(13)
	switch {
	case buf>>63 == 0: // '0': same value
		if n < 1 {
			return it.fail(start, "truncated value")
		}
		br.skip(1)
		it.read++
		return ValFloat
	case buf>>62 == 0b10: // reuse the window
		if n < 2 {
			return it.fail(start, "truncated value")
		}
		br.skip(2)
		if it.leading == noLeading {
			// No window yet. Our writer never does this, but a writer
			// that resumed a chunk without one (Prometheus's does) uses
			// an all-64-bit window; decode as it does and keep it.
			it.leading, it.trailing = 0, 0
		}
	default: // '11': new window
		if n < 2+5+6 {
			return it.fail(start, "truncated value")
		}
		hdr := br.take(2 + 5 + 6)
		leading := uint8(hdr>>6) & 31
		sig := uint8(hdr) & 63
		if sig == 0 {
			sig = 64
		}
		if int(leading)+int(sig) > 64 {
			return it.fail(start, "value window wider than 64 bits")
		}
		it.leading, it.trailing = leading, 64-leading-sig
	}
	sig := 64 - it.leading - it.trailing
	var x uint64
	if sig <= br.n {
		x = br.take(sig)
	} else {
		var ok bool
		if x, ok = br.readWide(sig); !ok {
			return it.fail(start, "truncated value")
		}
	}
	it.vbits ^= x << it.trailing
	it.read++
	return ValFloat
}

// fail records a corruption at bit position pos and ends the iteration.
// Kept out of line: it is the cold path of every decode step.
//
//go:noinline
func (it *xorIterator) fail(pos int, reason string) ValueType {
	it.err = corruptAt(pos/8, int(it.read), reason)
	it.done = true
	return ValNone
}
