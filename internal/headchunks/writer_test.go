package headchunks

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		maxSize int64
		files   int // at least
	}{
		{"one file", 40, 0, 1},
		{"many files", 300, 2048, 5},
		{"record per file", 10, 64, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			recs := genRecs(t, r, tc.n, 60)
			fsys := vfs.NewMemFS()
			opts := Options{MaxFileSize: tc.maxSize}
			w, res, err := Open(fsys, testDir, opts, nil)
			require.NoError(t, err)
			require.Equal(t, LoadResult{}, res)

			for i := 0; i < len(recs); i += 13 {
				batch := recs[i:min(i+13, len(recs))]
				if i%26 == 0 {
					// Every other batch has its buffer grown first, as the
					// head does; with small files the batch spans cuts.
					var n int64
					for _, rc := range batch {
						n += RecordSize(len(rc.data))
					}
					w.Grow(n)
					f := w.cur
					require.GreaterOrEqual(t, int64(cap(f.buf)-len(f.buf)), min(n, w.maxSize-f.size))
				}
				addAll(t, w, batch)
				for _, rc := range batch {
					_, err := w.Chunk(rc.ref)
					require.ErrorIs(t, err, ErrNotFlushed)
				}
				require.NoError(t, w.Flush())
				// Every chunk flushed so far, old mappings and new.
				for _, rc := range recs[:i+len(batch)] {
					c, err := w.Chunk(rc.ref)
					require.NoError(t, err)
					require.Equal(t, rc.enc, c.Encoding())
					require.Equal(t, rc.data, c.Bytes())
					requireSameSamples(t, chunkOf(t, rc), c)
					a, err := w.Added(rc.ref, rc.enc, len(rc.data))
					require.NoError(t, err)
					require.Equal(t, rc.enc, a.Encoding())
					require.Equal(t, rc.data, a.Bytes())
					require.Equal(t, cap(a.Bytes()), len(a.Bytes()), "the CRC and later records are out of reach")
					require.True(t, IsMapped(a))
					requireSameSamples(t, chunkOf(t, rc), a)
				}
			}
			require.GreaterOrEqual(t, w.Files(), tc.files)
			files, size := w.Files(), w.Size()
			require.NoError(t, w.Close())

			// References: one file after the other from 000001, each file's
			// records back to back from the header, no file over the limit
			// unless it holds a single record.
			disk := filesIn(t, fsys)
			require.Len(t, disk, files)
			var total int64
			for _, n := range disk {
				total += n
			}
			require.Equal(t, size, total)
			wantSeq, wantOff := uint32(1), uint32(HeaderSize)
			for i, rc := range recs {
				seq, off := SplitRef(rc.ref)
				if seq != wantSeq {
					require.Equal(t, disk[FileName(int(wantSeq))], int64(wantOff), "file %d ends after its last record", wantSeq)
					wantSeq, wantOff = wantSeq+1, HeaderSize
				}
				require.Equal(t, Ref(wantSeq, wantOff), rc.ref, "record %d", i)
				wantOff += uint32(recordSize(len(rc.data)))
				if lim := w.maxSize; int64(wantOff) > lim {
					require.Equal(t, uint32(HeaderSize), off, "only a lone record may pass the limit")
				}
			}

			_, res, got := openAll(t, fsys, opts)
			require.Nil(t, res.Repaired)
			require.Equal(t, LoadResult{Chunks: len(recs), Files: files, Bytes: size}, res)
			requireRecs(t, recs, got)
		})
	}
}

// TestReopenAppendsNewFile checks that a Writer never appends to a file it
// did not start, and that Chunk serves loaded and new records alike.
func TestReopenAppendsNewFile(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	recs := genRecs(t, r, 20, 30)
	fsys := vfs.NewMemFS()
	writeRecs(t, fsys, Options{}, recs[:10])
	before := filesIn(t, fsys)
	require.Len(t, before, 1)

	w, res, got := openAll(t, fsys, Options{})
	requireRecs(t, recs[:10], got)
	require.Equal(t, 1, res.Files)
	addAll(t, w, recs[10:])
	require.Equal(t, Ref(2, HeaderSize), recs[10].ref)
	require.NoError(t, w.Sync())
	for _, rc := range recs {
		c, err := w.Chunk(rc.ref)
		require.NoError(t, err)
		require.Equal(t, rc.data, c.Bytes())
	}
	require.NoError(t, w.Close())
	after := filesIn(t, fsys)
	require.Equal(t, before[FileName(1)], after[FileName(1)])
	reopenClean(t, fsys, Options{}, recs)
}

func TestAddRejects(t *testing.T) {
	good := genRecs(t, rand.New(rand.NewPCG(3, 3)), 1, 10)[0]
	empty := chunks.NewXORChunk()
	for _, tc := range []struct {
		name       string
		series     uint64
		mint, maxt int64
		c          chunks.Chunk
	}{
		{"mint after maxt", 1, 10, 9, chunkOf(t, good)},
		{"end marker", 0, 0, 0, chunkOf(t, good)},
		{"empty chunk", 1, 0, 0, empty},
		{"unknown encoding", 1, 0, 0, badEncChunk{chunkOf(t, good)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			w, _, err := Open(fsys, testDir, Options{}, nil)
			require.NoError(t, err)
			_, err = w.Add(tc.series, tc.mint, tc.maxt, tc.c)
			require.ErrorIs(t, err, ErrInvalidChunk)
			require.Zero(t, w.Files())
			require.NoError(t, w.Close())
			require.Empty(t, filesIn(t, fsys))
		})
	}
	// Series ref 0 is fine when the times are not both zero.
	w, _, err := Open(vfs.NewMemFS(), testDir, Options{}, nil)
	require.NoError(t, err)
	_, err = w.Add(0, 0, 1, chunkOf(t, good))
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

// badEncChunk is a chunk claiming an encoding nothing knows.
type badEncChunk struct{ chunks.Chunk }

func (badEncChunk) Encoding() chunks.Encoding { return 99 }

func TestChunkRefErrors(t *testing.T) {
	recs := genRecs(t, rand.New(rand.NewPCG(4, 4)), 30, 30)
	fsys := vfs.NewMemFS()
	w, _, err := Open(fsys, testDir, Options{MaxFileSize: 1024}, nil)
	require.NoError(t, err)
	addAll(t, w, recs)
	require.NoError(t, w.Flush())
	last := recs[len(recs)-1]
	seq, _ := SplitRef(last.ref)
	size := filesIn(t, fsys)[FileName(int(seq))]
	for _, tc := range []struct {
		name string
		ref  uint64
		want error
	}{
		{"no such file", Ref(seq+1, HeaderSize), ErrInvalidRef},
		{"file 0", Ref(0, HeaderSize), ErrInvalidRef},
		{"in header", Ref(1, 3), ErrInvalidRef},
		{"past end", Ref(seq, uint32(size)), ErrInvalidRef},
		{"inside a record", recs[0].ref + 1, corrupt.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.Chunk(tc.ref)
			require.ErrorIs(t, err, tc.want)
			if tc.want == ErrInvalidRef {
				_, err = w.Added(tc.ref, chunks.EncXOR, 20)
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
	// A record that would run past the last one written.
	_, err = w.Added(last.ref, last.enc, int(size))
	require.ErrorIs(t, err, ErrInvalidRef)
	ref, err := w.Add(7, 1, 2, chunkOf(t, recs[0]))
	require.NoError(t, err)
	_, err = w.Chunk(ref)
	require.ErrorIs(t, err, ErrNotFlushed)
	_, err = w.Added(ref, recs[0].enc, len(recs[0].data))
	require.ErrorIs(t, err, ErrNotFlushed)
	require.NoError(t, w.Close())
}

func TestTruncate(t *testing.T) {
	// Files 1..5 with maxt 100, 300, 200, 400, 500 (one record each).
	maxts := []int64{100, 300, 200, 400, 500}
	for _, tc := range []struct {
		name    string
		mint    int64
		removed int
	}{
		{"nothing older", 100, 0},
		{"first only", 101, 1},
		{"stops at a later file", 250, 1},
		{"prefix", 301, 3},
		{"all but the newest", 450, 4},
		{"all", math.MaxInt64, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			good := genRecs(t, rand.New(rand.NewPCG(5, 5)), 1, 10)[0]
			w, _, err := Open(fsys, testDir, Options{MaxFileSize: HeaderSize + 1}, nil)
			require.NoError(t, err)
			var refs []uint64
			for i, maxt := range maxts {
				ref, err := w.Add(uint64(i+1), maxt-10, maxt, chunkOf(t, good))
				require.NoError(t, err)
				refs = append(refs, ref)
			}
			removed, err := w.Truncate(tc.mint)
			require.NoError(t, err)
			require.Equal(t, tc.removed, removed)
			require.Equal(t, len(maxts)-removed, w.Files())
			disk := filesIn(t, fsys)
			require.Len(t, disk, len(maxts)-removed)
			for i := range maxts {
				_, onDisk := disk[FileName(i+1)]
				require.Equal(t, i >= removed, onDisk, "file %d", i+1)
				_, err := w.Chunk(refs[i])
				if i < removed {
					require.ErrorIs(t, err, ErrInvalidRef)
				} else {
					require.NoError(t, err)
				}
			}
			// The current file was finished: the next record starts file 6.
			ref, err := w.Add(9, 600, 700, chunkOf(t, good))
			require.NoError(t, err)
			require.Equal(t, Ref(6, HeaderSize), ref)
			require.NoError(t, w.Close())
			_, res, got := openAll(t, fsys, Options{})
			require.Nil(t, res.Repaired)
			require.Len(t, got, len(maxts)-removed+1)
		})
	}
}

// TestTruncateFinishesCurrentFile checks that Truncate cuts the current
// file even when it is far from full, and keeps it when it is needed.
func TestTruncateFinishesCurrentFile(t *testing.T) {
	fsys := vfs.NewMemFS()
	recs := genRecs(t, rand.New(rand.NewPCG(6, 6)), 4, 10)
	w, _, err := Open(fsys, testDir, Options{}, nil)
	require.NoError(t, err)
	addAll(t, w, recs[:2])
	removed, err := w.Truncate(math.MinInt64)
	require.NoError(t, err)
	require.Zero(t, removed)
	addAll(t, w, recs[2:])
	require.Equal(t, Ref(2, HeaderSize), recs[2].ref)
	// Nothing to finish: Truncate with an empty current file cuts nothing.
	_, err = w.Truncate(math.MinInt64)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	reopenClean(t, fsys, Options{}, recs)
}

func TestUseAfterClose(t *testing.T) {
	fsys := vfs.NewMemFS()
	recs := genRecs(t, rand.New(rand.NewPCG(7, 7)), 3, 10)
	w, _, err := Open(fsys, testDir, Options{}, nil)
	require.NoError(t, err)
	addAll(t, w, recs)
	require.NoError(t, w.Flush())
	c, err := w.Chunk(recs[0].ref)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "Close is idempotent")

	_, err = w.Add(1, 0, 1, chunkOf(t, recs[0]))
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, w.Flush(), ErrClosed)
	require.ErrorIs(t, w.Sync(), ErrClosed)
	w.Grow(1 << 20) // ignored
	_, err = w.Truncate(0)
	require.ErrorIs(t, err, ErrClosed)
	_, err = w.Chunk(recs[0].ref)
	require.ErrorIs(t, err, ErrClosed)
	// A chunk returned before Close stays valid.
	requireSameSamples(t, chunkOf(t, recs[0]), c)
}

// TestWriteFailureBreaksWriter checks that after a failed write the Writer
// refuses to go on, and the next Open repairs the torn file.
func TestWriteFailureBreaksWriter(t *testing.T) {
	fsys := vfs.NewMemFS()
	recs := genRecs(t, rand.New(rand.NewPCG(8, 8)), 10, 20)
	w, _, err := Open(fsys, testDir, Options{}, nil)
	require.NoError(t, err)
	addAll(t, w, recs[:5])
	require.NoError(t, w.Sync())
	addAll(t, w, recs[5:])
	fsys.SetHook(func(op vfs.Op, _ string) error {
		if op == vfs.OpWrite {
			return errInjected
		}
		return nil
	})
	require.ErrorIs(t, w.Flush(), errInjected)
	fsys.SetHook(nil)
	_, err = w.Add(1, 0, 1, chunkOf(t, recs[0]))
	require.ErrorIs(t, err, errInjected)
	require.ErrorIs(t, w.Sync(), errInjected)
	c, err := w.Chunk(recs[0].ref)
	require.NoError(t, err, "flushed chunks stay readable")
	require.Equal(t, recs[0].data, c.Bytes())
	require.ErrorIs(t, w.Close(), errInjected)
	reopenClean(t, fsys, Options{}, recs[:5])
}

// TestMappedChunkOutlivesFile checks, on the OS filesystem, that a chunk
// read before Truncate removed its file (and before the Writer closed)
// still iterates correctly, through garbage collections.
func TestMappedChunkOutlivesFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chunks_head")
	recs := genRecs(t, rand.New(rand.NewPCG(9, 9)), 40, 100)
	fsys := vfs.OS()
	w, _, err := Open(fsys, dir, Options{MaxFileSize: 2048}, nil)
	require.NoError(t, err)
	addAll(t, w, recs)
	require.NoError(t, w.Flush())
	held := make([]chunks.Chunk, len(recs))
	for i, rc := range recs {
		held[i], err = w.Chunk(rc.ref)
		require.NoError(t, err)
	}
	removed, err := w.Truncate(math.MaxInt64)
	require.NoError(t, err)
	require.Greater(t, removed, 1)
	require.NoError(t, w.Close())
	w = nil
	for range 3 {
		runtime.GC()
	}
	for i, rc := range recs {
		requireSameSamples(t, chunkOf(t, rc), held[i])
		require.Equal(t, rc.data, held[i].Bytes())
	}
	runtime.KeepAlive(held)
}

// TestMappedChunkSize pins the memory a mapped chunk costs: an XOR chunk
// is one object of 32 bytes; a chunk of another encoding a wrapper of 24
// bytes around its inner chunk. Both keep their mapping.
func TestMappedChunkSize(t *testing.T) {
	fsys := vfs.NewMemFS()
	recs := genRecs(t, rand.New(rand.NewPCG(10, 10)), 1, 10)
	writeRecs(t, fsys, Options{}, recs)
	_, _, got := openAll(t, fsys, Options{})
	var xor, other int
	for _, g := range got {
		switch c := g.c.(type) {
		case *mappedXOR:
			xor++
			require.Equal(t, uintptr(32), sizeOf(c))
			require.NotNil(t, c.m)
		case *mappedChunk:
			other++
			require.LessOrEqual(t, sizeOf(c), uintptr(24))
			require.NotEqual(t, chunks.EncXOR, c.Encoding())
			require.NotNil(t, c.m)
		default:
			t.Fatalf("chunk of type %T", g.c)
		}
		require.True(t, IsMapped(g.c))
	}
	require.Positive(t, xor)
	t.Logf("%d XOR chunks (32 bytes each), %d others", xor, other)
}

// TestConcurrentUse runs Add, Flush, Chunk, Size, Files and Truncate from
// several goroutines at once (for the race detector): every chunk read
// back must be the one added at its reference.
func TestConcurrentUse(t *testing.T) {
	recs := genRecs(t, rand.New(rand.NewPCG(19, 19)), 200, 30)
	fsys := vfs.NewMemFS()
	w, _, err := Open(fsys, testDir, Options{MaxFileSize: 4096}, nil)
	require.NoError(t, err)
	refs := make(chan rec, len(recs))
	done := make(chan error, 3)
	go func() { // writer
		for i := range recs {
			ref, err := w.Add(recs[i].series, recs[i].mint, recs[i].maxt, chunkOf(t, recs[i]))
			if err != nil {
				done <- err
				return
			}
			recs[i].ref = ref
			if i%10 == 9 {
				if err := w.Flush(); err != nil {
					done <- err
					return
				}
				for _, rc := range recs[i-9 : i+1] {
					refs <- rc
				}
			}
		}
		close(refs)
		done <- nil
	}()
	go func() { // reader
		for rc := range refs {
			c, err := w.Chunk(rc.ref)
			if err != nil {
				done <- err
				return
			}
			if string(c.Bytes()) != string(rc.data) {
				done <- errInjected
				return
			}
			_, _ = w.Size(), w.Files()
		}
		done <- nil
	}()
	go func() { // truncater: removes nothing still needed (no maxt < MinInt64)
		for range 20 {
			if _, err := w.Truncate(math.MinInt64); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 3 {
		require.NoError(t, <-done)
	}
	require.NoError(t, w.Close())
	reopenClean(t, fsys, Options{}, recs)
}

// TestOpenRefs checks that OpenRefs gives each record's reference, which
// Chunk serves.
func TestOpenRefs(t *testing.T) {
	recs := genRecs(t, rand.New(rand.NewPCG(20, 20)), 30, 30)
	fsys := vfs.NewMemFS()
	writeRecs(t, fsys, Options{MaxFileSize: 1024}, recs)
	var refs []uint64
	w, res, err := OpenRefs(fsys, testDir, Options{}, func(ref, series uint64, mint, maxt int64, c chunks.Chunk) error {
		refs = append(refs, ref)
		return nil
	})
	require.NoError(t, err)
	require.Nil(t, res.Repaired)
	require.Len(t, refs, len(recs))
	for i, rc := range recs {
		require.Equal(t, rc.ref, refs[i])
		c, err := w.Chunk(refs[i])
		require.NoError(t, err)
		require.Equal(t, rc.data, c.Bytes())
	}
	require.NoError(t, w.Close())
}
