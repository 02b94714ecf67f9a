package chunkseg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunktest"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// checkLayout checks, from the files alone, everything the writer promises
// about where chunks go: files numbered 000001.. without gaps, each starting
// with a header; records back to back in ref order, each holding its chunk's
// encoding, bytes and checksum at its ref; a new file started exactly when
// the next record would not fit; files over maxSize only when they hold one
// chunk.
func checkLayout(t *testing.T, fsys *vfs.MemFS, metas []chunks.Meta, maxSize int64) {
	t.Helper()
	entries, err := fsys.ReadDir(testChunksDir)
	require.NoError(t, err)
	files := make([][]byte, len(entries))
	for i, e := range entries {
		require.Equal(t, SegmentFileName(i+1), e.Name())
		files[i], err = fsys.ReadFile(segName(i + 1))
		require.NoError(t, err)
		require.Equal(t, []byte{0x85, 0xBD, 0x40, 0xDD, 1, 0, 0, 0}, files[i][:SegmentHeaderSize])
	}

	if len(metas) == 0 {
		require.Empty(t, files)
		return
	}
	seg, next := 0, int64(SegmentHeaderSize) // where the next record must be
	perFile := make([]int, len(files))
	for i, m := range metas {
		s, off := SplitBlockRef(m.Ref)
		size := recordSize(len(m.Chunk.Bytes()))
		if int(s) != seg {
			require.Equal(t, seg+1, int(s), "chunk %d skips a file", i)
			require.Equal(t, int64(len(files[seg])), next, "file %d has bytes after its last chunk", seg+1)
			require.Greater(t, next+size, maxSize, "chunk %d started file %d though it fit in the previous one", i, s+1)
			seg, next = int(s), SegmentHeaderSize
		}
		require.Equal(t, next, int64(off), "chunk %d", i)
		perFile[seg]++

		b := files[seg][off:]
		n, k := binary.Uvarint(b)
		require.Equal(t, uint64(len(m.Chunk.Bytes())), n)
		require.Equal(t, byte(m.Chunk.Encoding()), b[k])
		requireBytes(t, m.Chunk.Bytes(), b[k+1:k+1+int(n)])
		require.Equal(t, crc32cBitwise(b[k:k+1+int(n)]), binary.BigEndian.Uint32(b[k+1+int(n):]))
		next += size
	}
	require.Equal(t, len(files)-1, seg, "files after the last chunk's")
	require.Equal(t, int64(len(files[seg])), next)
	for i, f := range files {
		if int64(len(f)) > maxSize {
			require.Equal(t, 1, perFile[i], "file %d is %d bytes > %d with %d chunks", i+1, len(f), maxSize, perFile[i])
		}
	}
}

func TestSegmentRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name        string
		n, samples  int
		maxSize     int64
		wantMinSegs int
	}{
		{"one file", 300, 120, DefaultMaxSegmentSize, 1},
		{"many files", 2000, 240, 4096, 20},
		{"oversized chunks", 200, 240, 64, 200},
		{"tiny chunks", 500, 1, 100, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			metas := genMetas(t, r, tc.n, tc.samples)
			fsys := vfs.NewMemFS()
			writeSegments(t, r, fsys, testChunksDir, metas, WithMaxSegmentSize(tc.maxSize))
			checkLayout(t, fsys, metas, tc.maxSize)

			rd := openReader(t, fsys)
			lastSeg, _ := SplitBlockRef(metas[len(metas)-1].Ref)
			require.GreaterOrEqual(t, int(lastSeg)+1, tc.wantMinSegs)
			var total int64
			for seq := 1; seq <= int(lastSeg)+1; seq++ {
				fi, err := fsys.Stat(segName(seq))
				require.NoError(t, err)
				total += fi.Size()
			}
			require.Equal(t, total, rd.Size())
			// Read in random order.
			for _, i := range r.Perm(len(metas)) {
				c, err := rd.Chunk(metas[i].Ref)
				require.NoError(t, err, "chunk %d", i)
				requireSameChunk(t, metas[i].Chunk, c)
			}
		})
	}
}

// TestSegmentSecondFileRefs checks that refs of chunks in the second file
// carry segment index 1 and the offset within that file, and that the reader
// takes them from 000002.
func TestSegmentSecondFileRefs(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	metas := genMetas(t, r, 40, 100)
	fsys := vfs.NewMemFS()
	// Room for about half of the chunks in the first file.
	var half int64 = SegmentHeaderSize
	for _, m := range metas[:20] {
		half += recordSize(len(m.Chunk.Bytes()))
	}
	writeSegments(t, r, fsys, testChunksDir, metas, WithMaxSegmentSize(half))

	require.Equal(t, BlockRef(0, SegmentHeaderSize), metas[0].Ref)
	require.Equal(t, BlockRef(1, SegmentHeaderSize), metas[20].Ref)
	second, err := fsys.ReadFile(segName(2))
	require.NoError(t, err)
	rd := openReader(t, fsys)
	for _, m := range metas[20:] {
		seg, off := SplitBlockRef(m.Ref)
		require.Equal(t, uint32(1), seg)
		c, err := rd.Chunk(m.Ref)
		require.NoError(t, err)
		requireSameChunk(t, m.Chunk, c)
		// The same bytes sit at off in 000002.
		n, k := binary.Uvarint(second[off:])
		requireBytes(t, m.Chunk.Bytes(), second[int(off)+k+1:int(off)+k+1+int(n)])
	}
}

func TestSegmentWriterNoChunks(t *testing.T) {
	fsys := vfs.NewMemFS()
	w, err := NewSegmentWriter(fsys, testChunksDir)
	require.NoError(t, err)
	require.NoError(t, w.WriteChunks())
	require.NoError(t, w.Close())
	entries, err := fsys.ReadDir(testChunksDir)
	require.NoError(t, err)
	require.Empty(t, entries)

	rd := openReader(t, fsys)
	require.Zero(t, rd.Size())
	_, err = rd.Chunk(BlockRef(0, SegmentHeaderSize))
	require.ErrorIs(t, err, ErrInvalidRef)
}

func TestSegmentWriterOptions(t *testing.T) {
	for _, tc := range []struct {
		size int64
		ok   bool
	}{
		{-1, false}, {0, false}, {SegmentHeaderSize, false}, {SegmentHeaderSize + 1, true},
		{DefaultMaxSegmentSize, true}, {MaxSegmentSize, true}, {MaxSegmentSize + 1, false},
	} {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			w, err := NewSegmentWriter(fsys, testChunksDir, WithMaxSegmentSize(tc.size))
			if !tc.ok {
				require.ErrorIs(t, err, ErrInvalidOption)
				require.Nil(t, w)
				return
			}
			require.NoError(t, err)
			require.NoError(t, w.WriteChunks(goldenMetas(t)...))
			require.NoError(t, w.Close())
		})
	}
}

func TestSegmentWriterRefusesExistingSegments(t *testing.T) {
	for name, ok := range map[string]bool{"000001": false, "7": false, "000001.tmp": true, "index": true} {
		t.Run(name, func(t *testing.T) {
			fsys := memFSWith(t)
			require.NoError(t, fsys.WriteFile(filepath.Join(testChunksDir, name), []byte("x"), 0o644))
			w, err := NewSegmentWriter(fsys, testChunksDir)
			if !ok {
				require.ErrorIs(t, err, fs.ErrExist)
				return
			}
			require.NoError(t, err)
			require.NoError(t, w.Close())
		})
	}
}

func TestSegmentWriterNilChunk(t *testing.T) {
	fsys := vfs.NewMemFS()
	w, err := NewSegmentWriter(fsys, testChunksDir)
	require.NoError(t, err)
	metas := goldenMetas(t)
	bad := []chunks.Meta{metas[0], {MinTime: 5, MaxTime: 6}, metas[1]}
	require.ErrorIs(t, w.WriteChunks(bad...), ErrNoChunk)
	require.Zero(t, bad[0].Ref, "nothing is written when any chunk is nil")

	// The writer is still usable and writes from the start of a file.
	require.NoError(t, w.WriteChunks(metas...))
	require.NoError(t, w.Close())
	got, err := fsys.ReadFile(segName(1))
	require.NoError(t, err)
	requireBytes(t, goldenBytes(t), got)
}

func TestSegmentWriterClosed(t *testing.T) {
	w, err := NewSegmentWriter(vfs.NewMemFS(), testChunksDir)
	require.NoError(t, err)
	require.NoError(t, w.WriteChunks(goldenMetas(t)...))
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.WriteChunks(goldenMetas(t)...), ErrClosed)
	require.NoError(t, w.Close())
}

// segmentWorkload writes 60 chunks to several files of a chunks directory
// it creates, returning the first error and the metas.
func segmentWorkload(t *testing.T, fsys vfs.FS) ([]chunks.Meta, error) {
	metas := genMetas(t, rand.New(rand.NewPCG(3, 3)), 60, 60)
	w, err := NewSegmentWriter(fsys, testChunksDir, WithMaxSegmentSize(1024))
	if err != nil {
		return metas, err
	}
	for i := 0; i < len(metas); i += 7 {
		if err := w.WriteChunks(metas[i:min(i+7, len(metas))]...); err != nil {
			// Further writes keep failing; Close reports the failure too.
			require.ErrorIs(t, w.WriteChunks(metas[:1]...), err)
			require.ErrorIs(t, w.Close(), err)
			return metas, err
		}
	}
	return metas, w.Close()
}

// TestSegmentWriterIOErrors fails each filesystem operation the writer makes
// in turn and checks that the failure is reported, wrapped, every time.
func TestSegmentWriterIOErrors(t *testing.T) {
	count := vfs.NewMemFS()
	var ops []vfs.Op
	count.SetHook(func(op vfs.Op, _ string) error { ops = append(ops, op); return nil })
	_, err := segmentWorkload(t, count)
	require.NoError(t, err)
	require.Greater(t, len(ops), 10)

	injected := errors.New("injected")
	for k, op := range ops {
		t.Run(fmt.Sprintf("%d_%s", k, op), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			calls := 0
			fsys.SetHook(func(vfs.Op, string) error {
				calls++
				if calls == k+1 {
					return injected
				}
				return nil
			})
			_, err := segmentWorkload(t, fsys)
			require.ErrorIs(t, err, injected)
		})
	}
}

// TestSegmentWriterCrash crashes after every mutating operation of the
// workload. Whatever survives must read back as the right chunks or as
// typed errors; after a successful Close everything must survive.
func TestSegmentWriterCrash(t *testing.T) {
	probe := vfs.NewMemFS()
	metas, err := segmentWorkload(t, probe)
	require.NoError(t, err)
	n := probe.Ops()

	for k := 0; k <= n; k++ {
		fsys := vfs.NewMemFS()
		fsys.CrashAfter(k)
		_, err := segmentWorkload(t, fsys)
		require.NoError(t, err)
		crashed := fsys.CrashState()

		rd, err := NewSegmentReader(crashed, testChunksDir)
		if err != nil {
			require.Less(t, k, n, "crash after Close lost data: %v", err)
			if !errors.Is(err, fs.ErrNotExist) {
				require.ErrorIs(t, err, corrupt.ErrCorrupt, "crash after op %d", k)
			}
			continue
		}
		for i, m := range metas {
			c, err := rd.Chunk(m.Ref)
			if err != nil {
				require.Less(t, k, n, "crash after Close lost chunk %d: %v", i, err)
				if !errors.Is(err, ErrInvalidRef) {
					require.ErrorIs(t, err, corrupt.ErrCorrupt, "crash after op %d, chunk %d", k, i)
				}
				continue
			}
			requireSameChunk(t, m.Chunk, c)
		}
		require.NoError(t, rd.Close())
	}
}

// TestSegmentOS runs a round trip on the real filesystem, where the reader
// maps files read-only: appending to a chunk read back must copy it first.
func TestSegmentOS(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	metas := genMetas(t, r, 500, 120)
	dir := filepath.Join(t.TempDir(), "block", "chunks")
	writeSegments(t, r, vfs.OS(), dir, metas, WithMaxSegmentSize(16<<10))

	rd, err := NewSegmentReader(vfs.OS(), dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, rd.Close()) }()
	lastSeg, _ := SplitBlockRef(metas[len(metas)-1].Ref)
	require.Greater(t, lastSeg, uint32(1))
	for _, m := range metas {
		c, err := rd.Chunk(m.Ref)
		require.NoError(t, err)
		requireSameChunk(t, m.Chunk, c)
	}

	c, err := rd.Chunk(metas[0].Ref)
	require.NoError(t, err)
	want := chunktest.Collect(t, c.Iterator(nil))
	app := mustAppender(t, c)
	app.Append(want[len(want)-1].T+1, 1)
	require.Len(t, chunktest.Collect(t, c.Iterator(nil)), len(want)+1)
	again, err := rd.Chunk(metas[0].Ref)
	require.NoError(t, err)
	requireSameChunk(t, metas[0].Chunk, again)
}
