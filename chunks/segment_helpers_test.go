package chunks

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
	"github.com/stretchr/testify/require"
)

// testChunksDir is where segment tests put their files in a MemFS.
const testChunksDir = "/block/chunks"

// genMetas returns n XOR chunks of 1..maxSamples samples each, mixing
// regular scrapes, special values and random bits so that chunk sizes vary
// widely.
func genMetas(t testing.TB, r *rand.Rand, n, maxSamples int) []Meta {
	t.Helper()
	metas := make([]Meta, n)
	for i := range metas {
		k := 1 + r.IntN(maxSamples)
		var ss []testSample
		switch r.IntN(4) {
		case 0:
			ss = genScrape(r, k, 1_700_000_000_000, 50, gaugeValues)
		case 1:
			ss = genScrape(r, k, int64(i)*1000, 0, counterValues())
		case 2:
			ss = genScrape(r, k, -1000, 10, specialValues)
		default:
			ss = genScrape(r, k, 0, 1000, randomBits)
		}
		c := encode(t, ss)
		c.Compact()
		metas[i] = Meta{Chunk: c, MinTime: ss[0].t, MaxTime: ss[len(ss)-1].t}
	}
	return metas
}

// writeSegments writes metas through a SegmentWriter on fsys in batches of
// random size (some empty) and closes it; it sets the metas' refs.
func writeSegments(t testing.TB, r *rand.Rand, fsys vfs.FS, dir string, metas []Meta, opts ...SegmentWriterOption) {
	t.Helper()
	w, err := NewSegmentWriter(fsys, dir, opts...)
	require.NoError(t, err)
	for rest := metas; len(rest) > 0; {
		k := min(len(rest), r.IntN(40))
		require.NoError(t, w.WriteChunks(rest[:k]...))
		rest = rest[k:]
	}
	require.NoError(t, w.Close())
}

// requireSameChunk checks that got has want's encoding, bytes and samples.
func requireSameChunk(t testing.TB, want, got Chunk) {
	t.Helper()
	require.Equal(t, want.Encoding(), got.Encoding())
	requireBytes(t, want.Bytes(), got.Bytes())
	requireSamples(t, collect(t, want.Iterator(nil)), collect(t, got.Iterator(nil)))
}

// requireCorruption checks that err is a *corrupt.Error about file at
// offset off that also satisfies errors.Is(err, ErrCorrupt), and returns it.
func requireCorruption(t testing.TB, err error, file string, off int64) *corrupt.Error {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, ErrCorrupt)
	var ce *corrupt.Error
	require.True(t, errors.As(err, &ce), "want *corrupt.Error, got %T: %v", err, err)
	require.Equal(t, file, ce.File, "file in %v", err)
	require.Equal(t, off, ce.Offset, "offset in %v", err)
	return ce
}

// segName returns the path of the segment file with sequence number seq in
// testChunksDir.
func segName(seq int) string {
	return filepath.Join(testChunksDir, SegmentFileName(seq))
}

// memFSWith returns a MemFS whose testChunksDir holds the given segment
// files, numbered from 000001.
func memFSWith(t testing.TB, files ...[]byte) *vfs.MemFS {
	t.Helper()
	fsys := vfs.NewMemFS()
	require.NoError(t, fsys.MkdirAll(testChunksDir, 0o755))
	for i, b := range files {
		require.NoError(t, fsys.WriteFile(segName(i+1), b, 0o644))
	}
	return fsys
}

// openReader opens a SegmentReader on fsys's testChunksDir and closes it at
// the end of the test.
func openReader(t testing.TB, fsys vfs.FS) *SegmentReader {
	t.Helper()
	r, err := NewSegmentReader(fsys, testChunksDir)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	return r
}

// crc32cBitwise is a textbook bit-at-a-time CRC-32C (reflected polynomial
// 0x82F63B78), independent of hash/crc32, to check golden checksums.
func crc32cBitwise(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x82F63B78
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}
