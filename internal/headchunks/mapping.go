package headchunks

import (
	"encoding/binary"
	"runtime"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/vfs"
)

// mapping is one memory mapping of a head chunk file. Its vfs.Mapped is
// closed by a cleanup once the mapping is unreachable, and every chunk that
// reads its bytes references it, so the bytes stay mapped for as long as
// any such chunk is reachable. Nothing closes it explicitly: removing the
// file or closing the Writer only drops references.
//
// The cleanup's argument is the vfs.Mapped alone, which does not point back
// at the mapping (a cleanup whose argument reaches its object never runs).
type mapping struct {
	b []byte     // the mapped file contents; read only, never after the cleanup
	v vfs.Mapped // the view b belongs to, for evict
}

// newMapping wraps m, which no one else may close, in a mapping.
func newMapping(m vfs.Mapped) *mapping {
	mp := &mapping{b: m.Bytes(), v: m}
	runtime.AddCleanup(mp, closeMapped, m)
	return mp
}

// evict drops the pages of the mapping from the process's resident set
// (vfs.Mapped.Evict); chunks reading it fault them back in. The error is
// dropped: the advice changes no data, and a failure only leaves the pages
// resident until the mapping is closed.
func (mp *mapping) evict() { _ = mp.v.Evict() }

// closeMapped unmaps m. The error is dropped: there is no one left to
// report it to, and a failed munmap leaks address space but no data.
func closeMapped(m vfs.Mapped) { _ = m.Close() }

// mappedChunk is a chunk that reads its bytes in place in a mapping, and
// keeps that mapping alive while it is reachable. It adds one pointer to
// the inner chunk's interface value; all of chunks.Chunk is promoted.
//
// Iterators and Bytes slices of the chunk do not reference the mapping: they
// are valid only while the mappedChunk itself is reachable.
type mappedChunk struct {
	chunks.Chunk
	m *mapping
}

// Compact does nothing: the bytes are the file's, and a copy would move
// them into the heap.
func (c *mappedChunk) Compact() {}

// mappedXOR is a mapped XOR chunk: what mappedChunk is for the other
// encodings, without the inner chunk object (32 bytes instead of 72; a
// head keeps several per series).
type mappedXOR struct {
	b []byte // the chunk's bytes in the mapping, header included
	m *mapping
}

func (c *mappedXOR) Bytes() []byte             { return c.b }
func (c *mappedXOR) Encoding() chunks.Encoding { return chunks.EncXOR }
func (c *mappedXOR) NumSamples() int           { return int(binary.BigEndian.Uint16(c.b)) }
func (c *mappedXOR) Compact()                  {}

// Iterator reads the mapping in place; it is valid while c is reachable.
func (c *mappedXOR) Iterator(reuse chunks.Iterator) chunks.Iterator {
	return chunks.XORIterator(c.b, reuse)
}

// IsMapped reports whether c reads a head chunk file's mapping (it was
// returned by Writer.Chunk or given to Open's callback).
func IsMapped(c chunks.Chunk) bool {
	switch c.(type) {
	case *mappedChunk, *mappedXOR:
		return true
	}
	return false
}
