package chunkseg

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunktest"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// requireTypedReadError checks that err is one of the errors Chunk
// documents.
func requireTypedReadError(t *testing.T, err error) {
	t.Helper()
	var ce *corrupt.Error
	switch {
	case errors.As(err, &ce):
		require.ErrorIs(t, err, corrupt.ErrCorrupt)
	case errors.Is(err, ErrInvalidRef):
	default:
		require.Failf(t, "untyped error from Chunk", "%v", err)
	}
}

// FuzzSegmentReader treats arbitrary bytes as a segment file: opening it
// and reading any reference, or walking its records one after the other,
// must yield chunks or typed errors, never a panic.
func FuzzSegmentReader(f *testing.F) {
	f.Add(goldenBytes(f), uint64(25))
	f.Add(goldenBytes(f)[:20], uint64(8))
	f.Add(goldenBytes(f)[:SegmentHeaderSize], uint64(8))
	f.Add([]byte{}, uint64(0))
	f.Add([]byte("\x85\xBD\x40\xDD\x01\x00\x00\x00\x0b\x01\x00\x01\x02\x3f\xf0\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), uint64(1<<32|8))
	r := rand.New(rand.NewPCG(7, 7))
	fsys := vfs.NewMemFS()
	writeSegments(f, r, fsys, testChunksDir, genMetas(f, r, 20, 30))
	seed, err := fsys.ReadFile(segName(1))
	require.NoError(f, err)
	f.Add(seed, uint64(8))

	f.Fuzz(func(t *testing.T, data []byte, ref uint64) {
		rd, err := NewSegmentReader(memFSWith(t, data), testChunksDir)
		if err != nil {
			var off int64 // where the header goes wrong
			switch {
			case len(data) < SegmentHeaderSize || binary.BigEndian.Uint32(data) != SegmentMagic:
			case data[4] != SegmentVersion:
				off = 4
			default:
				off = 5
			}
			requireCorruption(t, err, segName(1), off)
			return
		}
		defer rd.Close()
		read := func(ref uint64) bool {
			c, err := rd.Chunk(ref)
			if err != nil {
				requireTypedReadError(t, err)
				return false
			}
			// The chunk holds exactly the record's data, and iterating it
			// ends cleanly or with a typed error.
			_, off := SplitBlockRef(ref)
			n, k := binary.Uvarint(data[off:])
			require.Equal(t, int(n), len(c.Bytes()))
			require.Equal(t, chunks.Encoding(data[int(off)+k]), c.Encoding())
			it := c.Iterator(nil)
			for it.Next() != chunks.ValNone {
			}
			if err := it.Err(); err != nil {
				require.ErrorIs(t, err, corrupt.ErrCorrupt)
			}
			return true
		}
		read(ref)
		read(BlockRef(0, uint32(ref)))
		// Walk the records from the first one.
		for off := uint64(SegmentHeaderSize); off < uint64(len(data)) && read(off); {
			n, k := binary.Uvarint(data[off:])
			off += uint64(k) + recordOverhead + n
		}
	})
}

// fuzzMetas turns fuzz bytes into XOR chunks: a length byte (samples, mod
// 32) followed by 16 bytes per sample, repeated.
func fuzzMetas(t *testing.T, data []byte) []chunks.Meta {
	var metas []chunks.Meta
	for len(data) > 0 {
		n := int(data[0]) % 32
		data = data[1:]
		k := min(len(data), 16*n)
		ss := chunktest.SamplesFromBytes(data[:k])
		data = data[k:]
		m := chunks.Meta{Chunk: encode(t, ss)}
		if len(ss) > 0 {
			m.MinTime, m.MaxTime = ss[0].T, ss[len(ss)-1].T
		}
		metas = append(metas, m)
	}
	return metas
}

// FuzzSegmentRoundTrip writes arbitrary chunks, in arbitrary batches, with
// an arbitrary (small) segment size, and checks that the files have the
// promised layout and read back exactly.
func FuzzSegmentRoundTrip(f *testing.F) {
	f.Add([]byte{1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0}, uint16(40), uint8(1))
	f.Add(make([]byte, 300), uint16(0), uint8(3))
	f.Add([]byte{31}, uint16(1000), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, size uint16, batch uint8) {
		metas := fuzzMetas(t, data)
		maxSize := int64(SegmentHeaderSize) + 1 + int64(size)
		fsys := vfs.NewMemFS()
		w, err := NewSegmentWriter(fsys, testChunksDir, WithMaxSegmentSize(maxSize))
		require.NoError(t, err)
		step := int(batch)%8 + 1
		for i := 0; i < len(metas); i += step {
			require.NoError(t, w.WriteChunks(metas[i:min(i+step, len(metas))]...))
		}
		require.NoError(t, w.Close())
		checkLayout(t, fsys, metas, maxSize)

		rd := openReader(t, fsys)
		for _, m := range metas {
			c, err := rd.Chunk(m.Ref)
			require.NoError(t, err)
			requireSameChunk(t, m.Chunk, c)
		}
	})
}
