package tsdb

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestCheckpointKeepsCommitLoggedBeforeCompaction: a commit whose WAL
// record is written before a head compaction and which applies after it
// finds its sample behind the new block range, and applies it as a late
// one (the out-of-order window is on). The truncation that follows the
// compaction checkpoints the WAL segment holding that record: the
// checkpoint must keep the sample, which only the head holds, or it is
// lost at the next restart.
func TestCheckpointKeepsCommitLoggedBeforeCompaction(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := lateOpts(fs, 6*time.Hour)
	db, err := Open("data", nil, nil, opts)
	require.NoError(t, err)
	a := labels.FromStrings("__name__", "a")
	c := labels.FromStrings("__name__", "c")
	app := db.Appender(ctx)
	for ts := int64(0); ts <= 4*hour; ts += hour / 4 {
		_, err := app.Append(0, a, ts, float64(ts))
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())

	// The commit of c@1h stops between writing its WAL record and
	// applying it; a compaction runs meanwhile.
	logged, resume := make(chan struct{}), make(chan struct{})
	db.head.loggedHook = func(*headAppender) {
		close(logged)
		<-resume
	}
	committed := make(chan error, 1)
	go func() {
		app := db.Appender(ctx)
		if _, err := app.Append(0, c, hour, 42); err != nil {
			committed <- err
			return
		}
		committed <- app.Commit()
	}()
	<-logged
	db.head.loggedHook = nil
	compacted := make(chan error, 1)
	go func() { compacted <- db.Compact(context.Background()) }()
	// A compaction that does not wait for the commit completes now; one
	// that waits completes once the commit is released.
	select {
	case err := <-compacted:
		require.NoError(t, err)
		compacted <- nil
	case <-time.After(200 * time.Millisecond):
	}
	close(resume)
	require.NoError(t, <-committed)
	require.NoError(t, <-compacted)
	require.NotEmpty(t, db.Blocks(), "the compaction wrote a block")
	require.GreaterOrEqual(t, db.head.minValidTime.Load(), 2*hour, "the head's range starts after the sample")

	want := map[string][]sample{c.String(): {{T: hour, V: 42}}}
	q, err := db.Querier(MinSampleTime, MaxSampleTime)
	require.NoError(t, err)
	require.Equal(t, want, querySamples(t, q, labels.MustNewMatcher(labels.MatchEqual, "__name__", "c")))
	require.NoError(t, q.Close())
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, opts)
	require.NoError(t, err)
	defer db.Close()
	q, err = db.Querier(MinSampleTime, MaxSampleTime)
	require.NoError(t, err)
	defer q.Close()
	require.Equal(t, want, querySamples(t, q, labels.MustNewMatcher(labels.MatchEqual, "__name__", "c")), "after a restart")
}
