package tsdb

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/headchunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestLateOpenChunkIndex checks the duplicate check of late samples
// against the open in-order chunk, which a series with late samples makes
// through lateSeries.openTimes (chunks.XORTimes) instead of decoding the
// chunk: randomized against a model, late samples at free times (stored),
// at the time of an in-order or late sample with its value (a no-op) and
// with another value (ErrDuplicateSampleForTimestamp), both when Append
// sees a sample late and when it becomes late only at Commit (after a
// newer sample of the same commit), across chunk cuts. The seed is in the
// failure messages.
func TestLateOpenChunkIndex(t *testing.T) {
	const seed = 20261206
	rng := rand.New(rand.NewPCG(seed, 15))
	db, err := Open("data", nil, nil, lateOpts(vfs.NewMemFS(), time.Hour))
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	lset := labels.FromStrings("__name__", "idx")
	model := map[int64]float64{} // every sample stored
	var times []int64            // their times, ascending
	store := func(ts int64, v float64) {
		model[ts] = v
		i, _ := slices.BinarySearch(times, ts)
		times = slices.Insert(times, i, ts)
	}
	// late picks a time within the window before newest: free, or taken.
	late := func(newest int64) (int64, bool) {
		if rng.IntN(3) == 0 {
			lo, _ := slices.BinarySearch(times, newest-30*60_000)
			if lo < len(times) {
				return times[lo+rng.IntN(len(times)-lo)], true
			}
		}
		ts := newest - 1 - rng.Int64N(30*60_000)
		_, taken := model[ts]
		return ts, taken
	}
	var newest int64
	checked := 0
	for round := range 2000 {
		app := db.Appender(context.Background())
		newest += 1000 + rng.Int64N(20_000) // irregular, so the index sees every kind of delta
		v := float64(round)
		_, err := app.Append(0, lset, newest, v)
		require.NoError(t, err)
		store(newest, v)
		for range rng.IntN(3) {
			ts, taken := late(newest)
			lv := float64(-ts)
			if taken && rng.IntN(2) == 0 {
				lv = model[ts] // the same sample again
			}
			_, err := app.Append(0, lset, ts, lv)
			switch {
			case !taken:
				require.NoError(t, err, "free time %d (seed %d)", ts, seed)
				store(ts, lv)
			case lv == model[ts]:
				require.NoError(t, err, "same sample at %d (seed %d)", ts, seed)
			default:
				require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "taken time %d (seed %d)", ts, seed)
			}
			checked++
		}
		require.NoError(t, app.Commit())
		if round%5 == 0 {
			// Late only at Commit: after a newer sample of its commit,
			// and after the series' newest when appended. Half the time
			// another commit writes a sample at its time first, in order,
			// with the same value or another: Commit finds it in the open
			// chunk and drops the late one (a no-op or a duplicate).
			app := db.Appender(context.Background())
			ts := newest + 1 + rng.Int64N(14_999)
			newest += 15_000
			_, err := app.Append(0, lset, newest, 1)
			require.NoError(t, err)
			lv := float64(-ts)
			_, err = app.Append(0, lset, ts, lv)
			require.NoError(t, err)
			if rng.IntN(2) == 0 {
				v := lv
				if rng.IntN(2) == 0 {
					v = lv - 1
				}
				other := db.Appender(context.Background())
				_, err := other.Append(0, lset, ts, v)
				require.NoError(t, err)
				require.NoError(t, other.Commit())
				store(ts, v)
			} else {
				store(ts, lv)
			}
			require.NoError(t, app.Commit())
			store(newest, 1)
		}
	}
	require.Greater(t, checked, 1000)
	s := db.head.series.getByHash(lset.Hash(), lset)
	s.mu.Lock()
	_, xor := s.chunks[len(s.chunks)-1].chunk.(*chunks.XORChunk)
	hasLate := s.hasLateLocked()
	s.mu.Unlock()
	require.True(t, xor && hasLate, "the open chunk is looked up through openTimes")
	want := make([]sample, 0, len(times))
	for _, ts := range times {
		want = append(want, sample{ts, model[ts]})
	}
	requireSameSamples(t, map[string][]sample{lset.String(): want}, fullRead(t, db))
	require.NoError(t, db.head.checkInvariants(false))
}

// TestLateTimesSlots checks timesLocked: the newest two in-order chunks
// get an index each, which lookups alternating between them keep, and
// after a cut the new open chunk takes the index of the chunk that left
// the newest two.
func TestLateTimesSlots(t *testing.T) {
	db, err := Open("data", nil, nil, lateOpts(vfs.NewMemFS(), time.Hour))
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	lset := labels.FromStrings("__name__", "slots")
	ts := int64(0)
	appendN := func(n int) {
		app := db.Appender(context.Background())
		for range n {
			ts += 15_000
			_, err := app.Append(0, lset, ts, float64(ts))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	appendN(250) // three chunks: 120, 120, 10
	app := db.Appender(context.Background())
	_, err = app.Append(0, lset, ts-7_500, 1) // late: the series gets its lateSeries
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	s := db.head.series.getByHash(lset.Hash(), lset)
	xor := func(i int) *chunks.XORChunk { return s.chunks[i].chunk.(*chunks.XORChunk) }
	look := func(c *chunks.XORChunk) *chunks.XORTimes {
		x := s.timesLocked(c)
		_, _, ok := x.Index(c, ts)
		require.True(t, ok)
		return x
	}
	// locked runs f under the series lock, which a failed assertion
	// releases too (Close would wait for it).
	locked := func(f func()) {
		s.mu.Lock()
		defer s.mu.Unlock()
		f()
	}
	var open, prev *chunks.XORTimes
	locked(func() {
		require.Len(t, s.chunks, 3)
		open, prev = look(xor(2)), look(xor(1))
		require.NotSame(t, open, prev)
		for range 3 {
			require.Same(t, open, look(xor(2)))
			require.Same(t, prev, look(xor(1)))
		}
	})

	appendN(115) // a fourth chunk: the third is the previous one now
	locked(func() {
		require.Len(t, s.chunks, 4)
		require.Same(t, open, look(xor(2)), "the previous chunk keeps its index")
		require.Same(t, prev, look(xor(3)), "the new open chunk takes the one of the chunk that left the newest two")
		require.Same(t, open, look(xor(2)))

		// An older chunk takes the least recently used index, unless that
		// is the open chunk's: then the other one.
		require.Same(t, open, look(xor(0)), "the open chunk keeps its index")
		require.Same(t, prev, look(xor(3)))
		require.Same(t, open, look(xor(1)), "the least recently used index")
		require.Same(t, prev, look(xor(3)))

		// Truncation forgets the index of a chunk it drops (keeping its
		// chunk reachable), and keeps the others.
		s.truncateChunksLocked(s.chunks[2].minTime)
		require.Nil(t, open.Chunk(), "index of a dropped chunk")
		require.Equal(t, chunks.Chunk(xor(1)), prev.Chunk())
	})
}

// TestLateTimesMappedChunks checks that late appends look their time up
// in a chunk mapped from the head chunk files (head_mmap.go) through
// lateSeries.times, as in a heap chunk, and that the index answers as
// decoding does: a free time is stored, the time of a mapped sample with
// its value is a no-op, with another value ErrDuplicateSampleForTimestamp;
// and that the WAL replay releases the indexes it built and trims the open
// late buffers.
func TestLateTimesMappedChunks(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := lateOpts(fsys, 6*time.Hour)
	o.MinBlockDuration, o.MaxBlockDuration = 24*time.Hour, 24*time.Hour
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	lset := labels.FromStrings("__name__", "mapped")
	want := []sample{}
	app := db.Appender(ctx)
	for k := range 400 { // four chunks: three mapped at Close
		_, err := app.Append(0, lset, int64(k)*15_000, float64(k))
		require.NoError(t, err)
		want = append(want, sample{int64(k) * 15_000, float64(k)})
	}
	require.NoError(t, app.Commit())
	for _, k := range []int64{100, 101} { // late, replayed as such: the second looks the first's chunk up
		app = db.Appender(ctx)
		_, err = app.Append(0, lset, k*15_000+3, -float64(k))
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		want = append(want, sample{k*15_000 + 3, -float64(k)})
	}
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	mapped, _ := headChunkCounts(db)
	require.Equal(t, 3, mapped)

	// The replay released the indexes its duplicate check built, and
	// trimmed the open late buffer to its samples; the next late append
	// grows it back to full size.
	s := db.head.series.getByHash(lset.Hash(), lset)
	openLen, openCap := func() (int, int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		require.True(t, s.hasLateLocked())
		require.Nil(t, s.x.late.times[0].Chunk(), "index left after the replay")
		require.Nil(t, s.x.late.times[1].Chunk(), "index left after the replay")
		return len(s.x.late.open), cap(s.x.late.open)
	}()
	require.Equal(t, 2, openLen)
	require.Less(t, openCap, lateOpenMax, "open late buffer not trimmed")
	app = db.Appender(ctx)
	_, err = app.Append(0, lset, 102*15_000+3, -102)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	want = append(want, sample{102*15_000 + 3, -102})
	s.mu.Lock()
	openLen, openCap = len(s.x.late.open), cap(s.x.late.open)
	s.mu.Unlock()
	require.Equal(t, 3, openLen)
	require.Equal(t, lateOpenMax, openCap, "open late buffer grown back to full size")
	for i, k := range []int{200, 290, 210, 50, 150} { // chunks 1, 2, 1 again, 0, 1 below the times looked up
		ts := int64(k)*15_000 + 7
		for _, c := range []struct {
			ts  int64
			v   float64
			err error
		}{
			{ts, -float64(i), nil},                                // free
			{ts - 7, float64(k), nil},                             // a mapped sample again
			{ts - 7, -1, ErrDuplicateSampleForTimestamp},          // another value at its time
			{ts - 7 + 15_000, -1, ErrDuplicateSampleForTimestamp}, // the next one's
		} {
			app := db.Appender(ctx)
			_, err := app.Append(0, lset, c.ts, c.v)
			require.ErrorIs(t, err, c.err, "time %d", c.ts)
			require.NoError(t, app.Commit())
		}
		want = append(want, sample{ts, -float64(i)})
		s.mu.Lock()
		j := slices.IndexFunc(s.chunks, func(c memChunk) bool { return c.minTime <= ts && ts <= c.maxTime })
		var c chunks.Chunk
		if j >= 0 {
			c = s.chunks[j].chunk
		}
		indexed := c != nil && (s.x.late.times[0].Chunk() == c || s.x.late.times[1].Chunk() == c)
		s.mu.Unlock()
		require.True(t, headchunks.IsMapped(c), "chunk %d", j)
		require.True(t, indexed, "mapped chunk %d looked up through the index", j)
	}
	slices.SortFunc(want, func(a, b sample) int { return cmpInt64(a.T, b.T) })
	requireSameSamples(t, map[string][]sample{lset.String(): want}, fullRead(t, db))
}
