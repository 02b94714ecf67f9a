package tsdb

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

func TestRangeEnd(t *testing.T) {
	for _, tc := range []struct{ t, r, want int64 }{
		{0, 10, 10},
		{9, 10, 10},
		{10, 10, 20},
		{-1, 10, 0},
		{-10, 10, 0},
		{-11, 10, -10},
		{7_200_000 - 1, 7_200_000, 7_200_000},
	} {
		got := rangeEnd(tc.t, tc.r)
		require.Equal(t, tc.want, got, "rangeEnd(%d, %d)", tc.t, tc.r)
		require.True(t, tc.t < got && tc.t >= got-tc.r, "t inside [end-r, end)")
	}
}

func TestBlockRanges(t *testing.T) {
	h := time.Hour.Milliseconds()
	require.Equal(t, []int64{2 * h, 6 * h, 18 * h, 54 * h}, blockRanges(2*h, 100*h))
	require.Equal(t, []int64{2 * h}, blockRanges(2*h, 2*h))
}

func TestPlanCompaction(t *testing.T) {
	h := time.Hour.Milliseconds()
	ranges := blockRanges(2*h, 54*h)
	blk := func(mint, maxt int64) BlockMeta {
		return BlockMeta{ULID: newULID(), MinTime: mint * h, MaxTime: maxt * h}
	}
	bad := func(mint, maxt int64) BlockMeta {
		m := blk(mint, maxt)
		m.Compaction.Failed = true
		return m
	}
	for _, tc := range []struct {
		name   string
		blocks []BlockMeta
		want   []int // indexes into blocks, nil for no plan
	}{
		{"nothing", nil, nil},
		{"one", []BlockMeta{blk(0, 2)}, nil},
		{"incomplete 6h range", []BlockMeta{blk(0, 2), blk(2, 4)}, nil},
		{"complete 6h range", []BlockMeta{blk(0, 2), blk(2, 4), blk(4, 6)}, []int{0, 1, 2}},
		{"later data completes the range", []BlockMeta{blk(0, 2), blk(2, 4), blk(6, 8)}, []int{0, 1}},
		{"overlap first", []BlockMeta{blk(0, 2), blk(1, 3), blk(6, 8)}, []int{0, 1}},
		{"18h of 6h blocks", []BlockMeta{blk(0, 6), blk(6, 12), blk(12, 18), blk(18, 20)}, []int{0, 1, 2}},
		// Failed blocks are left out; the others of their range compact
		// in runs that do not span a failed block.
		{"failed first", []BlockMeta{bad(0, 2), blk(2, 4), blk(4, 6)}, []int{1, 2}},
		{"failed last", []BlockMeta{blk(0, 2), blk(2, 4), bad(4, 6)}, []int{0, 1}},
		{"failed in the middle", []BlockMeta{blk(0, 2), bad(2, 4), blk(4, 6), blk(6, 8)}, nil},
		{"failed in the middle, runs of two", []BlockMeta{blk(0, 6), bad(6, 8), blk(8, 10), blk(10, 12), blk(12, 18), blk(18, 20)}, []int{2, 3}},
		{"only failed", []BlockMeta{bad(0, 2), bad(2, 4), bad(4, 6)}, nil},
		{"failed overlapping", []BlockMeta{blk(0, 2), bad(1, 3), blk(6, 8)}, nil},
		{"overlap among the others", []BlockMeta{blk(0, 2), bad(0, 3), blk(1, 3), blk(6, 8)}, []int{0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planCompaction(append([]BlockMeta(nil), tc.blocks...), ranges)
			if tc.want == nil {
				require.Nil(t, got)
				return
			}
			var want []BlockMeta
			for _, i := range tc.want {
				want = append(want, tc.blocks[i])
			}
			require.Equal(t, want, got)
		})
	}
}

// scrape8h ingests n series with 15 s samples over the given hours.
func scrapeHours(t testing.TB, db *DB, lsets []labels.Labels, hours int) {
	t.Helper()
	ingestScrapes(t, db, lsets, hours*3600/15)
}

// TestCompactionRoundTrip: 20kseries (a
// sample of it under -race) with 15 s samples across 8 hours: blocks are
// cut and compacted to 6h, and queries over the whole range return every
// sample exactly, compared with a DB that keeps everything in its head,
// both while the DB is open and after Close/Open.
func TestCompactionRoundTrip(t *testing.T) {
	n := 20000
	if raceEnabled {
		n = 1000
	}
	lsets := loadSeries(t, n)
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	scrapeHours(t, db, lsets, 8)
	require.NoError(t, db.Compact(ctx))

	mo := DefaultOptions()
	mo.FS, mo.NoWAL, mo.MinBlockDuration = vfs.NewMemFS(), true, 100*time.Hour
	model, err := Open("model", nil, nil, mo)
	require.NoError(t, err)
	defer model.Close()
	scrapeHours(t, model, lsets, 8)

	blocks := db.Blocks()
	require.NotEmpty(t, blocks)
	var levels []int
	for _, b := range blocks {
		levels = append(levels, b.Compaction.Level)
	}
	var bytes int64
	var samples uint64
	for i, sz := range db.blockSizes() {
		bytes += sz
		samples += blocks[i].Stats.NumSamples
	}
	t.Logf("blocks: %d, levels %v, head series %d; blocks hold %d samples in %d bytes: %.2f bytes/sample",
		len(blocks), levels, db.Head().NumSeries(), samples, bytes, float64(bytes)/float64(samples))
	require.Equal(t, int64(0), blocks[0].MinTime)
	require.Equal(t, 6*time.Hour.Milliseconds(), blocks[0].MaxTime-blocks[0].MinTime, "first 6h compacted")
	require.Equal(t, 2, blocks[0].Compaction.Level)
	require.Equal(t, n*8*240, requireSameData(t, model, db))
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, blocks, db.Blocks())
	require.Equal(t, n*8*240, requireSameData(t, model, db))
}

// TestIsolationThroughCompaction: writers
// commit whole scrapes while compaction and head truncation run over and
// over and readers query: no reader sees part of a scrape, and a querier's
// results never change between two reads over its lifetime.
func TestIsolationThroughCompaction(t *testing.T) {
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	o.MinBlockDuration = 10 * time.Minute // a block every 40 scrapes
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()

	const targets, perTarget = 4, 50
	var (
		stop, failed atomic.Bool
		wg           sync.WaitGroup
		round        atomic.Int64
		progress     [targets]atomic.Int64 // rounds done per writer
		problems     = make(chan string, 100)
	)
	// minProgress keeps the writers within a few scrapes of each other, as
	// scrapes of one server are: the head takes samples only half a block
	// range behind its newest.
	minProgress := func() int64 {
		m := progress[0].Load()
		for i := range progress {
			m = min(m, progress[i].Load())
		}
		return m
	}
	report := func(format string, args ...any) {
		failed.Store(true)
		select {
		case problems <- fmt.Sprintf(format, args...):
		default:
		}
	}
	// Writers: one per target, one commit per scrape, value = scrape time.
	for tg := 0; tg < targets; tg++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lsets := make([]labels.Labels, perTarget)
			for i := range lsets {
				lsets[i] = labels.FromStrings(labels.MetricName, "iso", "target", fmt.Sprint(tg), "i", fmt.Sprint(i))
			}
			for r := int64(0); !stop.Load(); r++ {
				for r > minProgress()+5 && !stop.Load() {
					time.Sleep(100 * time.Microsecond)
				}
				ts := r * 15000
				app := db.Appender(ctx)
				for _, l := range lsets {
					if _, err := app.Append(0, l, ts, float64(ts)); err != nil {
						report("append: %v", err)
						return
					}
				}
				if err := app.Commit(); err != nil {
					report("commit: %v", err)
					return
				}
				progress[tg].Store(r + 1)
				if tg == 0 {
					round.Store(r)
				}
				time.Sleep(time.Millisecond) // a scrape interval, compressed
			}
		}()
	}
	// Compaction, continuously.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := db.Compact(ctx); err != nil {
				report("compact: %v", err)
				return
			}
		}
	}()
	// Readers: each scrape whole, and the same answer twice.
	var reads atomic.Int64
	for rd := 0; rd < 2; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				// The last half hour: a few blocks and the head.
				q, err := db.Querier(round.Load()*15000-30*60*1000, math.MaxInt64)
				if err != nil {
					report("querier: %v", err)
					return
				}
				first := snapshotCounts(t, q)
				for key, n := range first {
					if n != perTarget {
						report("target/time %s has %d of %d samples", key, n, perTarget)
					}
				}
				time.Sleep(time.Millisecond) // let compaction and commits run
				if second := snapshotCounts(t, q); fmt.Sprint(second) != fmt.Sprint(first) {
					report("querier result changed over its lifetime")
				}
				if err := q.Close(); err != nil {
					report("querier close: %v", err)
					return
				}
				reads.Add(1)
			}
		}()
	}
	for !failed.Load() && (round.Load() < 200 || reads.Load() < 100 || len(db.Blocks()) < 3) {
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(problems)
	for p := range problems {
		assert.Fail(t, p) // report every problem
	}
	t.Logf("%d scrapes per target, %d reads, %d blocks", round.Load(), reads.Load(), len(db.Blocks()))
}

// snapshotCounts counts a querier's samples per target and timestamp. It
// runs in the readers' goroutines, so it reports failures without stopping.
func snapshotCounts(t *testing.T, q Querier) map[string]int {
	counts := map[string]int{}
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "iso"))
	for ss.Next() {
		tg := ss.At().Labels().Get("target")
		it := ss.At().Iterator(nil)
		for it.Next() != chunks.ValNone {
			ts, v := it.At()
			if float64(ts) != v {
				t.Errorf("sample (%d, %g)", ts, v)
			}
			counts[fmt.Sprintf("%s/%d", tg, ts)]++
		}
		assert.NoError(t, it.Err())
	}
	assert.NoError(t, ss.Err())
	return counts
}

// TestRetention: retention by time and by
// size, applied by the background loop (woken by commits and by its timer)
// in a synctest bubble: fake time, no sleeps in real time.
func TestRetention(t *testing.T) {
	lsets := loadSeries(t, 50)
	for _, tc := range []struct {
		name string
		set  func(*Options)
		want func(t *testing.T, blocks []BlockMeta, headMint int64)
	}{
		{"time", func(o *Options) { o.RetentionDuration = 12 * time.Hour }, func(t *testing.T, blocks []BlockMeta, _ int64) {
			require.NotEmpty(t, blocks)
			newest := blocks[len(blocks)-1].MaxTime
			for _, b := range blocks {
				require.Greater(t, b.MaxTime, newest-12*time.Hour.Milliseconds(), "block older than retention kept")
			}
			require.Less(t, blocks[0].MinTime, newest-10*time.Hour.Milliseconds(), "blocks inside retention kept")
		}},
		{"size", func(o *Options) { o.MaxBytes = 1 }, func(t *testing.T, blocks []BlockMeta, _ int64) {
			require.Empty(t, blocks, "every block goes when nothing fits")
		}},
		// KeepBlock keeps what it is asked to (odd hours here, as a
		// shipper keeps unshipped blocks) and nothing else.
		{"kept", func(o *Options) {
			o.MaxBytes = 1
			o.KeepBlock = func(m BlockMeta) bool { return m.MinTime/time.Hour.Milliseconds()%4 == 2 }
		}, func(t *testing.T, blocks []BlockMeta, _ int64) {
			require.NotEmpty(t, blocks)
			for _, b := range blocks {
				require.EqualValues(t, 2, b.MinTime/time.Hour.Milliseconds()%4, "block %d-%d kept", b.MinTime, b.MaxTime)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := DefaultOptions()
				o.FS = vfs.NewMemFS()
				o.MaxBlockDuration = 2 * time.Hour // no level compaction: many small blocks
				tc.set(o)
				reg := prometheus.NewRegistry()
				db, err := Open("data", nil, reg, o)
				require.NoError(t, err)
				defer db.Close()
				scrapeHours(t, db, lsets, 30)
				time.Sleep(compactInterval + time.Second) // the timer fires
				synctest.Wait()
				require.GreaterOrEqual(t, gauge(t, reg, "tsdb_compactions_total"), 13.0, "blocks were cut")
				require.Positive(t, gauge(t, reg, "tsdb_retention_deletions_total"))
				tc.want(t, db.Blocks(), db.headMint)
			})
		})
	}
}

// headChunks counts the head's chunks and their time range.
func headChunks(h *head) (n int, mint int64) {
	mint = math.MaxInt64
	h.series.refs.each(func(s *memSeries) {
		s.mu.Lock()
		n += len(s.chunks)
		if len(s.chunks) > 0 {
			mint = min(mint, s.chunks[0].minTime)
		}
		s.mu.Unlock()
	})
	return n, mint
}

// TestHeadBoundedByWindow: over 24 hours of
// scrapes, compacting as the background loop would, the head never holds
// more than its window (1.5 block ranges plus the chunk being written),
// however much data has gone by. The heap before and after each truncation
// is logged for the record.
func TestHeadBoundedByWindow(t *testing.T) {
	n := 1000
	if raceEnabled {
		n = 200
	}
	lsets := loadSeries(t, n)
	// The real filesystem: blocks are mapped, not on the heap, so the heap
	// is the head's (plus the test's own series list).
	db, err := Open(t.TempDir(), nil, nil, nil)
	require.NoError(t, err)
	defer db.Close()
	refs := make([]SeriesRef, n)
	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	const perBlock = 2 * 3600 / 15 // rounds per 2h
	maxChunks := 0
	for r := 0; r < 24*3600/15; r++ {
		app := db.Appender(ctx)
		for i, l := range lsets {
			ref, err := app.Append(refs[i], l, int64(r)*15000, scrapeValue(i, r))
			require.NoError(t, err)
			refs[i] = ref
		}
		require.NoError(t, app.Commit())
		if r%perBlock == perBlock-1 {
			before := heap()
			require.NoError(t, db.Compact(ctx))
			chunks, mint := headChunks(db.head)
			maxChunks = max(maxChunks, chunks)
			t.Logf("after %2dh: heap %6.1f MiB before compaction, %6.1f MiB after; head: %d chunks from %dh",
				(r+1)/240, float64(before)/(1<<20), float64(heap())/(1<<20), chunks, mint/3600_000)
			// The head keeps at most two block ranges after compaction
			// (the newest full range plus the one being filled); a chunk
			// holds 120 samples = 30 min.
			require.LessOrEqual(t, int64(r+1)*15000-mint, 2*2*time.Hour.Milliseconds())
			require.LessOrEqual(t, chunks, n*2*4+n, "chunks in the head")
		}
	}
	require.Positive(t, maxChunks)
	require.GreaterOrEqual(t, len(db.Blocks()), 3)
}

// TestBlockChunksCopiesHeadChunks checks the head-compaction fast path: a
// series whose chunks in the block range are all closed and hide nothing
// goes into the block with its own chunks (the same objects, not
// re-encoded); a series with deleted samples is re-encoded from the
// samples the read sees.
func TestBlockChunksCopiesHeadChunks(t *testing.T) {
	db, _ := openTestDB(t, nil)
	h := db.head
	const hour = int64(3600 * 1000)
	plain, deleted := labels.FromStrings("__name__", "plain"), labels.FromStrings("__name__", "deleted")
	for ts := int64(0); ts < 5*hour/2; ts += 15000 {
		app := db.Appender(ctx)
		for _, l := range []labels.Labels{plain, deleted} {
			_, err := app.Append(0, l, ts, float64(ts/15000))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Delete(ctx, hour, hour+60000, labels.MustNewMatcher(labels.MatchEqual, "__name__", "deleted")))

	meta := BlockMeta{MinTime: 0, MaxTime: 2 * hour}
	blockFor := func(snap *readSnapshot, l labels.Labels) ([]chunks.Meta, uint64) {
		m := meta
		ss := h.selectSeries(ctx, nil, snap, h.tombstones(), m.MinTime, m.MaxTime-1, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", l.Get("__name__"))})
		require.True(t, ss.Next())
		batch, _, err := blockChunks(ss.At(), &m, h.samplesPerChunk, nil, nil)
		require.NoError(t, err)
		require.False(t, ss.Next())
		return batch, m.Stats.NumSamples
	}
	const inRange = 2 * hour / 15000

	batch, n := blockFor(nil, plain)
	require.Equal(t, uint64(inRange), n)
	s := h.series.getByHash(plain.Hash(), plain)
	require.NotEmpty(t, batch)
	for i, c := range batch {
		require.Same(t, s.chunks[i].chunk, c.Chunk, "chunk %d handed over as it is", i)
		require.Equal(t, s.chunks[i].minTime, c.MinTime)
		require.Equal(t, s.chunks[i].maxTime, c.MaxTime)
	}

	batch, n = blockFor(nil, deleted)
	require.Equal(t, uint64(inRange-5), n, "the 5 deleted samples are left out")
	sd := h.series.getByHash(deleted.Hash(), deleted)
	for i, c := range batch {
		require.NotSame(t, sd.chunks[i].chunk, c.Chunk, "re-encoded")
	}

}
