package tsdb

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/headchunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// headChunkCounts returns the closed chunks of the head that are mapped
// and those still in the heap (the open chunks not counted).
func headChunkCounts(db *DB) (mapped, heap int) {
	db.head.series.refs.each(func(s *memSeries) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := 0; i < len(s.chunks)-1; i++ {
			if headchunks.IsMapped(s.chunks[i].chunk) {
				mapped++
			} else {
				heap++
			}
		}
	})
	return mapped, heap
}

// headChunkFiles returns the head chunk files of the DB in fsys at dir.
func headChunkFiles(t *testing.T, fsys *vfs.MemFS, dir string) []string {
	t.Helper()
	ents, err := fsys.ReadDir(path.Join(dir, headChunksDir))
	require.NoError(t, err)
	var files []string
	for _, e := range ents {
		files = append(files, path.Join(dir, headChunksDir, e.Name()))
	}
	return files
}

// TestHeadChunksMapped: Compact and Close move every closed chunk into
// chunks_head/; Open gives them back mapped, replays only what they do
// not hold, and reads return exactly what was written, late samples in
// the mapped chunks' ranges included.
func TestHeadChunksMapped(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	o.OutOfOrderTimeWindow = 6 * time.Hour
	o.MinBlockDuration = 24 * time.Hour // no block: every chunk stays in the head
	o.MaxBlockDuration = 24 * time.Hour
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	const series, n = 20, 1000 // about 8 chunks each
	want := map[string][]sample{}
	lsets := make([]labels.Labels, series)
	for i := range lsets {
		lsets[i] = labels.FromStrings(labels.MetricName, "m", "i", fmt.Sprint(i))
	}
	for k := 0; k < n; k++ {
		app := db.Appender(ctx)
		for i, l := range lsets {
			ts := int64(k)*15000 + 2 // never on a late sample's time
			_, err := app.Append(0, l, ts, float64(k*series+i))
			require.NoError(t, err)
			want[l.String()] = append(want[l.String()], sample{T: ts, V: float64(k*series + i)})
		}
		require.NoError(t, app.Commit())
		if k == n/2 {
			require.NoError(t, db.Compact(ctx))
			mapped, heap := headChunkCounts(db)
			require.Positive(t, mapped)
			require.Zero(t, heap, "closed chunks left in the heap after Compact")
		}
	}
	// Late samples inside the ranges of chunks mapped already, the
	// newest two included (whose sample times late appends index).
	require.NoError(t, db.Compact(ctx))
	rng := rand.New(rand.NewPCG(1, 2))
	app := db.Appender(ctx)
	for j := 0; j < 400; j++ {
		i := rng.IntN(series)
		ts := int64(rng.IntN(n/2))*15000 + 7
		if j%2 == 1 {
			ts = int64(n-250+rng.IntN(250))*15000 + 7
		}
		l := lsets[i]
		if slices.ContainsFunc(want[l.String()], func(s sample) bool { return s.T == ts }) {
			continue
		}
		_, err := app.Append(0, l, ts, -float64(j))
		require.NoError(t, err)
		want[l.String()] = append(want[l.String()], sample{T: ts, V: -float64(j)})
	}
	require.NoError(t, app.Commit())
	for _, s := range want {
		slices.SortFunc(s, func(a, b sample) int { return cmpInt64(a.T, b.T) })
	}
	require.Equal(t, want, allSamples(t, db))
	require.NoError(t, db.Close())
	require.NotEmpty(t, headChunkFiles(t, fsys, "data"))

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	mapped, heap := headChunkCounts(db)
	require.Zero(t, heap, "closed chunks rebuilt from the WAL though they were mapped")
	require.GreaterOrEqual(t, mapped, series*(n/120-1))
	require.Equal(t, want, allSamples(t, db))
	require.Positive(t, countLate(want))

	// Late appends meet the mapped chunks: a sample already there is a
	// duplicate (another value) or nothing (the same one).
	l := lsets[3]
	for _, k := range []int{5, n - 130, n - 5} { // an old chunk, the newest mapped one, the open one
		ts := int64(k)*15000 + 2
		app := db.Appender(ctx)
		_, err := app.Append(0, l, ts, -1)
		require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "sample %d", k)
		require.NoError(t, app.Rollback())
		app = db.Appender(ctx)
		_, err = app.Append(0, l, ts, float64(k*series+3))
		require.NoError(t, err, "sample %d again", k)
		require.NoError(t, app.Commit())
	}
	require.Equal(t, want, allSamples(t, db))
}

// countLate counts the samples with negative values (the late ones).
func countLate(m map[string][]sample) int {
	n := 0
	for _, s := range m {
		for _, x := range s {
			if x.V < 0 {
				n++
			}
		}
	}
	return n
}

// TestHeadChunksDamaged: whatever happens to the head chunk files (cut
// anywhere, bytes flipped, a file lost, garbage added), Open succeeds and
// every transaction is there, whole: the WAL replays what the files no
// longer hold.
func TestHeadChunksDamaged(t *testing.T) {
	const txns = 1000
	w := newCrashWorkload(11, txns)
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, w.options(fsys))
	require.NoError(t, err)
	for k := 1; k <= txns; k++ {
		require.NoError(t, w.commit(db, k))
		if k%100 == 0 {
			require.NoError(t, db.Compact(ctx))
		}
	}
	require.NoError(t, db.Close())
	files := headChunkFiles(t, fsys, "data")
	require.NotEmpty(t, files)

	// Undamaged, the chunks come back mapped.
	db, err = Open("data", nil, nil, w.options(fsys.Crash()))
	require.NoError(t, err)
	mapped, _ := headChunkCounts(db)
	require.Positive(t, mapped)
	require.NoError(t, db.Close())

	verify := func(what string, mutate func(fs2 *vfs.MemFS)) {
		t.Helper()
		fs2 := fsys.Crash() // a copy
		mutate(fs2)
		fs2.SyncAll()
		present := w.check(t, fs2, what)
		for k := 1; k <= txns; k++ {
			require.True(t, present[k], "after %s: transaction %d missing", what, k)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	cuts, flips := 60, 60
	if raceEnabled {
		cuts, flips = 8, 8
	}
	for i := 0; i < cuts; i++ {
		f := files[rng.IntN(len(files))]
		b, err := fsys.ReadFile(f)
		require.NoError(t, err)
		off := rng.IntN(len(b) + 1)
		verify(fmt.Sprintf("%s cut at %d", f, off), func(fs2 *vfs.MemFS) {
			require.NoError(t, fs2.WriteFile(f, b[:off], 0o666))
		})
	}
	for i := 0; i < flips; i++ {
		f := files[rng.IntN(len(files))]
		b, err := fsys.ReadFile(f)
		require.NoError(t, err)
		off := rng.IntN(len(b))
		bit := byte(1) << rng.IntN(8)
		verify(fmt.Sprintf("%s bit flipped at %d", f, off), func(fs2 *vfs.MemFS) {
			c := slices.Clone(b)
			c[off] ^= bit
			require.NoError(t, fs2.WriteFile(f, c, 0o666))
		})
	}
	verify("first file removed", func(fs2 *vfs.MemFS) { require.NoError(t, fs2.Remove(files[0])) })
	verify("garbage file", func(fs2 *vfs.MemFS) {
		require.NoError(t, fs2.WriteFile(path.Join("data", headChunksDir, headchunks.FileName(999)), []byte("garbage"), 0o666))
	})
	verify("directory removed", func(fs2 *vfs.MemFS) { require.NoError(t, fs2.RemoveAll(path.Join("data", headChunksDir))) })
}

// TestHeadChunksNeverAheadOfWAL: a crash that keeps the head chunk files
// whole but loses the WAL's unsynced tail must not bring back part of a
// commit: the WAL is synced before chunks are written.
func TestHeadChunksNeverAheadOfWAL(t *testing.T) {
	const txns = 1000
	w := newCrashWorkload(13, txns)
	fsys := vfs.NewMemFS()
	o := w.options(fsys)
	o.WALSyncEveryCommit = false // and one segment: nothing syncs the WAL but the mapping
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	db.head.onCommit = nil // no background compaction
	for k := 1; k <= txns; k++ {
		require.NoError(t, w.commit(db, k))
	}
	require.NoError(t, db.Compact(ctx))
	require.Positive(t, counterValue(t, db.head.metrics.chunksMapped))
	require.NoError(t, db.head.headChunks.Sync()) // the files survive whole
	present := w.check(t, fsys.Crash(), "crash after mapping")
	for k := 1; k <= txns; k++ {
		require.True(t, present[k], "transaction %d, logged before the mapping, lost", k)
	}
	require.NoError(t, db.Close())
}

// TestMappedReplaySlots: the replay finds each series' mapped chunks
// whether their refs are dense (a slice) or far apart (a map), and only
// those.
func TestMappedReplaySlots(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refs   []uint64
		sparse bool
	}{
		{"dense", []uint64{3, 4, 9, 500}, false},
		{"sparse", []uint64{3, 5_000_000, 9_000_000}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			w, _, err := headchunks.Open(fsys, "data/"+headChunksDir, headchunks.Options{}, func(uint64, int64, int64, chunks.Chunk) error { return nil })
			require.NoError(t, err)
			for _, ref := range tc.refs {
				for k := int64(0); k < 2; k++ {
					c := chunks.NewXORChunk()
					app, err := c.XORAppender()
					require.NoError(t, err)
					for j := int64(0); j < 10; j++ {
						app.Append(k*1000+j, float64(j))
					}
					_, err = w.Add(ref, k*1000, k*1000+9, c)
					require.NoError(t, err)
				}
			}
			require.NoError(t, w.Close())
			h := newHead(slog.New(slog.DiscardHandler), nil, headOptions{chunkRange: 7200_000, samplesPerChunk: 120, stripeSize: 16})
			w, mr, _, err := loadHeadChunks(fsys, "data", math.MinInt64, h)
			require.NoError(t, err)
			defer w.Close()
			require.Equal(t, tc.sparse, mr.sparse != nil)
			require.Equal(t, tc.refs[len(tc.refs)-1], h.lastSeriesRef.Load())
			for _, ref := range tc.refs {
				s := newMemSeries(SeriesRef(ref), labels.FromStrings("r", fmt.Sprint(ref)))
				mr.attach(h, s)
				require.Len(t, s.chunks, 2, "ref %d", ref)
				require.Equal(t, uint64(20), s.total)
				require.True(t, mr.inMapped(s, 5))
				require.True(t, mr.inMapped(s, 1009))
				require.False(t, mr.inMapped(s, 1010), "after the last mapped chunk")
				require.False(t, mr.inMapped(s, 7), "not after an earlier WAL sample: the late path decides")
			}
			for _, ref := range []uint64{1, 5, 4_999_999, 9_000_001} {
				s := newMemSeries(SeriesRef(ref), labels.FromStrings("r", fmt.Sprint(ref)))
				mr.attach(h, s)
				require.Empty(t, s.chunks, "ref %d has no chunks", ref)
				require.False(t, mr.inMapped(s, 5))
			}
		})
	}
}

// TestHeadChunksMixedSeries: a series whose chunks alternate floats and
// histograms (only XOR chunks are mapped, and only as a prefix of the
// series' chunks) reads back whole after Compact, Close and Open.
func TestHeadChunksMixedSeries(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	o.MinBlockDuration = 24 * time.Hour
	o.MaxBlockDuration = 24 * time.Hour
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	l := labels.FromStrings(labels.MetricName, "mixed")
	const n = 1000
	for k := 0; k < n; k++ {
		app := db.Appender(ctx)
		if (k/150)%2 == 0 {
			_, err = app.Append(0, l, int64(k)*15000, float64(k))
		} else {
			_, err = app.AppendHistogram(0, l, int64(k)*15000, crashHistogram(k), nil)
		}
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		if k%100 == 99 {
			require.NoError(t, db.Compact(ctx))
		}
	}
	read := func(db *DB) []string {
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		defer q.Close()
		ss := q.Select(ctx)
		var out []string
		for ss.Next() {
			it := ss.At().Iterator(nil)
			for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
				switch vt {
				case chunks.ValFloat:
					ts, v := it.At()
					out = append(out, fmt.Sprintf("%d F %g", ts, v))
				default:
					ts, h := it.AtHistogram(nil)
					out = append(out, fmt.Sprintf("%d H %d", ts, h.Count))
				}
			}
			require.NoError(t, it.Err())
		}
		require.NoError(t, ss.Err())
		return out
	}
	want := read(db)
	require.Len(t, want, n)
	require.Positive(t, counterValue(t, db.head.metrics.chunksMapped))
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, want, read(db))
}
