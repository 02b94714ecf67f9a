package tsdb

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
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
	s.mu.Lock()
	require.Len(t, s.chunks, 3)
	open, prev := look(xor(2)), look(xor(1))
	require.NotSame(t, open, prev)
	for range 3 {
		require.Same(t, open, look(xor(2)))
		require.Same(t, prev, look(xor(1)))
	}
	s.mu.Unlock()

	appendN(115) // a fourth chunk: the third is the previous one now
	s.mu.Lock()
	require.Len(t, s.chunks, 4)
	require.Same(t, open, look(xor(2)), "the previous chunk keeps its index")
	require.Same(t, prev, look(xor(3)), "the new open chunk takes the one of the chunk that left the newest two")
	require.Same(t, open, look(xor(2)))
	s.mu.Unlock()
}
