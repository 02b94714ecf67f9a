package chunkseg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// segment is one mapped segment file.
type segment struct {
	name string     // path of the file, for errors
	m    vfs.Mapped // the mapping; closed by SegmentReader.Close
	b    []byte     // m.Bytes(), header included; at least SegmentHeaderSize long
}

// SegmentReader reads chunks from the segment files of a block's chunks
// directory, which it maps whole.
//
// Chunk may be called concurrently from any number of goroutines. Close must
// not be called concurrently with Chunk, nor while chunks returned by Chunk
// (or iterators over them) are still in use: they read the mapped files in
// place, and Close unmaps them.
type SegmentReader struct {
	segs []segment // in file name order; index = segment index of a reference. nil after Close
	size int64     // total bytes of all files
	// closed is set by Close. It is a plain bool: Close must not race with
	// Chunk, so no synchronisation is needed.
	closed bool
}

// NewSegmentReader maps every segment file (every file whose name is made
// only of digits) in dir, in name order, and checks each file's header:
// length, magic, version and zero padding. A bad header yields a
// *corrupt.Error. A dir with no segment files gives a reader that holds
// no chunks.
//
// Records are checked only when read, by Chunk, so opening costs one mapping
// per file whatever the files hold.
func NewSegmentReader(fsys vfs.FS, dir string) (_ *SegmentReader, err error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("chunks: read chunks directory: %w", err)
	}
	r := &SegmentReader{}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Close())
		}
	}()
	for _, e := range entries {
		if !isSegmentFileName(e.Name()) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		m, err := fsys.Map(name)
		if err != nil {
			return nil, fmt.Errorf("chunks: map segment file: %w", err)
		}
		b := m.Bytes()
		r.segs = append(r.segs, segment{name: name, m: m, b: b})
		if err := checkSegmentHeader(name, b); err != nil {
			return nil, err
		}
		r.size += int64(len(b))
	}
	return r, nil
}

// checkSegmentHeader returns a *corrupt.Error if b does not start with a
// valid segment header.
func checkSegmentHeader(name string, b []byte) error {
	if len(b) < SegmentHeaderSize {
		return corruptf(name, 0, "file of %d bytes is shorter than the %d-byte header", len(b), SegmentHeaderSize)
	}
	if m := binary.BigEndian.Uint32(b); m != SegmentMagic {
		return corruptf(name, 0, "magic %#08x, want %#08x", m, uint32(SegmentMagic))
	}
	if v := b[4]; v != SegmentVersion {
		return corruptf(name, 4, "format version %d, want %d", v, SegmentVersion)
	}
	if b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return corruptf(name, 5, "header padding % x is not zero", b[5:8])
	}
	return nil
}

// Chunk returns the chunk that ref (see BlockRef) points to. The chunk reads
// the mapped file in place; see SegmentReader for how long it stays valid.
//
// It checks that the record lies inside its file and that its checksum
// matches; a failure yields a *corrupt.Error naming the file and the
// chunk's offset. A reference naming no file or pointing into a file's
// header yields an error wrapping ErrInvalidRef. A record with an encoding
// chunks.FromData does not know is corrupt too: the error wraps both
// corrupt.ErrCorrupt and chunks.ErrUnknownEncoding, and names the file and
// offset. The samples themselves are checked only as they are iterated.
func (r *SegmentReader) Chunk(ref uint64) (chunks.Chunk, error) {
	if r.closed {
		return nil, fmt.Errorf("chunks: read chunk %#x: %w", ref, ErrClosed)
	}
	si, off := SplitBlockRef(ref)
	if uint64(si) >= uint64(len(r.segs)) {
		return nil, fmt.Errorf("%w %#x: segment %d of %d", ErrInvalidRef, ref, si, len(r.segs))
	}
	s := &r.segs[si]
	if off < SegmentHeaderSize {
		return nil, fmt.Errorf("%w %#x: offset %d in the header of %s", ErrInvalidRef, ref, off, s.name)
	}
	b, start := s.b, int64(off)
	if start >= int64(len(b)) {
		return nil, corruptf(s.name, start, "chunk starts past the end of the %d-byte file", len(b))
	}
	rest := b[start:]

	dataLen, k := binary.Uvarint(rest[:min(len(rest), binary.MaxVarintLen64)])
	if k <= 0 {
		return nil, corruptf(s.name, start, "unreadable chunk length")
	}
	// Compare in uint64 so that a huge length cannot overflow.
	if avail := uint64(len(rest) - k); avail < recordOverhead || dataLen > avail-recordOverhead {
		return nil, corruptf(s.name, start, "chunk of %d data bytes runs past the end of the %d-byte file", dataLen, len(b))
	}
	rec := rest[k : k+recordOverhead+int(dataLen)] // encoding, data, crc
	enc, data := chunks.Encoding(rec[0]), rec[1:1+dataLen]
	if want, got := binary.BigEndian.Uint32(rec[1+dataLen:]), chunkCRC(enc, data); want != got {
		return nil, corruptf(s.name, start, "chunk checksum %#08x, stored %#08x", got, want)
	}

	// Full slice expression: the chunk must not see (or append over) the
	// CRC and the records after it.
	c, err := chunks.FromData(enc, data[:len(data):len(data)])
	if err != nil {
		return nil, corrupt.At(s.name, start, err)
	}
	return c, nil
}

// Size returns the total size in bytes of the segment files.
func (r *SegmentReader) Size() int64 { return r.size }

// Close unmaps every file. Chunks returned earlier must no longer be used.
// Closing again returns nil.
func (r *SegmentReader) Close() error {
	r.closed = true
	var errs []error
	for _, s := range r.segs {
		if err := s.m.Close(); err != nil {
			errs = append(errs, fmt.Errorf("chunks: unmap segment file: %w", err))
		}
	}
	r.segs = nil
	return errors.Join(errs...)
}
