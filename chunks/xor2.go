package chunks

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// XOR2 chunks (EncXOR2) hold float samples with optional start timestamps,
// in the encoding Prometheus v0.316 calls XOR2. A chunk's bytes are:
//
//	num_samples uint16 big-endian
//	ST header byte (see st.go)
//	sample 0: t varint, v as 64 raw bits, ST data
//	sample 1: t1-t0 uvarint, value (below), ST data
//	sample i >= 2: a control prefix that encodes the timestamp's
//	  delta-of-delta and part of the value together, then ST data
//	zero padding up to a byte boundary
//
// The control prefix of samples 2 and later:
//
//	0      dod 0, value equal to the last non-stale one
//	10     dod 0, value changed; then '0' and the XOR bits in the current
//	       window, or '1' and a new window (5 bits leading zeros, 6 bits
//	       significant-bit count, 64 written as 0) and its bits
//	110    13-bit two's-complement dod (prefix and dod fill 2 bytes), value
//	1110   20-bit dod (prefix and dod fill 3 bytes), value
//	11110  64-bit dod, value
//	11111  dod 0, stale marker
//
// A value after a non-zero dod (and sample 1's) is '0' for unchanged, '10'
// and the XOR bits in the current window, '110' and a new window, or '111'
// for a stale marker. Values are XORed against the last value that was not
// a stale marker. Unlike XOR, the encoder may keep a window that is wider
// than the value needs (see xorWindowChoice), so the bits are those of
// Prometheus only if the choices are made as its encoder makes them.

// xor2HeaderSize is the size of an XOR2 chunk's header: the sample count
// and the ST header byte.
const xor2HeaderSize = headerSize + 1

// XOR2Chunk holds float samples with start timestamps in the XOR2
// encoding. The zero value is not usable; use NewXOR2Chunk or FromData.
//
// XOR2Chunk follows the Chunk concurrency rules of XORChunk: one goroutine
// appends (and calls Appender and Compact), while any number may iterate,
// provided each Iterator call does not overlap an Append. An iterator
// captures the ST header byte with the sample count when it is created.
type XOR2Chunk struct {
	w bitWriter // w.buf is the whole chunk, header included

	// borrowed is set when w.buf belongs to FromData's caller: Appender
	// then copies it first.
	borrowed bool
}

// NewXOR2Chunk returns an empty XOR2 chunk.
func NewXOR2Chunk() *XOR2Chunk {
	return &XOR2Chunk{w: bitWriter{buf: make([]byte, xor2HeaderSize, initialCapacity)}}
}

// XOR2ChunkFromData returns an XOR2 chunk over b, which holds the chunk's
// bytes including its 3-byte header; see FromData.
func XOR2ChunkFromData(b []byte) (*XOR2Chunk, error) {
	if len(b) < xor2HeaderSize {
		return nil, corruptAt(0, -1, "XOR2 chunk shorter than its 3-byte header")
	}
	if binary.BigEndian.Uint16(b) == 0 && len(b) > xor2HeaderSize {
		return nil, corruptAt(xor2HeaderSize, -1, "XOR2 chunk has no samples but bytes after its header")
	}
	return &XOR2Chunk{w: bitWriter{buf: b}, borrowed: true}, nil
}

// Encoding returns EncXOR2.
func (c *XOR2Chunk) Encoding() Encoding { return EncXOR2 }

// Bytes returns the encoded chunk, including its header. The slice aliases
// the chunk and is valid until the next Append or Compact.
func (c *XOR2Chunk) Bytes() []byte { return c.w.buf }

// NumSamples returns the number of samples in the chunk.
func (c *XOR2Chunk) NumSamples() int {
	if len(c.w.buf) < headerSize {
		return 0
	}
	return int(binary.BigEndian.Uint16(c.w.buf))
}

// Compact trims excess capacity from the chunk's byte slice. Iterators
// created earlier keep reading the old slice, which stays valid.
func (c *XOR2Chunk) Compact() {
	if n := len(c.w.buf); cap(c.w.buf) > n+compactSlack {
		buf := make([]byte, n)
		copy(buf, c.w.buf)
		c.w.buf = buf
		c.borrowed = false
	}
}

// Iterator returns an iterator over the samples in the chunk now; see
// Chunk.Iterator. The iterator is an *XOR2Iterator; reuse is reused if it
// is one. It must not be called concurrently with Append.
func (c *XOR2Chunk) Iterator(reuse Iterator) Iterator {
	it, ok := reuse.(*XOR2Iterator)
	if !ok || it == nil {
		it = new(XOR2Iterator)
	}
	it.Reset(c.w.buf)
	return it
}

// Appender returns an appender continuing the chunk, as Appender, whose
// Append stores samples with no start timestamp.
func (c *XOR2Chunk) Appender() (Appender, error) {
	a, err := c.XOR2Appender()
	if err != nil {
		return nil, err
	}
	return a, nil
}

// XOR2Appender returns an appender that continues the chunk as if all its
// samples had been appended through it. It decodes the whole chunk and
// fails with an error wrapping ErrCorrupt if it cannot, or if bytes follow
// the last sample. A chunk made by FromData is copied first, so the
// caller's bytes are never written to. Only the appender most recently
// returned may be used.
func (c *XOR2Chunk) XOR2Appender() (*XOR2Appender, error) {
	a := &XOR2Appender{c: c, win: xorWindow{leading: noLeading}}
	if c.NumSamples() == 0 {
		if c.borrowed || len(c.w.buf) != xor2HeaderSize || c.w.buf[stHeaderByte] != 0 {
			*c = *NewXOR2Chunk()
		}
		return a, nil
	}
	var it XOR2Iterator
	it.Reset(c.w.buf)
	for it.Next() != ValNone {
	}
	if it.err != nil {
		return nil, it.err
	}
	if err := it.st.checkResumable(it.read); err != nil {
		return nil, err
	}
	end := it.br.bitPos()
	free := len(c.w.buf)*8 - end
	if free < 0 || free > 7 {
		return nil, corruptAt(end/8, -1, "XOR2 chunk: unexpected bytes after the last sample")
	}
	if free > 0 && c.w.buf[len(c.w.buf)-1]&(1<<free-1) != 0 {
		return nil, corruptAt(len(c.w.buf)-1, -1, "XOR2 chunk: non-zero padding bits")
	}
	if c.borrowed {
		buf := make([]byte, len(c.w.buf), max(initialCapacity, len(c.w.buf)+initialCapacity/2))
		copy(buf, c.w.buf)
		c.w.buf = buf
		c.borrowed = false
	}
	c.w.free = uint8(free)
	a.t, a.tDelta, a.vbits = it.t, it.tDelta, it.base
	a.win = it.win.resumed()
	a.st = it.st
	return a, nil
}

// XOR2Appender appends to an XOR2Chunk. It holds the encoder's state after
// the chunk's last sample and is used by one goroutine at a time.
type XOR2Appender struct {
	c *XOR2Chunk

	t      int64     // time of the last sample
	tDelta uint64    // time delta between the last two samples (0 if < 2)
	vbits  uint64    // bits of the last value that was not a stale marker (0 if none)
	win    xorWindow // of the value; noLeading before the first window
	st     stState
}

// Append adds (t, v) with no start timestamp; see AppendST.
func (a *XOR2Appender) Append(t int64, v float64) { a.AppendST(0, t, v) }

// AppendST adds (t, v) with start timestamp st (0: none) to the chunk. t
// must be greater than the last sample's time; st may be anything, it is
// stored as given. An append to a chunk holding MaxSamples samples is
// ignored. For the same appends the chunk's bytes are Prometheus's.
func (a *XOR2Appender) AppendST(st, t int64, v float64) {
	w := &a.c.w
	num := binary.BigEndian.Uint16(w.buf)
	if num == MaxSamples {
		return
	}
	vbits := math.Float64bits(v)
	prevT := a.t
	var tDelta uint64
	switch num {
	case 0:
		w.putVarintBytes(t)
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
		a.writeJoint(int64(tDelta-a.tDelta), vbits)
	}
	a.st.encode(w, int(num), t, prevT, st)
	a.t, a.tDelta = t, tDelta
	if vbits != staleNaNBits {
		a.vbits = vbits
	}
	binary.BigEndian.PutUint16(w.buf, num+1)
}

// writeJoint writes the control prefix of a sample after the second, with
// dod, and its value.
func (a *XOR2Appender) writeJoint(dod int64, vbits uint64) {
	w := &a.c.w
	u := uint64(dod)
	switch {
	case dod == 0:
		switch delta := vbits ^ a.vbits; {
		case vbits == staleNaNBits:
			w.writeBits(0b11111, 5)
		case delta == 0:
			w.writeBits(0, 1)
		default:
			w.writeBits(0b10, 2)
			a.writeWindowed(delta, 1)
		}
		return
	case -1<<12 <= dod && dod < 1<<12:
		w.writeBits(0b110<<13|u&(1<<13-1), 3+13)
	case -1<<19 <= dod && dod < 1<<19:
		w.writeBits(0b1110<<20|u&(1<<20-1), 4+20)
	default:
		w.writeBits(0b11110, 5)
		w.writeBits(u, 64)
	}
	a.writeValue(vbits)
}

// writeValue writes a value in the form used after a non-zero dod and for
// sample 1: '0' unchanged, '10'/'110' windowed XOR bits, '111' stale.
func (a *XOR2Appender) writeValue(vbits uint64) {
	w := &a.c.w
	delta := vbits ^ a.vbits
	switch {
	case vbits == staleNaNBits:
		w.writeBits(0b111, 3)
	case delta == 0:
		w.writeBits(0, 1)
	default:
		w.writeBits(1, 1)
		a.writeWindowed(delta, 2)
	}
}

// writeWindowed writes the non-zero XOR delta after the part of its
// control prefix that the caller wrote: then '0' and the bits in the
// current window, or a new window announced by '1' (ctrl 1, after dod 0)
// or '10' (ctrl 2, completing '110'), its header and its bits.
func (a *XOR2Appender) writeWindowed(delta uint64, ctrl uint8) {
	w := &a.c.w
	leading, trailing, reuse := xorWindowChoice(a.win, delta, ctrl)
	if reuse {
		w.writeBits(0, 1)
		w.writeBits(delta>>a.win.trailing, 64-a.win.leading-a.win.trailing)
		return
	}
	a.win = xorWindow{leading: leading, trailing: trailing}
	sig := 64 - leading - trailing // 1..64; 64 is written as 0
	if ctrl == 1 {
		w.writeBits(1, 1)
	} else {
		w.writeBits(0b10, 2)
	}
	w.writeBits(uint64(leading)<<6|uint64(sig&63), 5+6)
	w.writeBits(delta>>trailing, sig)
}

// xorWindowChoice decides how XOR2 writes the non-zero XOR delta given the
// current window win: in it (reuse), or with a new window of the given
// leading and trailing zero counts. A new window costs a header of 11 bits
// plus ctrl more control bits than reuse does (ctrl is 1 after dod 0, 2
// otherwise); the encoder reuses win when that writes no more bits, and
// when it must widen the window it keeps the old edges if that costs at
// most half of that overhead in extra value bits, betting that later values
// need them again. This is Prometheus's rule, so the bits are too.
func xorWindowChoice(win xorWindow, delta uint64, ctrl uint8) (leading, trailing uint8, reuse bool) {
	leading = min(uint8(bits.LeadingZeros64(delta)), 31)
	trailing = uint8(bits.TrailingZeros64(delta))
	overhead := 10 + int(ctrl) // 11 header bits, minus the reuse bit already counted
	if win.leading != noLeading && leading >= win.leading && trailing >= win.trailing &&
		int(leading)+int(trailing) <= int(win.leading)+int(win.trailing)+overhead {
		return 0, 0, true
	}
	if win.leading != noLeading && (leading < win.leading || trailing < win.trailing) {
		ul, ut := min(leading, win.leading), min(trailing, win.trailing)
		if int(leading)+int(trailing)-int(ul)-int(ut) <= overhead/2 {
			leading, trailing = ul, ut
		}
	}
	return leading, trailing, false
}

// NumSamples returns the number of samples in the appender's chunk.
func (a *XOR2Appender) NumSamples() int { return a.c.NumSamples() }
