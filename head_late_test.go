package tsdb

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// lateOpts returns options with an out-of-order window on a shared
// in-memory filesystem.
func lateOpts(fs vfs.FS, window time.Duration) *Options {
	o := DefaultOptions()
	o.FS = fs
	o.OutOfOrderTimeWindow = window
	return o
}

// lateWorkload writes, for each of n series, in-order samples every 15 s
// over span ms and late samples at the odd seconds in between, in commits
// that mix both; it returns what a full query must return.
func lateWorkload(t *testing.T, db *DB, n int, span int64, seed uint64) map[string][]sample {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	want := map[string][]sample{}
	lsets := make([]labels.Labels, n)
	for i := range lsets {
		lsets[i] = labels.FromStrings("__name__", "late", "i", string(rune('a'+i)))
	}
	type pend struct {
		s int
		t int64
	}
	var held []pend
	for ts := int64(0); ts < span; ts += 15_000 {
		app := db.Appender(context.Background())
		for i, ls := range lsets {
			v := float64(ts)/1000 + float64(i)
			if rng.IntN(10) == 0 {
				// Held back, to arrive 1–10 scrapes later at ts+1s.
				held = append(held, pend{i, ts + 1000})
			}
			_, err := app.Append(0, ls, ts, v)
			require.NoError(t, err)
			want[ls.String()] = append(want[ls.String()], sample{ts, v})
		}
		keep := held[:0]
		for _, p := range held {
			if p.t+int64(rng.IntN(10)+1)*15_000 > ts && ts-p.t < 150_000 {
				keep = append(keep, p)
				continue
			}
			v := -float64(p.t)
			_, err := app.Append(0, lsets[p.s], p.t, v)
			require.NoError(t, err, "late sample at %d, head at %d", p.t, ts)
			want[lsets[p.s].String()] = append(want[lsets[p.s].String()], sample{p.t, v})
		}
		held = keep
		require.NoError(t, app.Commit())
	}
	for k := range want {
		slices.SortFunc(want[k], func(a, b sample) int { return cmpInt64(a.T, b.T) })
	}
	return want
}

func fullRead(t *testing.T, db *DB) map[string][]sample {
	t.Helper()
	q, err := db.Querier(MinSampleTime, MaxSampleTime)
	require.NoError(t, err)
	defer q.Close()
	return querySamples(t, q)
}

// TestLateSamples: late samples within the window are stored and read back
// merged with the in-order ones, from the head, after WAL replay, and from
// a block after head compaction.
func TestLateSamples(t *testing.T) {
	fs := vfs.NewMemFS()
	o := lateOpts(fs, 30*time.Minute)
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	want := lateWorkload(t, db, 8, 4*3600_000, 1)
	late := 0
	for _, ss := range want {
		for _, s := range ss {
			if s.V < 0 {
				late++
			}
		}
	}
	require.Greater(t, late, 8*lateOpenMax, "the workload must cut late chunks")
	requireSameSamples(t, want, fullRead(t, db))
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	requireSameSamples(t, want, fullRead(t, db))
	require.NoError(t, db.Compact(context.Background()))
	require.NotEmpty(t, db.Blocks(), "head compaction wrote no block")
	requireSameSamples(t, want, fullRead(t, db))
	require.NoError(t, db.head.checkInvariants(false))
	require.NoError(t, db.Close())
}

// TestLateSampleErrors: the window's bounds, duplicates and the window
// switched at run time.
func TestLateSampleErrors(t *testing.T) {
	db, reg := openTestDB(t, lateOpts(nil, 10*time.Minute))
	ls := labels.FromStrings("__name__", "m")
	other := labels.FromStrings("__name__", "other")
	app := db.Appender(context.Background())
	for ts := int64(0); ts <= 3600_000; ts += 60_000 {
		_, err := app.Append(0, ls, ts, float64(ts))
		require.NoError(t, err)
	}
	_, err := app.Append(0, other, 3600_000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	app = db.Appender(context.Background())
	_, err = app.Append(0, ls, 3600_000-10*60_000-1, 1)
	require.ErrorIs(t, err, ErrTooOldSample)
	require.ErrorContains(t, err, "10m0s")
	_, err = app.Append(0, ls, 3600_000-5*60_000, 7) // an existing sample, another value
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp)
	_, err = app.Append(0, ls, 3600_000-5*60_000, 3600_000-5*60_000) // the same sample
	require.NoError(t, err)
	_, err = app.Append(0, ls, 3600_000-5*60_000+1, 42) // late, accepted
	require.NoError(t, err)
	_, err = app.Append(0, other, 3600_000-1, 43) // late in another series
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.Equal(t, 2.0, gaugeWithLabel(t, reg, "tsdb_head_samples_rejected_total", "reason", "too_old")+gaugeWithLabel(t, reg, "tsdb_head_samples_rejected_total", "reason", "duplicate"))
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_head_late_samples_appended_total"))

	app = db.Appender(context.Background())
	_, err = app.Append(0, ls, 3600_000-5*60_000+1, 41) // now a duplicate of a late sample
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp)
	_, err = app.AppendHistogram(0, ls, 3600_000-5*60_000+1, &histogram.Histogram{Count: 1, ZeroCount: 1}, nil)
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "a histogram at the time of a float")
	_, err = app.AppendHistogram(0, ls, 3600_000-5*60_000+2, &histogram.Histogram{Count: 1, ZeroCount: 1}, nil)
	require.NoError(t, err, "a late histogram into a float series")
	require.NoError(t, app.Commit())

	// Off at run time: late samples are out of order again.
	require.NoError(t, db.SetOutOfOrderTimeWindow(0))
	app = db.Appender(context.Background())
	_, err = app.Append(0, ls, 3600_000-1, 1)
	require.ErrorIs(t, err, ErrOutOfOrderSample)
	require.NoError(t, app.Rollback())
	require.NoError(t, db.SetOutOfOrderTimeWindow(2*time.Hour))
	app = db.Appender(context.Background())
	_, err = app.Append(0, ls, -500, 1)
	require.NoError(t, err, "more than half a block range back, before the head's appendable range but within the window")
	_, err = app.Append(0, ls, 3600_000-2*3600_000-1, 1)
	require.ErrorIs(t, err, ErrTooOldSample, "just before the window")
	_, err = app.Append(0, ls, MinSampleTime-1, 1)
	require.ErrorIs(t, err, ErrOutOfBounds, "before MinSampleTime, whatever the window")
	_, err = app.Append(0, ls, 3600_000-29*60_000-1, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	got := fullRead(t, db)["{__name__=\"m\"}"]
	require.Len(t, got, 61+4)
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].T, got[i].T)
	}
}

// TestLateIsolation: a query sees a commit's in-order and late samples
// together or not at all, whichever sample the commit is paused before.
func TestLateIsolation(t *testing.T) {
	db, _ := openTestDB(t, lateOpts(nil, 30*time.Minute))
	g := newCommitGate(t, db.head)
	var lsets []labels.Labels
	for i := range 4 {
		lsets = append(lsets, labels.FromStrings("__name__", "m", "i", string(rune('a'+i))))
	}
	app := db.Appender(context.Background())
	for _, ls := range lsets {
		for ts := int64(0); ts <= 600_000; ts += 60_000 {
			_, err := app.Append(0, ls, ts, 1)
			require.NoError(t, err)
		}
	}
	require.NoError(t, app.Commit())
	before := fullRead(t, db)

	for round := range 2 * len(lsets) * (lateOpenMax + 2) {
		pauseAt := round % (2 * len(lsets))
		app := db.Appender(context.Background())
		// Each commit: one late and one in-order sample per series.
		now := int64(600_000 + (round+1)*1000)
		lateT := int64(round*7 + 1)
		for _, ls := range lsets {
			_, err := app.Append(0, ls, lateT, float64(round))
			require.NoError(t, err)
			_, err = app.Append(0, ls, now, float64(round))
			require.NoError(t, err)
		}
		old, err := db.Querier(MinSampleTime, MaxSampleTime)
		require.NoError(t, err)
		pc := g.commitPaused(app, pauseAt)
		requireSameSamples(t, before, fullRead(t, db))
		close(pc.release)
		require.NoError(t, <-pc.done)
		requireSameSamples(t, before, querySamples(t, old))
		require.NoError(t, old.Close())
		for _, ls := range lsets {
			k := ls.String()
			before[k] = append(before[k], sample{lateT, float64(round)}, sample{now, float64(round)})
			slices.SortFunc(before[k], func(a, b sample) int { return cmpInt64(a.T, b.T) })
		}
		requireSameSamples(t, before, fullRead(t, db))
	}
}

// TestLateRejectOption: AppendOptions.RejectLate makes the following
// Appends reject late samples as with the window off, and clearing it
// accepts them again, within one transaction.
func TestLateRejectOption(t *testing.T) {
	db, _ := openTestDB(t, lateOpts(vfs.NewMemFS(), 6*time.Hour))
	ls := labels.FromStrings("__name__", "reject")
	app := db.Appender(context.Background())
	_, err := app.Append(0, ls, 4*3600_000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	app = db.Appender(context.Background())
	app.SetOptions(AppendOptions{RejectLate: true})
	_, err = app.Append(0, ls, 4*3600_000-1, 2)
	require.ErrorIs(t, err, ErrOutOfOrderSample)
	_, err = app.Append(0, ls, 1000, 2)
	require.ErrorIs(t, err, ErrOutOfBounds, "behind the head's range")
	_, err = app.Append(0, ls, 4*3600_000+1, 3)
	require.NoError(t, err, "in-order samples are unaffected")
	app.SetOptions(AppendOptions{})
	_, err = app.Append(0, ls, 1000, 4)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.Equal(t, []sample{{1000, 4}, {4 * 3600_000, 1}, {4*3600_000 + 1, 3}}, fullRead(t, db)[`{__name__="reject"}`])
}
