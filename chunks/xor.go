package chunks

import (
	"encoding/binary"
	"math"
)

const (
	// headerSize is the size of a chunk's sample-count header.
	headerSize = 2

	// MaxSamples is the most samples a chunk can hold: its header counts
	// them in a uint16.
	MaxSamples = math.MaxUint16

	// initialCapacity is the capacity of a new chunk's byte slice. At the
	// ~1.3 bytes per sample typical of real series, 128 bytes hold about 95
	// samples, so a 120-sample head chunk grows at most once.
	initialCapacity = 128

	// compactSlack is how much spare capacity Compact tolerates before it
	// copies the chunk: below this, the copy would cost more than it saves.
	compactSlack = 32
)

// XORChunk holds samples in the XOR encoding (see the package
// documentation). The zero value is an empty chunk.
//
// XORChunk follows the Chunk concurrency rules: one goroutine appends (and
// calls Appender and Compact), while any number may iterate, provided each
// Iterator call does not overlap an Append.
type XORChunk struct {
	w bitWriter // w.buf is the whole chunk, header included

	// borrowed is set when w.buf belongs to FromData's caller: Appender
	// then copies it, and w.free is unknown until Appender has decoded it.
	borrowed bool
}

// NewXORChunk returns an empty XOR chunk with room for a typical chunk's
// worth of samples.
func NewXORChunk() *XORChunk {
	return &XORChunk{w: bitWriter{buf: make([]byte, headerSize, initialCapacity)}}
}

// Encoding returns EncXOR.
func (c *XORChunk) Encoding() Encoding { return EncXOR }

// Bytes returns the encoded chunk, including its header. The slice aliases
// the chunk and is valid until the next Append or Compact.
func (c *XORChunk) Bytes() []byte { return c.w.buf }

// NumSamples returns the number of samples in the chunk.
func (c *XORChunk) NumSamples() int {
	if len(c.w.buf) < headerSize {
		return 0
	}
	return int(binary.BigEndian.Uint16(c.w.buf))
}

// Compact trims excess capacity from the chunk's byte slice. Iterators
// created earlier keep reading the old slice, which stays valid.
func (c *XORChunk) Compact() {
	if n := len(c.w.buf); cap(c.w.buf) > n+compactSlack {
		buf := make([]byte, n)
		copy(buf, c.w.buf)
		c.w.buf = buf
		c.borrowed = false
	}
}

// Iterator returns an iterator over the samples in the chunk now; see
// Chunk.Iterator. It must not be called concurrently with Append.
func (c *XORChunk) Iterator(reuse Iterator) Iterator {
	it, ok := reuse.(*xorIterator)
	if !ok {
		it = new(xorIterator)
	}
	it.reset(c.w.buf)
	return it
}

// Appender returns an appender continuing the chunk; see Chunk.Appender.
// The chunk must end exactly where its last sample does (plus the zero
// padding an XOR writer leaves); otherwise the error wraps ErrCorrupt. A
// chunk made by FromData is copied first, so the caller's bytes are never
// written to.
func (c *XORChunk) Appender() (Appender, error) {
	a, err := c.XORAppender()
	if err != nil {
		return nil, err
	}
	return a, nil
}

// XORAppender is Appender with the concrete type.
func (c *XORChunk) XORAppender() (*XORAppender, error) {
	if len(c.w.buf) < headerSize {
		c.w = bitWriter{buf: make([]byte, headerSize, initialCapacity)}
		c.borrowed = false
	}
	// Decode everything to recover the writer's state after the last
	// sample. Cheap for chunks of a few hundred samples, and the only way
	// for chunks read back from bytes.
	var it xorIterator
	it.reset(c.w.buf)
	for it.Next() != ValNone {
	}
	if it.err != nil {
		return nil, it.err
	}
	end := it.br.bitPos()
	free := len(c.w.buf)*8 - end
	if free < 0 || free > 8 {
		return nil, corruptAt(end/8, -1, "unexpected bytes after the last sample")
	}
	if free > 0 && c.w.buf[len(c.w.buf)-1]&(1<<free-1) != 0 {
		return nil, corruptAt(len(c.w.buf)-1, -1, "non-zero padding bits")
	}
	if c.borrowed {
		buf := make([]byte, len(c.w.buf), max(initialCapacity, len(c.w.buf)+initialCapacity/2))
		copy(buf, c.w.buf)
		c.w.buf = buf
		c.borrowed = false
	}
	c.w.free = uint8(free)
	return &XORAppender{
		c:        c,
		t:        it.t,
		vbits:    it.vbits,
		tDelta:   it.tDelta,
		leading:  it.leading,
		trailing: it.trailing,
		num:      it.read,
	}, nil
}

// XORIterator returns an iterator over the XOR chunk whose bytes (2-byte
// header included) are b, as (&XORChunk over b).Iterator(reuse) would,
// without a chunk: for callers that keep XOR chunks as bytes of their own
// (a memory-mapped file). b must not change while the iterator is used.
func XORIterator(b []byte, reuse Iterator) Iterator {
	it, ok := reuse.(*xorIterator)
	if !ok {
		it = new(xorIterator)
	}
	it.reset(b)
	return it
}

// IteratorSpace is room for one XOR chunk iterator inside a struct the
// caller allocates anyway: passing Reuse() as the reuse argument of an XOR
// chunk's, snapshot's or XORIterator's Iterator makes the iterator live in
// the space, saving an allocation. A space must not be copied after its
// first use.
type IteratorSpace struct{ xor xorIterator }

// Reuse returns the iterator the space holds, to pass as reuse.
func (s *IteratorSpace) Reuse() Iterator { return &s.xor }

// Holds reports whether it is the iterator the space holds.
func (s *IteratorSpace) Holds(it Iterator) bool {
	x, ok := it.(*xorIterator)
	return ok && x == &s.xor
}

// NextFloat is Next and At of the iterator the space holds, called
// without an interface: the sample's time and value, or ok false where
// Next returns ValNone.
func (s *IteratorSpace) NextFloat() (t int64, v float64, ok bool) {
	if s.xor.Next() == ValNone {
		return 0, 0, false
	}
	return s.xor.t, math.Float64frombits(s.xor.vbits), true
}

// NextFloats is up to len(ts) calls of NextFloat (len(vs) >= len(ts)),
// stopping at the end of the chunk: it stores the samples' times and
// values in ts and vs and returns how many. The iterator is then on the
// last sample stored, or at the end if it returned fewer than len(ts).
func (s *IteratorSpace) NextFloats(ts []int64, vs []float64) int {
	vs = vs[:len(ts)]
	i := 0
	for i < len(ts) {
		// Runs of common samples fused, each other sample through Next.
		if i += s.xor.nextRun(ts[i:], vs[i:]); i == len(ts) {
			break
		}
		if s.xor.Next() == ValNone {
			return i
		}
		ts[i], vs[i] = s.xor.t, math.Float64frombits(s.xor.vbits)
		i++
	}
	return i
}
