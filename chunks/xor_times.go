package chunks

import (
	"encoding/binary"
	"math"
	"slices"
)

// XORTimes indexes the sample times of one XOR-encoded chunk, so that
// looking a time up does not decode the chunk from its start. The chunk is
// an XORChunk still being appended to, or any other Chunk of encoding
// EncXOR whose bytes never change (a chunk read in place from a file): a
// lookup past the last indexed sample indexes the samples appended since,
// up to the time looked up, resuming the decoder where it stopped, so each
// sample is decoded at most once however many lookups are made (and those
// after the last time looked up never are). Asked about another chunk, it
// starts over with that one. It keeps the chunk it indexes reachable until
// then (or Reset).
//
// Times are kept as uint32 offsets from the chunk's first sample (4 bytes
// a sample; a head chunk spans at most a block range). A chunk whose
// samples are more than math.MaxUint32 ms apart, whose times do not
// increase, that does not decode or that is not XOR-encoded cannot be
// indexed: once Index has decoded that far, it says so, and the caller
// decodes the chunk itself. (An XORAppender's chunk always has increasing
// times.)
//
// Concurrency: an XORTimes is not safe for concurrent use. Index reads the
// chunk's Bytes under the rule of XORChunk.Iterator (the call must not
// overlap an Append to the chunk; see the package documentation). The zero
// value is ready to use.
type XORTimes struct {
	// What a lookup before the last indexed sample reads comes first, in
	// one cache line.
	c    Chunk
	offs []uint32 // times of the indexed samples, minus base, ascending
	base int64    // time of the first sample
	bad  bool     // c cannot be indexed (see above)

	pos int         // bit position of it after the last indexed sample
	it  xorIterator // decoder state after the last indexed sample
}

// Index returns the position in c of its sample at time t, and whether c
// has a sample at t. ok is false if c cannot be indexed; i and found are
// then meaningless.
func (x *XORTimes) Index(c Chunk, t int64) (i int, found, ok bool) {
	if x.c != c {
		x.restart(c)
	}
	if x.bad {
		return 0, false, false
	}
	if n := len(x.offs); n == 0 || t > x.base+int64(x.offs[n-1]) {
		if !x.extend(t) {
			return 0, false, false
		}
	}
	if len(x.offs) == 0 || t < x.base || t-x.base > math.MaxUint32 {
		return 0, false, true
	}
	i, found = slices.BinarySearch(x.offs, uint32(t-x.base))
	return i, found, true
}

// Chunk returns the chunk x indexes, nil if none.
func (x *XORTimes) Chunk() Chunk { return x.c }

// Reset drops the index and the chunk it refers to, keeping the buffer.
func (x *XORTimes) Reset() {
	x.restart(nil)
}

// restart points x at c with nothing indexed.
func (x *XORTimes) restart(c Chunk) {
	x.c, x.pos, x.base, x.bad = c, headerSize*8, 0, c != nil && c.Encoding() != EncXOR
	x.offs = x.offs[:0]
	x.it = xorIterator{}
	x.it.resetTo(nil, headerSize, 0)
}

// extend indexes the samples appended to x.c since the last call, up to
// the first at or after t. It returns false if x.c cannot be indexed.
func (x *XORTimes) extend(t int64) bool {
	b := x.c.Bytes()
	if len(b) < headerSize {
		return len(x.offs) == 0
	}
	total := binary.BigEndian.Uint16(b)
	switch {
	case int(total) == len(x.offs):
		return true
	case int(total) < len(x.offs):
		// Not the chunk that was indexed, though at the same address.
		x.restart(x.c)
	}
	if cap(x.offs) < int(total) {
		// Room for the whole chunk and as much again: one allocation for
		// a chunk that grows to twice the size it was first indexed at.
		x.offs = slices.Grow(x.offs, 2*int(total)-len(x.offs))
	}
	// Resume decoding where the last call stopped: the bits before x.pos
	// are as they were (appends only add bits after them); the chunk's
	// slice, sample count and last byte may have changed.
	it := &x.it
	it.total, it.done, it.err = total, false, nil
	it.br.resetTo(b, x.pos/8, b[len(b)-1])
	if skip := uint8(x.pos % 8); skip > 0 {
		if _, n := it.br.peek(skip); n < skip {
			x.bad = true
			return false
		}
		it.br.skip(skip)
	}
	for it.Next() != ValNone {
		ti := it.t
		switch {
		case len(x.offs) == 0:
			x.base = ti
		case ti <= x.base+int64(x.offs[len(x.offs)-1]) || ti-x.base > math.MaxUint32:
			x.bad = true
			return false
		}
		x.offs = append(x.offs, uint32(ti-x.base))
		if ti >= t {
			break
		}
	}
	if it.err != nil {
		x.bad = true
		return false
	}
	x.pos = it.br.bitPos()
	return true
}
