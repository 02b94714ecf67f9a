package tsdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestAdminPreamble: Compact, Delete, CleanTombstones and Snapshot check
// in the same order (read-only, then the wait for cmtx, then closed), wrap
// a cancelled wait each in its own way, and never keep cmtx when they
// refuse to run.
func TestAdminPreamble(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, _ := openTestDB(t, &Options{FS: fsys})
	app := db.Appender(ctx)
	_, err := app.Append(0, labels.FromStrings("__name__", "up"), 1000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	ro, err := OpenReadOnly("data", nil, &Options{FS: fsys})
	require.NoError(t, err)

	all := labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+")
	snaps := 0
	ops := []struct {
		name       string
		run        func(context.Context, *DB) error
		cancelMsg  string // the error of a wait for cmtx that ctx ended; "" if it cannot end
		readOnlyOK bool
	}{
		{"compact", func(ctx context.Context, db *DB) error { return db.Compact(ctx) }, "context canceled", false},
		{"delete", func(ctx context.Context, db *DB) error { return db.Delete(ctx, 0, 1, all) }, "tsdb: delete: context canceled", false},
		{"clean tombstones", func(ctx context.Context, db *DB) error { return db.CleanTombstones(ctx) }, "tsdb: clean tombstones: context canceled", false},
		{"snapshot", func(_ context.Context, db *DB) error {
			snaps++
			return db.Snapshot(fmt.Sprintf("snap-%d", snaps), true)
		}, "", true},
	}
	// requireFree fails if the DB's cmtx is held.
	requireFree := func(t *testing.T, db *DB) {
		t.Helper()
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.NoError(t, db.cmtx.lock(c), "cmtx left held")
		db.cmtx.unlock()
	}

	// A wait for cmtx that ctx ends.
	require.NoError(t, db.cmtx.lock(ctx))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, op := range ops {
		if op.cancelMsg == "" {
			continue
		}
		err := op.run(cancelled, db)
		require.ErrorIs(t, err, context.Canceled, op.name)
		require.EqualError(t, err, op.cancelMsg, op.name)
	}
	db.cmtx.unlock()

	// Read-only: refused before anything else, except what writes nothing.
	for _, op := range ops {
		err := op.run(ctx, ro)
		if op.readOnlyOK {
			require.NoError(t, err, op.name)
		} else {
			require.ErrorIs(t, err, ErrReadOnly, op.name)
			// Even with ctx done: read-only comes before the wait.
			require.Same(t, ErrReadOnly, op.run(cancelled, ro), op.name)
		}
		requireFree(t, ro)
	}

	// Closed: read-only still comes first; ErrClosed as it is, cmtx free.
	require.NoError(t, ro.Close())
	require.NoError(t, db.Close())
	for _, op := range ops {
		err := op.run(ctx, ro)
		if op.readOnlyOK {
			require.Same(t, ErrClosed, err, op.name)
		} else {
			require.Same(t, ErrReadOnly, err, op.name)
		}
		require.Same(t, ErrClosed, op.run(ctx, db), op.name)
		requireFree(t, ro)
		requireFree(t, db)
	}
}
