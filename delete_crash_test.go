package tsdb

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// dbState is a digest of everything a full query returns.
func dbState(t *testing.T, fsys vfs.FS, dir string) string {
	t.Helper()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open(dir, nil, nil, o)
	require.NoError(t, err, "open %s", dir)
	defer func() { require.NoError(t, db.Close()) }()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	return fmt.Sprint(querySamples(t, q))
}

// TestCrashDuringDeleteCleanSnapshot: a crash
// at every write of Delete, CleanTombstones and Snapshot leaves a DB (and a
// snapshot directory) that opens with either the old or the new state.
func TestCrashDuringDeleteCleanSnapshot(t *testing.T) {
	// A DB with blocks and head data, a deletion already in its blocks.
	base := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = base
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	lsets := loadSeries(t, 60)
	ingestScrapes(t, db, lsets, 5*240)
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())
	metric := labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, lsets[0].Get(labels.MetricName))
	require.NoError(t, db.Delete(ctx, 0, 3600_000, metric))
	require.NoError(t, db.Close())
	base.SyncAll()

	other := labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, lsets[7].Get(labels.MetricName))
	ops := []struct {
		name string
		run  func(db *DB) error
		// check returns the state to compare: of the DB, or of the snapshot.
		snapshot bool
	}{
		{"delete", func(db *DB) error { return db.Delete(ctx, 1800_000, 4*3600_000, other) }, false},
		{"cleanTombstones", func(db *DB) error { return db.CleanTombstones(ctx) }, false},
		{"snapshot", func(db *DB) error { return db.Snapshot("snap", true) }, true},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			oldState := dbState(t, base.Crash(), "data")
			// The new state, and the number of writes the operation makes.
			fs1 := base.Crash()
			o1 := DefaultOptions()
			o1.FS = fs1
			db, err := Open("data", nil, nil, o1)
			require.NoError(t, err)
			n0 := fs1.Ops()
			require.NoError(t, op.run(db))
			writes := fs1.Ops() - n0
			require.NoError(t, db.Close())
			stateDir := "data"
			if op.snapshot {
				stateDir = "snap"
			}
			newState := dbState(t, fs1.Crash(), stateDir)
			if op.name == "delete" {
				require.NotEqual(t, oldState, newState, "the operation changes something")
			}
			stride := 1
			if raceEnabled {
				stride = 5
			}
			t.Logf("%s: %d writes", op.name, writes)
			for k := 0; k <= writes; k += stride {
				fsk := base.Crash()
				ok := DefaultOptions()
				ok.FS = fsk
				db, err := Open("data", nil, nil, ok)
				require.NoError(t, err)
				fsk.CrashAfter(k)
				_ = op.run(db) // may fail after the crash point; what counts is the disk
				crashed := fsk.CrashState()
				_ = db.Close()

				got := dbState(t, crashed, "data")
				if op.snapshot {
					require.Equal(t, oldState, got, "crash after write %d: the source DB changed", k)
					if _, err := crashed.Stat("snap"); err != nil {
						continue // no snapshot: the old state
					}
					got = dbState(t, crashed, "snap")
				}
				require.True(t, got == oldState || got == newState,
					"crash after write %d of %d: neither the old nor the new state", k, writes)
			}
		})
	}
}
