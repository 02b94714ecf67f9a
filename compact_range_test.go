package tsdb

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestCompactSkipsEmptyRanges: one sample in
// milliseconds and one in microseconds by mistake (a thousand times
// later). Compact writes the block of the first and stops: it does not
// walk the ~236 million empty 2h ranges in between, each of which cost a
// WAL segment switch and a checkpoint. The test counts filesystem
// operations (a budget that fails Compact once spent), not time.
func TestCompactSkipsEmptyRanges(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, reg := openTestDB(t, o)
	noWakeups(db)
	const msTS, usTS = int64(1_700_000_000_000), int64(1_700_000_000_000_000)
	app := db.Appender(ctx)
	_, err := app.Append(0, labels.FromStrings("__name__", "ms"), msTS, 1)
	require.NoError(t, err)
	_, err = app.Append(0, labels.FromStrings("__name__", "us"), usTS, 2)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	// Writing one block and checkpointing once takes a few dozen
	// operations; each empty range walked took about ten more.
	const budget = 100
	errBudget := errors.New("filesystem operation budget spent")
	start := fsys.Ops()
	fsys.SetHook(func(vfs.Op, string) error {
		if fsys.Ops()-start > budget {
			return errBudget
		}
		return nil
	})
	err = db.Compact(ctx)
	ops := fsys.Ops() - start
	fsys.SetHook(nil)
	require.NoError(t, err)
	t.Logf("Compact: %d filesystem operations", ops)

	require.Equal(t, 1.0, gauge(t, reg, "tsdb_compactions_total"), "one block written")
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_head_truncations_total"), "one range walked")
	require.Equal(t, usTS, db.Head().MinTime(), "the head starts at its oldest sample")
	require.Equal(t, usTS, db.Head().MaxTime())
	// Retention (15 days before the newest sample) removed the block; the
	// head still serves the sample in microseconds.
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	require.Equal(t, map[string][]sample{`{__name__="us"}`: {{usTS, 2}}}, querySamples(t, q))
}

// TestHeadMinTimeAfterTruncation: after a head compaction, the head's
// MinTime is its oldest remaining sample, not the start of the range after
// the block.
func TestHeadMinTimeAfterTruncation(t *testing.T) {
	db, _ := openTestDB(t, nil)
	noWakeups(db)
	const hour = int64(3600_000)
	appendRange(t, db, labels.FromStrings("__name__", "old"), 0, hour)
	oldest := 2*hour + 30*60_000 + 7
	appendRange(t, db, labels.FromStrings("__name__", "new"), oldest, 4*hour)
	require.Equal(t, int64(0), db.Head().MinTime())
	require.NoError(t, db.Compact(ctx))
	require.Len(t, db.Blocks(), 1)
	require.Equal(t, oldest, db.Head().MinTime())
	require.Equal(t, int64(1), db.Head().NumSeries(), "the old series left the head")

	// A head truncated to nothing is empty again.
	db2, _ := openTestDB(t, nil)
	appendRange(t, db2, labels.FromStrings("__name__", "a"), 0, hour)
	db2.head.truncate(2*hour, 0)
	require.Equal(t, int64(math.MaxInt64), db2.Head().MinTime())
	require.Equal(t, int64(math.MinInt64), db2.Head().MaxTime())
}

// TestMaxFutureSkew: with Options.MaxFutureSkew, a sample later than the
// wall clock plus the skew is rejected with ErrTooFarInFuture and counted;
// samples inside the skew, and the other samples of the same Appender, are
// not affected. Without the option nothing is rejected.
func TestMaxFutureSkew(t *testing.T) {
	o := DefaultOptions()
	o.MaxFutureSkew = time.Hour
	db, reg := openTestDB(t, o)
	now := time.Now().UnixMilli()
	a, b, c := labels.FromStrings("__name__", "a"), labels.FromStrings("__name__", "b"), labels.FromStrings("__name__", "c")
	app := db.Appender(ctx)
	_, err := app.Append(0, a, now, 1)
	require.NoError(t, err)
	_, err = app.Append(0, b, now+1000*now, 2) // microseconds by mistake
	require.ErrorIs(t, err, ErrTooFarInFuture)
	_, err = app.Append(0, c, now+2*time.Hour.Milliseconds(), 3)
	require.ErrorIs(t, err, ErrTooFarInFuture)
	_, err = app.Append(0, c, now+30*time.Minute.Milliseconds(), 4) // inside the skew
	require.NoError(t, err)
	_, err = app.Append(0, a, now+60_000, 5)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.Equal(t, 2.0, gaugeWithLabel(t, reg, "tsdb_head_samples_rejected_total", "reason", "too_far_in_future"))

	// Current samples keep being accepted: the far-future one never got in.
	app = db.Appender(ctx)
	_, err = app.Append(0, b, now+120_000, 6)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	require.Equal(t, map[string][]sample{
		`{__name__="a"}`: {{now, 1}, {now + 60_000, 5}},
		`{__name__="b"}`: {{now + 120_000, 6}},
		`{__name__="c"}`: {{now + 30*time.Minute.Milliseconds(), 4}},
	}, querySamples(t, q))

	// Off by default: a backfill far ahead of the clock is accepted.
	db2, _ := openTestDB(t, nil)
	app = db2.Appender(ctx)
	_, err = app.Append(0, a, now+1000*now, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
}

// TestFarFutureSampleWindow documents what a far-future sample does
// without MaxFutureSkew: the appendable window follows the newest sample,
// so current samples are out of bounds from then on.
func TestFarFutureSampleWindow(t *testing.T) {
	db, _ := openTestDB(t, nil)
	now := time.Now().UnixMilli()
	app := db.Appender(ctx)
	_, err := app.Append(0, labels.FromStrings("__name__", "us"), now*1000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	app = db.Appender(ctx)
	_, err = app.Append(0, labels.FromStrings("__name__", "other"), now, 1)
	require.ErrorIs(t, err, ErrOutOfBounds)
	require.NoError(t, app.Rollback())
}

// TestTruncateRacingCommits: truncation recomputes the head's MinTime while
// commits go on; a commit that has returned is always inside the head's
// range, so queries never skip it. Each commit writes a new series one
// millisecond older than the last, so every one lowers MinTime, while
// truncate runs in a loop.
func TestTruncateRacingCommits(t *testing.T) {
	db, _ := openTestDB(t, nil)
	noWakeups(db)
	h := db.head
	const base = int64(10 * 3600_000)
	appendRange(t, db, labels.FromStrings("__name__", "anchor"), base, base+60_000)
	n := 20000
	if raceEnabled {
		n = 3000
	}
	stop := make(chan struct{})
	truncated := make(chan int)
	go func() {
		k := 0
		for {
			select {
			case <-stop:
				truncated <- k
				return
			default:
			}
			h.truncate(base-3600_000, 0) // drops nothing
			k++
		}
	}()
	for i := 1; i <= n; i++ {
		ts := base - int64(i)
		app := db.Appender(ctx)
		_, err := app.Append(0, labels.FromStrings("__name__", "s", "i", strconv.Itoa(i)), ts, 1)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		if mt := h.MinTime(); mt > ts {
			close(stop)
			<-truncated
			require.Failf(t, "head MinTime later than a committed sample", "commit %d at %d returned, head MinTime %d is later", i, ts, mt)
		}
	}
	close(stop)
	t.Logf("%d truncations during %d commits", <-truncated, n)
	require.Equal(t, base-int64(n), h.MinTime())
}
