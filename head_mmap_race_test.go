package tsdb

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestHeadChunksLogOrderNotApplyOrder: commit A logs its sample of a
// series before commit B logs a newer one, but B applies first, so A's
// sample goes in as a late one. The WAL holds A's sample before B's, in
// order; the head chunk files hold B's and not A's. After a clean Close
// and Open, the series must still have both.
func TestHeadChunksLogOrderNotApplyOrder(t *testing.T) {
	for _, before := range []int64{10, 0} { // 0: A's sample is the series' first
		t.Run(fmt.Sprintf("before=%d", before), func(t *testing.T) { testLogOrderNotApplyOrder(t, before) })
	}
}

func testLogOrderNotApplyOrder(t *testing.T, before int64) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	o.OutOfOrderTimeWindow = 6 * time.Hour
	o.MinBlockDuration = 24 * time.Hour // no block: every chunk stays in the head
	o.MaxBlockDuration = 24 * time.Hour
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	l := labels.FromStrings(labels.MetricName, "m")
	var want []sample
	add := func(ts int64, v float64) {
		app := db.Appender(ctx)
		_, err := app.Append(0, l, ts, v)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		want = append(want, sample{T: ts, V: v})
	}
	for k := range before {
		add(k*15000, float64(k))
	}

	// A appends t=150s, logs, and stops before applying.
	logged, resume := make(chan struct{}), make(chan struct{})
	db.head.loggedHook = func(*headAppender) {
		close(logged)
		<-resume
	}
	committed := make(chan error, 1)
	go func() {
		app := db.Appender(ctx)
		if _, err := app.Append(0, l, 150_000, -1); err != nil {
			committed <- err
			return
		}
		committed <- app.Commit()
	}()
	<-logged
	db.head.loggedHook = nil
	// B logs and applies t=165s, then A applies: its sample is late now.
	add(165_000, 11)
	close(resume)
	require.NoError(t, <-committed)
	want = append(want, sample{T: 150_000, V: -1})
	// Enough samples after to close the chunk holding B's and map it.
	for k := int64(12); k < 400; k++ {
		add(k*15000, float64(k))
	}
	require.NoError(t, db.Compact(ctx))
	mapped, _ := headChunkCounts(db)
	require.Positive(t, mapped)
	slices.SortFunc(want, func(a, b sample) int { return cmpInt64(a.T, b.T) })
	require.Equal(t, map[string][]sample{l.String(): want}, allSamples(t, db), "before the restart")
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	require.Equal(t, map[string][]sample{l.String(): want}, allSamples(t, db), "after the restart")
	require.NoError(t, db.Close())
}
