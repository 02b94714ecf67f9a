package tsdb

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// Files of a data directory that go missing must never bring deleted data
// back or lose data silently.

// TestMissingTombstonesFile: delete a range in a block, compact, remove
// the block's tombstones file and reopen. The block is reported as corrupt
// by name and skipped (the deleted samples never come back), the rest of
// the DB keeps serving, and the offline checker reports an error for it. A
// missing tombstones file of a block whose meta.json counts no tombstones
// means no deletions, as in Prometheus.
func TestMissingTombstonesFile(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	scrapeHours(t, db, loadSeries(t, 100), 6)
	require.NoError(t, db.Compact(ctx))
	require.GreaterOrEqual(t, len(db.Blocks()), 2)
	first := db.Blocks()[0]
	del := labels.MustNewMatcher(labels.MatchEqual, "instance", "host-0:9100")
	dmint, dmaxt := first.MinTime+600_000, first.MaxTime-600_000
	require.NoError(t, db.Delete(ctx, dmint, dmaxt, del))
	require.NoError(t, db.Compact(ctx))

	// The block holding the tombstones, and one without any.
	var damaged, clean BlockMeta
	for _, m := range db.Blocks() {
		switch {
		case m.Stats.NumTombstones > 0:
			damaged = m
		case m.MinTime > dmaxt:
			clean = m
		}
	}
	require.Positive(t, damaged.Stats.NumTombstones, "a block holds the deletion")
	require.NotZero(t, clean.ULID, "a block without tombstones")
	deletedSeries := func(q Querier) map[string][]sample { return querySamples(t, q, del) }
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	before := deletedSeries(q)
	require.NoError(t, q.Close())
	require.NotEmpty(t, before)
	require.NoError(t, db.Close())

	damagedDir := filepath.Join("data", damaged.ULID.String())
	require.NoError(t, fsys.Remove(filepath.Join(damagedDir, tombstones.Filename)))
	require.NoError(t, fsys.Remove(filepath.Join("data", clean.ULID.String(), tombstones.Filename)))

	rep, err := check.Dir(fsys, "data")
	require.NoError(t, err)
	require.Error(t, rep.Err())
	require.Contains(t, rep.Err().Error(), filepath.Join(damagedDir, tombstones.Filename))
	require.Contains(t, rep.Err().Error(), "tombstones file is missing")
	require.NotContains(t, rep.Err().Error(), clean.ULID.String(), "no tombstones counted, none lost")

	var logBuf lockedBuffer
	reg := prometheus.NewRegistry()
	db, err = Open("data", slogTo(&logBuf), reg, o)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_blocks_corrupt_total"))
	require.Contains(t, logBuf.String(), damaged.ULID.String())
	require.Contains(t, logBuf.String(), "no tombstones file")
	var ids []string
	for _, m := range db.Blocks() {
		ids = append(ids, m.ULID.String())
	}
	require.NotContains(t, ids, damaged.ULID.String(), "the damaged block is skipped")
	require.Contains(t, ids, clean.ULID.String(), "a block without tombstones counted opens without the file")

	q, err = db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	after := deletedSeries(q)
	require.NotEmpty(t, after, "the rest keeps serving")
	for s, samples := range after {
		for _, smp := range samples {
			require.False(t, smp.T >= dmint && smp.T <= dmaxt, "deleted sample of %s at %d is back", s, smp.T)
		}
	}
}

// walTestSeries is the number of series walTestDB writes.
const walTestSeries = 100

// walTestDB writes rounds scrapes of walTestSeries series into a DB in
// data on fsys with small WAL segments, compacting at the end if compact,
// and closes it. It returns the WAL directory.
func walTestDB(t *testing.T, fsys vfs.FS, rounds int, compact bool) string {
	t.Helper()
	o := DefaultOptions()
	o.FS = fsys
	o.WALSegmentSize = 32 << 10
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	ingestScrapes(t, db, loadSeries(t, walTestSeries), rounds)
	if compact {
		require.NoError(t, db.Compact(ctx))
	}
	require.NoError(t, db.Close())
	return filepath.Join("data", "wal")
}

// walState returns the segment indexes of the WAL in dir and the index of
// its last checkpoint (-1 if none).
func walState(t *testing.T, fsys vfs.FS, dir string) (segs []int, cp int) {
	t.Helper()
	segs, err := wlog.SegmentIndexes(fsys, dir)
	require.NoError(t, err)
	_, cp, err = wlog.LastCheckpoint(fsys, dir)
	if err != nil {
		require.ErrorIs(t, err, wlog.ErrNotFound)
		cp = -1
	}
	return segs, cp
}

// openWALTest opens data on fsys, with AcceptIncompleteWAL if accept, and
// returns the DB (nil on error), the log and the error.
func openWALTest(fsys vfs.FS, accept bool) (*DB, string, error) {
	o := DefaultOptions()
	o.FS = fsys
	o.WALSegmentSize = 32 << 10
	o.AcceptIncompleteWAL = accept
	var logBuf lockedBuffer
	db, err := Open("data", slogTo(&logBuf), nil, o)
	return db, logBuf.String(), err
}

// requireWALChecks reports whether the offline checker finds an error
// containing want ("" for a clean WAL).
func requireWALChecks(t *testing.T, fsys vfs.FS, want string) {
	t.Helper()
	rep, err := check.Dir(fsys, "data")
	require.NoError(t, err)
	if want == "" {
		require.NoError(t, rep.Err())
		return
	}
	require.Error(t, rep.Err())
	require.Contains(t, rep.Err().Error(), want)
}

// appendAndReopen commits one sample of a new series to db, closes it,
// reopens without AcceptIncompleteWAL and checks that the sample is there:
// the WAL is in a normal state again and new records are replayed.
func appendAndReopen(t *testing.T, fsys vfs.FS, db *DB) {
	t.Helper()
	lset := labels.FromStrings(labels.MetricName, "after_the_loss")
	app := db.Appender(ctx)
	_, err := app.Append(0, lset, math.MaxInt32, 42)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())
	db, _, err = openWALTest(fsys, false)
	require.NoError(t, err)
	defer db.Close()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	got := querySamples(t, q, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "after_the_loss"))
	require.Equal(t, map[string][]sample{lset.String(): {{math.MaxInt32, 42}}}, got)
}

// TestWALMissingSegments: a WAL whose segments do not start right after
// its checkpoint (or at 0 without one) lost data. Open refuses it with
// ErrWALIncomplete naming the directory and the missing segments, and so
// does the checker; with AcceptIncompleteWAL it opens with a warning and
// records the loss, so that later opens need no option. A gap between
// segments is refused even with the option.
func TestWALMissingSegments(t *testing.T) {
	walDir := filepath.Join("data", "wal")

	t.Run("no checkpoint, first segments gone", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		walTestDB(t, fsys, 400, false)
		segs, cp := walState(t, fsys, walDir)
		require.Equal(t, -1, cp)
		require.GreaterOrEqual(t, len(segs), 4)
		require.Equal(t, 0, segs[0])
		for _, k := range segs[:2] {
			require.NoError(t, fsys.Remove(wlog.SegmentName(walDir, k)))
		}

		_, _, err := openWALTest(fsys, false)
		require.ErrorIs(t, err, ErrWALIncomplete)
		require.Contains(t, err.Error(), walDir)
		require.Contains(t, err.Error(), "segments 00000000 to 00000001 are missing (no checkpoint)")
		_, err = OpenReadOnly("data", nil, &Options{FS: fsys})
		require.ErrorIs(t, err, ErrWALIncomplete)
		requireWALChecks(t, fsys, "segments 0 to 1, before the first segment, with no checkpoint covering them, are missing")
		after, _ := walState(t, fsys, walDir)
		require.Equal(t, segs[2:], after, "a refused open changes nothing")

		db, log, err := openWALTest(fsys, true)
		require.NoError(t, err)
		require.Contains(t, log, "WAL segments are missing")
		require.Contains(t, log, "segments 00000000 to 00000001 are")
		_, cp = walState(t, fsys, walDir)
		require.Equal(t, 1, cp, "the loss is recorded as an empty checkpoint")
		appendAndReopen(t, fsys, db)
		requireWALChecks(t, fsys, "")
	})

	t.Run("checkpoint present, truncated normally", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		walTestDB(t, fsys, 5*3600/15, true)
		segs, cp := walState(t, fsys, walDir)
		require.GreaterOrEqual(t, cp, 0)
		require.Equal(t, cp+1, segs[0])
		requireWALChecks(t, fsys, "")
		db, _, err := openWALTest(fsys, false)
		require.NoError(t, err)
		require.NoError(t, db.Close())
	})

	t.Run("segment after the checkpoint gone", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		walTestDB(t, fsys, 5*3600/15, true)
		segs, cp := walState(t, fsys, walDir)
		require.GreaterOrEqual(t, len(segs), 2)
		require.NoError(t, fsys.Remove(wlog.SegmentName(walDir, cp+1)))

		_, _, err := openWALTest(fsys, false)
		require.ErrorIs(t, err, ErrWALIncomplete)
		require.Contains(t, err.Error(), walDir)
		require.Contains(t, err.Error(), segmentSpan(cp+1, cp+1)+" missing (last checkpoint checkpoint.")
		requireWALChecks(t, fsys, "between the checkpoint and the first segment, are missing")

		db, log, err := openWALTest(fsys, true)
		require.NoError(t, err)
		require.Contains(t, log, "WAL segments are missing")
		_, cp2 := walState(t, fsys, walDir)
		require.Equal(t, cp+1, cp2, "the checkpoint now covers the lost segment")
		appendAndReopen(t, fsys, db)
		requireWALChecks(t, fsys, "")
	})

	t.Run("no segment after the checkpoint", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		walTestDB(t, fsys, 5*3600/15, true)
		segs, cp := walState(t, fsys, walDir)
		for _, k := range segs {
			require.NoError(t, fsys.Remove(wlog.SegmentName(walDir, k)))
		}
		_, _, err := openWALTest(fsys, false)
		require.ErrorIs(t, err, ErrWALIncomplete)
		require.Contains(t, err.Error(), "and any after it are missing")
		requireWALChecks(t, fsys, "(the one after the checkpoint) and any after it are missing")

		db, _, err := openWALTest(fsys, true)
		require.NoError(t, err)
		segs, _ = walState(t, fsys, walDir)
		require.Equal(t, cp+1, segs[0], "new records go after the checkpoint, where replay reads them")
		appendAndReopen(t, fsys, db)
		requireWALChecks(t, fsys, "")
	})

	t.Run("gap between segments", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		walTestDB(t, fsys, 400, false)
		segs, _ := walState(t, fsys, walDir)
		require.GreaterOrEqual(t, len(segs), 4)
		gone := segs[2]
		require.NoError(t, fsys.Remove(wlog.SegmentName(walDir, gone)))
		for _, accept := range []bool{false, true} {
			_, _, err := openWALTest(fsys, accept)
			require.ErrorIs(t, err, ErrWALIncomplete, "accept=%v", accept)
			require.Contains(t, err.Error(), walDir)
			require.Contains(t, err.Error(), segmentSpan(gone, gone)+" missing between segments")
		}
		requireWALChecks(t, fsys, "are missing")
	})

	// A crash after a checkpoint was published and before the segments it
	// covers were deleted leaves them next to it: the normal state. (A
	// failing Remove leaves the same files.)
	t.Run("crash between checkpoint and truncation", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		walTestDB(t, fsys, 600, false) // 2.5 h: not compactable yet
		before, cp := walState(t, fsys, walDir)
		require.Equal(t, -1, cp)
		db, _, err := openWALTest(fsys, false)
		require.NoError(t, err)
		boom := errors.New("boom")
		fsys.SetHook(func(op vfs.Op, name string) error {
			if op == vfs.OpRemove && filepath.Dir(name) == walDir {
				return boom
			}
			return nil
		})
		lsets := loadSeries(t, walTestSeries)
		for r := 600; r < 5*3600/15; r++ {
			app := db.Appender(ctx)
			for i, l := range lsets {
				_, err := app.Append(0, l, int64(r)*15000, scrapeValue(i, r))
				require.NoError(t, err)
			}
			require.NoError(t, app.Commit())
		}
		// The background compaction or this one cuts a block, publishes a
		// checkpoint and fails to delete the segments it covers.
		if err := db.Compact(ctx); err != nil {
			require.ErrorIs(t, err, boom)
		}
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		want := querySamples(t, q)
		require.NoError(t, q.Close())
		require.NoError(t, db.Close())
		fsys.SetHook(nil)
		segs, cp := walState(t, fsys, walDir)
		require.GreaterOrEqual(t, cp, 0, "the checkpoint was published")
		require.Equal(t, before[0], segs[0], "the segments it covers are still there")
		require.Less(t, segs[0], cp)

		requireWALChecks(t, fsys, "")
		db, log, err := openWALTest(fsys, false)
		require.NoError(t, err)
		defer db.Close()
		require.NotContains(t, log, "missing")
		q, err = db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		defer q.Close()
		requireSameSamples(t, want, querySamples(t, q))
	})
}

// TestCheckpointAfterFailedTruncation: a checkpoint is published but the
// segments it covers cannot be removed; once removing works again, the
// next head compaction finishes that truncation and checkpoints on (it
// used to fail with "checkpoint N already covers segment N" until a
// restart).
func TestCheckpointAfterFailedTruncation(t *testing.T) {
	walDir := filepath.Join("data", "wal")
	fsys := vfs.NewMemFS()
	walTestDB(t, fsys, 600, false)
	db, _, err := openWALTest(fsys, false)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	noWakeups(db)
	boom := errors.New("boom")
	fsys.SetHook(func(op vfs.Op, name string) error {
		if op == vfs.OpRemove && filepath.Dir(name) == walDir {
			return boom
		}
		return nil
	})
	lsets := loadSeries(t, walTestSeries)
	commitRounds := func(from, to int) {
		for r := from; r < to; r++ {
			app := db.Appender(ctx)
			for i, l := range lsets {
				_, err := app.Append(0, l, int64(r)*15000, scrapeValue(i, r))
				require.NoError(t, err)
			}
			require.NoError(t, app.Commit())
		}
	}
	commitRounds(600, 5*3600/15)
	require.ErrorIs(t, db.Compact(ctx), boom)
	segs, cp := walState(t, fsys, walDir)
	require.GreaterOrEqual(t, cp, 0, "the checkpoint was published")
	require.Less(t, segs[0], cp, "the segments it covers are still there")

	// The head still spans more than 1.5 block ranges: the next
	// compaction cuts another block and checkpoints again, with few new
	// segments after the first checkpoint.
	fsys.SetHook(nil)
	require.NoError(t, db.Compact(ctx))
	segs2, cp2 := walState(t, fsys, walDir)
	require.Greater(t, cp2, cp, "a new checkpoint")
	require.Greater(t, segs2[0], cp2, "the segments it covers are gone")
}
