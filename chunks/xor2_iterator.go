package chunks

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/isotsdb/tsdb/histogram"
)

// XOR2Iterator iterates over the samples of an XOR2Chunk. It is used by
// one goroutine at a time. Reset captures everything an Append could change
// later: the sample count, the ST header byte, the slice header and the
// last byte (see the package documentation).
type XOR2Iterator struct {
	br    bitReader
	total int // samples to decode, read from the header by Reset
	read  int // samples decoded so far

	t      int64
	tDelta uint64
	vbits  uint64    // the current value
	base   uint64    // the last value that was not a stale marker
	win    xorWindow // as XOR2Appender.win
	st     stState

	done bool // Next returned ValNone; sticky
	err  error
}

// Reset points the iterator at the chunk bytes b (header included). Bytes
// too short for the header make Err report ErrCorrupt at the first Next.
func (it *XOR2Iterator) Reset(b []byte) {
	*it = XOR2Iterator{win: xorWindow{leading: noLeading}}
	if len(b) < xor2HeaderSize {
		it.err = corruptAt(0, -1, "XOR2 chunk shorter than its 3-byte header")
		it.done = true
		return
	}
	it.total = int(binary.BigEndian.Uint16(b))
	it.st = readSTHeader(b[stHeaderByte])
	it.br.reset(b, xor2HeaderSize)
}

// At returns the current sample.
func (it *XOR2Iterator) At() (int64, float64) { return it.t, math.Float64frombits(it.vbits) }

// AtT returns the current sample's time.
func (it *XOR2Iterator) AtT() int64 { return it.t }

// AtST returns the current sample's start timestamp, 0 if it has none.
func (it *XOR2Iterator) AtST() int64 { return it.st.st }

// AtHistogram panics: an XOR2 chunk holds only floats.
func (it *XOR2Iterator) AtHistogram(*histogram.Histogram) (int64, *histogram.Histogram) {
	wrongType("AtHistogram", ValFloat)
	return 0, nil
}

// AtFloatHistogram panics: an XOR2 chunk holds only floats.
func (it *XOR2Iterator) AtFloatHistogram(*histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	wrongType("AtFloatHistogram", ValFloat)
	return 0, nil
}

// Err returns the decode error that stopped the iterator, if any.
func (it *XOR2Iterator) Err() error { return it.err }

// Seek advances to the first sample with time >= t; see Iterator.Seek.
func (it *XOR2Iterator) Seek(t millis) ValueType {
	if it.done {
		return ValNone
	}
	for it.read == 0 || it.t < t {
		if it.Next() == ValNone {
			return ValNone
		}
	}
	return ValFloat
}

// Next advances to the next sample; see Iterator.Next.
func (it *XOR2Iterator) Next() ValueType {
	if it.done {
		return ValNone
	}
	if it.read == it.total {
		it.done = true
		return ValNone
	}
	br := &it.br
	prevT := it.t
	start := br.bitPos()
	switch it.read {
	case 0:
		t, reason := br.readVarintBytes()
		if reason != "" {
			return it.fail(start, reason+" in first timestamp")
		}
		v, ok := br.readWide(64)
		if !ok {
			return it.fail(start, "truncated first value")
		}
		it.t, it.vbits = t, v
		if v != staleNaNBits {
			it.base = v
		}
	case 1:
		d, reason := br.readUvarintBytes()
		if reason != "" {
			return it.fail(start, reason+" in second timestamp")
		}
		it.tDelta = d
		it.t += int64(d)
		if reason := it.readValue(); reason != "" {
			return it.fail(start, reason)
		}
	default:
		if reason := it.readJoint(); reason != "" {
			return it.fail(start, reason)
		}
	}
	if ok, reason := it.st.decode(br, it.read, it.t, prevT); !ok {
		return it.fail(start, reason)
	}
	it.read++
	return ValFloat
}

// readJoint decodes the control prefix of a sample after the second and
// what it announces (see xor2.go), setting t and vbits.
func (it *XOR2Iterator) readJoint() (reason string) {
	br := &it.br
	buf, n := br.peek(4 + 20)
	ones := min(bits.LeadingZeros64(^buf), 5)
	var dod int64
	switch ones {
	case 0: // dod 0, value unchanged
		if n < 1 {
			return "truncated control"
		}
		br.skip(1)
		it.t += int64(it.tDelta)
		it.vbits = it.base
		return ""
	case 1: // dod 0, value changed
		if n < 2 {
			return "truncated control"
		}
		br.skip(2)
		it.t += int64(it.tDelta)
		return it.readWindowed(1)
	case 2, 3:
		width := uint8(13)
		if ones == 3 {
			width = 20
		}
		if n < uint8(ones)+1+width {
			return "truncated timestamp"
		}
		raw := br.take(uint8(ones)+1+width) & (1<<width - 1)
		if raw >= 1<<(width-1) {
			raw -= 1 << width // negative
		}
		dod = int64(raw)
	case 4:
		if n < 5 {
			return "truncated control"
		}
		br.skip(5)
		raw, ok := br.readWide(64)
		if !ok {
			return "truncated timestamp"
		}
		dod = int64(raw)
	default: // dod 0, stale marker
		if n < 5 {
			return "truncated control"
		}
		br.skip(5)
		it.t += int64(it.tDelta)
		it.vbits = staleNaNBits
		return ""
	}
	it.tDelta = uint64(int64(it.tDelta) + dod)
	it.t += int64(it.tDelta)
	return it.readValue()
}

// readValue decodes a value written by XOR2Appender.writeValue.
func (it *XOR2Iterator) readValue() (reason string) {
	br := &it.br
	buf, n := br.peek(3)
	switch {
	case n < 1:
		return "truncated value"
	case buf>>63 == 0:
		br.skip(1)
		it.vbits = it.base
		return ""
	case n < 2:
		return "truncated value"
	case buf>>62 == 0b10:
		br.skip(1)
		return it.readWindowed(2)
	case n < 3:
		return "truncated value"
	case buf>>61 == 0b110:
		br.skip(1)
		return it.readWindowed(2)
	}
	br.skip(3)
	it.vbits = staleNaNBits
	return ""
}

// readWindowed decodes what XOR2Appender.writeWindowed wrote with the same
// ctrl.
func (it *XOR2Iterator) readWindowed(ctrl uint8) (reason string) {
	br := &it.br
	buf, n := br.peek(2 + 11)
	switch {
	case n < 1:
		return "truncated value"
	case buf>>63 == 0:
		br.skip(1)
		if it.win.leading == noLeading {
			// No window yet: Prometheus's decoder starts with the
			// full 64-bit one, and its resumed appenders use it.
			it.win = xorWindow{}
		}
	default:
		if n < ctrl+11 {
			return "truncated value window"
		}
		hdr := br.take(ctrl+11) & (1<<11 - 1)
		leading := uint8(hdr>>6) & 31
		sig := uint8(hdr) & 63
		if sig == 0 {
			sig = 64
		}
		if int(leading)+int(sig) > 64 {
			return "value window wider than 64 bits"
		}
		it.win = xorWindow{leading: leading, trailing: 64 - leading - sig}
	}
	x, ok := br.readWide(64 - it.win.leading - it.win.trailing)
	if !ok {
		return "truncated value"
	}
	it.base ^= x << it.win.trailing
	it.vbits = it.base
	return ""
}

// fail records a corruption at bit position pos and ends the iteration.
//
//go:noinline
func (it *XOR2Iterator) fail(pos int, reason string) ValueType {
	it.err = corruptAt(pos/8, it.read, "XOR2 chunk: "+reason)
	it.done = true
	return ValNone
}
