package tsdb

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// appendOne appends one sample in a transaction of its own and returns
// the ref Append returned.
func appendOne(t *testing.T, db *DB, ref SeriesRef, ls labels.Labels, ts int64, v float64) SeriesRef {
	t.Helper()
	app := db.Appender(context.Background())
	ref, err := app.Append(ref, ls, ts, v)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	return ref
}

// allSamples returns every sample a new Querier over all time sees.
func allSamples(t *testing.T, db *DB) map[string][]sample {
	t.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	return querySamples(t, q)
}

// TestAppendRefContract tests each part of the ref contract in the
// Appender.Append doc, within one DB's life.
func TestAppendRefContract(t *testing.T) {
	a := labels.FromStrings("__name__", "a")
	b := labels.FromStrings("__name__", "b")
	c := labels.FromStrings("__name__", "c")
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, db *DB)
	}{
		{"ref wins over the labels", func(t *testing.T, db *DB) {
			refA := appendOne(t, db, 0, a, 1000, 1)
			got := appendOne(t, db, refA, b, 2000, 2)
			require.Equal(t, refA, got, "the ref's series took the sample")
			require.Equal(t, map[string][]sample{a.String(): {{1000, 1}, {2000, 2}}}, allSamples(t, db),
				"no series b: its labels were not looked at")
			require.EqualValues(t, 1, db.Head().NumSeries())
		}},
		{"unknown ref falls back to the labels", func(t *testing.T, db *DB) {
			refA := appendOne(t, db, 0, a, 1000, 1)
			// (Not refA+1: that is the ref the next new series gets.)
			for _, unknown := range []SeriesRef{refA + 1000, 5 * refPageSize, maxDenseRef + 3} {
				got := appendOne(t, db, unknown, b, 1000+int64(unknown%1000), 1)
				require.NotEqual(t, unknown, got)
				require.Greater(t, got, refA)
				require.Same(t, db.head.series.getByHash(b.Hash(), b), db.head.series.getByRef(got))
			}
			require.EqualValues(t, 2, db.Head().NumSeries(), "b was created once, then found by its labels")
			// An unknown ref with the labels of an existing series finds it.
			require.Equal(t, refA, appendOne(t, db, refA+77, a, 5000, 5))
		}},
		{"ref of a rolled-back append stays valid", func(t *testing.T, db *DB) {
			app := db.Appender(context.Background())
			ref, err := app.Append(0, a, 1000, 1)
			require.NoError(t, err)
			require.NoError(t, app.Rollback())
			require.Empty(t, allSamples(t, db))
			require.Equal(t, ref, appendOne(t, db, ref, a, 1000, 2))
			require.Equal(t, ref, appendOne(t, db, 0, a, 2000, 3), "the labels find the same series")
			// A failed Commit (here: a cancelled context) leaves it valid too.
			ctx, cancel := context.WithCancel(context.Background())
			app = db.Appender(ctx)
			refC, err := app.Append(0, c, 3000, 1)
			require.NoError(t, err)
			cancel()
			require.ErrorIs(t, app.Commit(), context.Canceled)
			require.Equal(t, refC, appendOne(t, db, refC, c, 3000, 4))
			require.Equal(t, map[string][]sample{a.String(): {{1000, 2}, {2000, 3}}, c.String(): {{3000, 4}}}, allSamples(t, db))
		}},
		{"refs are never reused after head compaction", func(t *testing.T, db *DB) {
			// b has samples only in the first block range: the head
			// compaction writes them to a block and removes the series.
			refA := appendOne(t, db, 0, a, 0, 1)
			refB := appendOne(t, db, 0, b, 0, 1)
			appendOne(t, db, refA, a, 4*hour, 2)
			require.NoError(t, db.Compact(context.Background()))
			require.Len(t, db.Blocks(), 1)
			require.Nil(t, db.head.series.getByRef(refB), "b left the head")
			require.Equal(t, refA, appendOne(t, db, refA, a, 4*hour+1, 3))
			// b's old ref is unknown now: the labels create b again,
			// under a new ref; and no new series takes b's old ref.
			refB2 := appendOne(t, db, refB, b, 4*hour, 2)
			require.NotEqual(t, refB, refB2)
			refC := appendOne(t, db, 0, c, 4*hour, 1)
			require.Greater(t, refB2, refB)
			require.Greater(t, refC, refB2)
			require.Equal(t, map[string][]sample{
				a.String(): {{0, 1}, {4 * hour, 2}, {4*hour + 1, 3}},
				b.String(): {{0, 1}, {4 * hour, 2}},
				c.String(): {{4 * hour, 1}},
			}, allSamples(t, db))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, _ := openTestDB(t, nil)
			tc.run(t, db)
		})
	}
}

// TestAppendRefsAcrossRestart writes down what becomes of refs when the
// DB is closed and opened again: series replayed from the WAL keep their
// refs, new series get refs above them, and the ref of a series removed
// before the restart (and gone from the WAL) is handed out again, to a
// new series, which is why refs must not be kept across Open.
func TestAppendRefsAcrossRestart(t *testing.T) {
	a := labels.FromStrings("__name__", "a")
	b := labels.FromStrings("__name__", "b")
	c := labels.FromStrings("__name__", "c")
	d := labels.FromStrings("__name__", "d")
	var fsys vfs.FS
	open := func() *DB {
		o := DefaultOptions()
		o.FS = fsys
		db, err := Open("data", nil, nil, o)
		require.NoError(t, err)
		return db
	}

	t.Run("replayed series keep their refs", func(t *testing.T) {
		fsys = vfs.NewMemFS()
		db := open()
		refA := appendOne(t, db, 0, a, 1000, 1)
		refB := appendOne(t, db, 0, b, 1000, 1)
		require.NoError(t, db.Close())

		db = open()
		defer func() { require.NoError(t, db.Close()) }()
		require.Equal(t, refA, appendOne(t, db, 0, a, 2000, 2), "found by labels: the WAL's ref")
		require.Equal(t, refB, appendOne(t, db, refB, b, 2000, 2), "the old ref names the same series")
		require.Greater(t, appendOne(t, db, 0, c, 2000, 1), refB, "a new series gets a ref above the WAL's")
	})

	t.Run("ref of a series removed before the restart is reused", func(t *testing.T) {
		fsys = vfs.NewMemFS()
		db := open()
		refA := appendOne(t, db, 0, a, 3000, 3)
		refD := appendOne(t, db, 0, d, 3000, 1) // the newest ref
		// Everything but a's newest sample goes into a block; the head
		// drops d, and the WAL checkpoint (of the only segment) drops
		// d's series record and samples.
		appendOne(t, db, refA, a, 5*hour, 4)
		require.NoError(t, db.Compact(context.Background()))
		require.Nil(t, db.head.series.getByRef(refD))
		require.NoError(t, db.Close())

		db = open()
		defer func() { require.NoError(t, db.Close()) }()
		require.Equal(t, refA, appendOne(t, db, 0, a, 5*hour+1, 5), "a kept its ref")
		e := labels.FromStrings("__name__", "e")
		refE := appendOne(t, db, 0, e, 5*hour, 1)
		require.Equal(t, refD, refE, "d's ref was handed out again, to e")
		// A caller that kept d's ref across the restart now appends to e:
		// the hazard the Append doc warns of.
		require.Equal(t, refE, appendOne(t, db, refD, d, 5*hour+1, 2))
		got := allSamples(t, db)
		require.Equal(t, []sample{{5 * hour, 1}, {5*hour + 1, 2}}, got[e.String()])
		require.Equal(t, []sample{{3000, 1}}, got[d.String()], "d has only its sample in the block")
	})

	t.Run("ref of a removed series still in the WAL is not reused", func(t *testing.T) {
		// As above, but d's series record stays in a WAL segment the
		// checkpoint does not cover: replay creates d again (without
		// samples) under its old ref.
		fsys = vfs.NewMemFS()
		for range 3 { // three sessions, three WAL segments
			db := open()
			require.NoError(t, db.Close())
		}
		db := open()
		refA := appendOne(t, db, 0, a, 3000, 3)
		refD := appendOne(t, db, 0, d, 3000, 1)
		appendOne(t, db, refA, a, 5*hour, 4)
		require.NoError(t, db.Compact(context.Background()))
		require.Nil(t, db.head.series.getByRef(refD))
		require.NoError(t, db.Close())

		db = open()
		defer func() { require.NoError(t, db.Close()) }()
		require.Equal(t, refD, appendOne(t, db, 0, d, 5*hour, 2), "d is back under its old ref")
		require.Greater(t, appendOne(t, db, 0, labels.FromStrings("__name__", "e"), 5*hour, 1), refD)
	})
}

// TestAppendRefsDuplicateSeriesRecord: a WAL may define one label set
// under two refs (Prometheus's WAL does, when a series came back after its
// head garbage collection). Replay maps the second ref to the first; a
// new series must not take the second ref, or the next replay, reading
// the duplicate record first, would give its samples to the first series.
// (Before the fix, replay raised the ref counter only for the refs of the
// series it created, and the next replay moved the new series' sample.)
func TestAppendRefsDuplicateSeriesRecord(t *testing.T) {
	x, y := labels.FromStrings("__name__", "x"), labels.FromStrings("__name__", "y")
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	refX := appendOne(t, db, 0, x, 1000, 1)
	// x again, under the next ref, with no sample of that ref.
	var enc record.Encoder
	require.NoError(t, db.head.wal.Log(enc.Series([]record.RefSeries{{Ref: uint64(refX) + 1, Labels: x}}, nil)))
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	require.Equal(t, refX, appendOne(t, db, 0, x, 2000, 2), "x keeps its first ref")
	refY := appendOne(t, db, 0, y, 2000, 7)
	require.Greater(t, refY, refX+1, "a new series takes no ref the WAL defined")
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, map[string][]sample{
		x.String(): {{1000, 1}, {2000, 2}},
		y.String(): {{2000, 7}},
	}, allSamples(t, db))
}

// TestCheckpointKeepsDuplicateRefSamples: samples the WAL logged under a
// duplicate series record (another ref for the labels of a series the
// WAL defined first, as Prometheus's WAL can hold) belong to that series
// at replay, so the checkpoint must keep them and the duplicate record
// while the series lives: after the checkpoint and a restart they are
// still there.
func TestCheckpointKeepsDuplicateRefSamples(t *testing.T) {
	x := labels.FromStrings("__name__", "x")
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	refX := appendOne(t, db, 0, x, 0, 0)
	dup := uint64(refX) + 1
	var enc record.Encoder
	require.NoError(t, db.head.wal.Log(
		enc.Series([]record.RefSeries{{Ref: dup, Labels: x}}, nil),
		enc.Samples([]record.RefSample{{Ref: dup, T: 5 * hour / 2, V: 25}}, nil)))
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	require.Equal(t, map[string][]sample{x.String(): {{0, 0}, {5 * hour / 2, 25}}}, allSamples(t, db), "replay gives the duplicate's sample to x")
	appendOne(t, db, refX, x, 7*hour/2, 35)
	require.NoError(t, db.Compact(context.Background()))
	require.Len(t, db.Blocks(), 1)
	_, idx, err := wlog.LastCheckpoint(o.FS, "data/wal")
	require.NoError(t, err, "the compaction checkpointed the WAL")
	first, _, err := db.head.wal.Segments()
	require.NoError(t, err)
	require.Greater(t, first, idx, "the checkpointed segments, the duplicate's among them, are gone")
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, map[string][]sample{x.String(): {{0, 0}, {5 * hour / 2, 25}, {7 * hour / 2, 35}}}, allSamples(t, db))
}
