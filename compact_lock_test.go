package tsdb

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// appendRange commits one sample per minute of series lset in [mint, maxt).
func appendRange(t testing.TB, db *DB, lset labels.Labels, mint, maxt int64) {
	t.Helper()
	app := db.Appender(context.Background())
	for ts := mint; ts < maxt; ts += 60_000 {
		_, err := app.Append(0, lset, ts, float64(ts))
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
}

// noWakeups stops commits from waking db's background compaction, so that
// the Compact a test calls is the one that runs (the background loop's
// one-minute tick is far beyond these tests' length).
func noWakeups(db *DB) { db.head.onCommit = nil }

// heldCompaction starts a Compact that publishes a block and then waits,
// holding the DB's compaction lock, for a Querier the test holds open. It
// returns once the block is published (so the lock is held) and a function
// that closes the Querier and returns Compact's error.
func heldCompaction(t *testing.T, db *DB) (release func() error) {
	t.Helper()
	const hour = int64(3600_000)
	noWakeups(db)
	appendRange(t, db, labels.FromStrings("__name__", "m"), 0, 4*hour)
	q, err := db.Querier(0, 4*hour)
	require.NoError(t, err)
	// Registered after openTestDB's Close: runs first if the test fails.
	t.Cleanup(func() { _ = q.Close() })
	done := make(chan error, 1)
	go func() { done <- db.Compact(context.Background()) }()
	// The block is published under the lock, before Compact waits for q.
	require.Eventually(t, func() bool { return len(db.Blocks()) == 1 }, 10*time.Second, time.Millisecond)
	select {
	case err := <-done:
		require.Failf(t, "Compact returned before its reader was closed", "%v", err)
	default:
	}
	return func() error {
		require.NoError(t, q.Close())
		return <-done
	}
}

// requireCancelledPromptly runs f with a context that is cancelled once f
// had a moment to start waiting, and requires f to return context.Canceled
// within a few seconds.
func requireCancelledPromptly(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(started)
		done <- f(ctx)
	}()
	<-started
	select {
	case err := <-done:
		require.Failf(t, "returned while a compaction holds the lock", "%s: %v", what, err)
	case <-time.After(20 * time.Millisecond): // only makes the test meaningful; correctness does not rest on it
	}
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled, what)
	case <-time.After(5 * time.Second):
		require.Failf(t, "still blocked 5 s after its context was cancelled", "%s", what)
	}
}

// TestDeleteCancelledBehindCompaction: Delete and
// CleanTombstones waiting behind a compaction return ctx.Err() when their
// context is cancelled, and change nothing.
func TestDeleteCancelledBehindCompaction(t *testing.T) {
	db, _ := openTestDB(t, nil)
	release := heldCompaction(t, db)
	m := labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")
	requireCancelledPromptly(t, "Delete", func(ctx context.Context) error {
		return db.Delete(ctx, 0, 3600_000, m)
	})
	requireCancelledPromptly(t, "CleanTombstones", func(ctx context.Context) error {
		return db.CleanTombstones(ctx)
	})
	// Already cancelled: no wait at all.
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, db.Delete(cctx, 0, 1, m), context.Canceled)
	require.ErrorIs(t, db.CleanTombstones(cctx), context.Canceled)
	require.ErrorIs(t, db.Compact(cctx), context.Canceled)

	require.NoError(t, release())
	q, err := db.Querier(0, 4*3600_000)
	require.NoError(t, err)
	defer q.Close()
	require.Len(t, querySamples(t, q)[`{__name__="m"}`], 4*60, "the cancelled Delete deleted nothing")
	// Once the compaction is done, both go through.
	require.NoError(t, db.Delete(context.Background(), 0, 3600_000, m))
	require.NoError(t, db.CleanTombstones(context.Background()))
}
