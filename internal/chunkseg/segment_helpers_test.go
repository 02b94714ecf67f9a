package chunkseg

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunktest"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// testChunksDir is where segment tests put their files in a MemFS.
const testChunksDir = "/block/chunks"

// genMetas returns n XOR chunks of 1..maxSamples samples each, mixing
// regular scrapes, special values and random bits so that chunk sizes vary
// widely.
func genMetas(t testing.TB, r *rand.Rand, n, maxSamples int) []chunks.Meta {
	t.Helper()
	metas := make([]chunks.Meta, n)
	for i := range metas {
		k := 1 + r.IntN(maxSamples)
		var ss []chunktest.Sample
		switch r.IntN(4) {
		case 0:
			ss = chunktest.GenScrape(r, k, 1_700_000_000_000, 50, chunktest.GaugeValues)
		case 1:
			ss = chunktest.GenScrape(r, k, int64(i)*1000, 0, chunktest.CounterValues())
		case 2:
			ss = chunktest.GenScrape(r, k, -1000, 10, chunktest.SpecialValues)
		default:
			ss = chunktest.GenScrape(r, k, 0, 1000, chunktest.RandomBits)
		}
		c := encode(t, ss)
		c.Compact()
		metas[i] = chunks.Meta{Chunk: c, MinTime: ss[0].T, MaxTime: ss[len(ss)-1].T}
	}
	return metas
}

// writeSegments writes metas through a SegmentWriter on fsys in batches of
// random size (some empty) and closes it; it sets the metas' refs.
func writeSegments(t testing.TB, r *rand.Rand, fsys vfs.FS, dir string, metas []chunks.Meta, opts ...SegmentWriterOption) {
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
func requireSameChunk(t testing.TB, want, got chunks.Chunk) {
	t.Helper()
	require.Equal(t, want.Encoding(), got.Encoding())
	requireBytes(t, want.Bytes(), got.Bytes())
	chunktest.RequireSamples(t, chunktest.Collect(t, want.Iterator(nil)), chunktest.Collect(t, got.Iterator(nil)))
}

// requireCorruption checks that err is a *corrupt.Error about file at
// offset off that also satisfies errors.Is(err, corrupt.ErrCorrupt), and returns it.
func requireCorruption(t testing.TB, err error, file string, off int64) *corrupt.Error {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, corrupt.ErrCorrupt)
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

// encode returns an XOR chunk holding ss.
func encode(t testing.TB, ss []chunktest.Sample) *chunks.XORChunk {
	t.Helper()
	c := chunks.NewXORChunk()
	chunktest.AppendAll(mustAppender(t, c), ss)
	return c
}

func mustAppender(t testing.TB, c chunks.Chunk) chunks.Appender {
	t.Helper()
	xc, ok := c.(*chunks.XORChunk)
	require.True(t, ok, "%T is not an XOR chunk", c)
	app, err := xc.Appender()
	require.NoError(t, err)
	return app
}

func requireBytes(t testing.TB, want, got []byte) {
	t.Helper()
	require.Equal(t, want, got)
}

// requireCorrupt checks that err holds, inside the file-level error, the
// error of the chunk's own bytes, which knows no file.
func requireCorrupt(t testing.TB, err error) {
	t.Helper()
	require.ErrorIs(t, err, chunks.ErrCorrupt)
	var ce *corrupt.Error
	for e := err; errors.As(e, &ce); e = ce.Err {
		if ce.File == "" {
			return
		}
	}
	require.Failf(t, "no file-less *corrupt.Error", "want a *corrupt.Error without a file, got %T: %v", err, err)
}
