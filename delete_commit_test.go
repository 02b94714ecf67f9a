package tsdb

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// A Delete racing a commit deletes the commit whole or leaves it whole
// (isolation.go, "Deletes and commits").

// targetSeries returns the label set of series i of target tg.
func targetSeries(tg string, i int) labels.Labels {
	return labels.FromStrings(labels.MetricName, "m", "i", string(rune('a'+i)), "target", tg)
}

// requireWholeTarget fails unless a new querier returns none or all n
// series of target tg, all holding the same samples, and returns them.
func requireWholeTarget(t *testing.T, db *DB, tg string, n int) []sample {
	t.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	got := querySamples(t, q, labels.MustNewMatcher(labels.MatchEqual, "target", tg))
	if len(got) != 0 && len(got) != n {
		t.Fatalf("%d of the %d series of target %s: a commit seen in part (series: %v)", len(got), n, tg, got)
	}
	var first []sample
	for key, s := range got {
		if first == nil {
			first = s
			continue
		}
		require.Equal(t, first, s, "series %s: a commit seen in part (series: %v)", key, got)
	}
	return first
}

// TestDeleteRacingSeriesCreation: a commit whose Appender creates the
// target's series while a Delete of the target looks them up. The Delete
// found the first series (created, no samples yet) and not the second.
// Before the fix, the commit completed in between and the Delete's
// interval, ending at the first series' newest sample, covered the
// commit's sample there and not in the second series (found by
// TestAdversarialConcurrentAdmin on CI).
func TestDeleteRacingSeriesCreation(t *testing.T) {
	db, _ := openTestDB(t, nil)
	app := db.Appender(ctx)
	_, err := app.Append(0, targetSeries("x", 0), 10, 1)
	require.NoError(t, err)
	committed := make(chan error, 1)
	db.head.deleteHook = func() {
		db.head.deleteHook = nil
		go func() {
			if _, err := app.Append(0, targetSeries("x", 1), 10, 1); err != nil {
				committed <- err
				return
			}
			committed <- app.Commit()
		}()
		// The commit must wait for the Delete; give it the time to get
		// there (if it completes meanwhile, the check below fails).
		select {
		case err := <-committed:
			committed <- err
		case <-time.After(200 * time.Millisecond):
		}
	}
	require.NoError(t, db.Delete(ctx, 0, math.MaxInt64, labels.MustNewMatcher(labels.MatchEqual, "target", "x")))
	require.NoError(t, <-committed)
	// The commit came after the Delete: both samples are there.
	require.Equal(t, []sample{{10, 1}}, requireWholeTarget(t, db, "x", 2))
}

// TestDeleteRacingCommitInFlight: a Delete starting while a commit has
// applied its sample to one series of the target and not to the other
// waits for the commit, then deletes both samples.
func TestDeleteRacingCommitInFlight(t *testing.T) {
	db, _ := openTestDB(t, nil)
	app := db.Appender(ctx)
	for i := range 2 {
		_, err := app.Append(0, targetSeries("x", i), 10, 1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())

	paused, resume := make(chan struct{}), make(chan struct{})
	var resumeOnce sync.Once
	release := func() { resumeOnce.Do(func() { close(resume) }) }
	defer release() // a failing test must not leave the commit paused
	db.head.commitHook = func(_ *headAppender, i int) {
		if i == 1 {
			close(paused)
			<-resume
		}
	}
	app = db.Appender(ctx)
	for i := range 2 {
		_, err := app.Append(0, targetSeries("x", i), 20, 2)
		require.NoError(t, err)
	}
	committed := make(chan error, 1)
	go func() { committed <- app.Commit() }()
	<-paused
	deleted := make(chan error, 1)
	go func() {
		deleted <- db.Delete(ctx, 0, math.MaxInt64, labels.MustNewMatcher(labels.MatchEqual, "target", "x"))
	}()
	select {
	case err := <-deleted:
		t.Fatalf("Delete returned (%v) with a commit half applied", err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	require.NoError(t, <-committed)
	require.NoError(t, <-deleted)
	db.head.commitHook = nil
	require.Empty(t, requireWholeTarget(t, db, "x", 2))
}

// TestDeleteIntervalPerSeries: each series' interval ends at its own
// newest sample. A target behind another that the same Delete matched
// keeps the samples it commits afterwards, in the series it had and in
// one it creates, even where they are older than the other target's
// newest.
func TestDeleteIntervalPerSeries(t *testing.T) {
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	app := db.Appender(ctx)
	_, err = app.Append(0, targetSeries("ahead", 0), 100, 1)
	require.NoError(t, err)
	_, err = app.Append(0, targetSeries("behind", 0), 50, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.NoError(t, db.Delete(ctx, 0, math.MaxInt64, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "m")))

	app = db.Appender(ctx)
	for i := range 2 {
		_, err := app.Append(0, targetSeries("behind", i), 60, 2)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	require.Equal(t, []sample{{60, 2}}, requireWholeTarget(t, db, "behind", 2))
	require.Empty(t, requireWholeTarget(t, db, "ahead", 1))

	// The same over a restart (the WAL's Tombstones record).
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	require.Equal(t, []sample{{60, 2}}, requireWholeTarget(t, db, "behind", 2))
	require.Empty(t, requireWholeTarget(t, db, "ahead", 1))
	require.NoError(t, db.Close())
}
