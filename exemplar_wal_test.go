package tsdb

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// reopenExemplars opens the DB in fsys with room for n exemplars, for
// the duration of the test, and returns it and its registry.
func reopenExemplars(t *testing.T, fsys vfs.FS, n int64) (*DB, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	db, err := Open("data", nil, reg, exemplarOpts(fsys, n))
	require.NoError(t, err)
	require.NoError(t, db.head.checkInvariants(true))
	return db, reg
}

// TestExemplarReplay: committed exemplars come back after a restart, from
// commits with samples (a commit group) and of exemplars only; with
// exemplars off they are skipped (counted) but their commits' samples are
// not; with a smaller ring the newest come back.
func TestExemplarReplay(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, _ := reopenExemplars(t, fsys, 10)
	a1, a2 := labels.FromStrings("__name__", "m", "i", "1"), labels.FromStrings("__name__", "m", "i", "2")
	app := db.Appender(context.Background())
	r1, err := app.Append(0, a1, 10, 1)
	require.NoError(t, err)
	r2, err := app.Append(0, a2, 10, 2)
	require.NoError(t, err)
	_, err = app.AppendExemplar(r1, a1, ex("x", 1, 10))
	require.NoError(t, err)
	_, err = app.AppendExemplar(r2, a2, ex("y", 2, 10))
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	app = db.Appender(context.Background())
	_, err = app.AppendExemplar(r1, a1, ex("z", 3, 20)) // exemplars only
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	app = db.Appender(context.Background())
	_, err = app.AppendExemplar(r1, a1, ex("rolled back", 4, 30))
	require.NoError(t, err)
	require.NoError(t, app.Rollback())
	want := exemplarTraces(allExemplars(t, db))
	require.Equal(t, []string{`{__name__="m", i="1"}: x@10=1 z@20=3`, `{__name__="m", i="2"}: y@10=2`}, want)
	require.NoError(t, db.Close())

	db, reg := reopenExemplars(t, fsys, 10)
	res := allExemplars(t, db)
	require.Equal(t, want, exemplarTraces(res))
	require.False(t, res[0].Exemplars[0].HasTs, "the WAL does not keep HasTs")
	require.Equal(t, `{trace_id="x"}`, res[0].Exemplars[0].Labels.String())
	require.Equal(t, 3.0, gauge(t, reg, "tsdb_exemplar_exemplars_appended_total"))
	require.NoError(t, db.Close())

	db, reg = reopenExemplars(t, fsys, 0)
	require.Empty(t, allExemplars(t, db))
	require.Equal(t, 2.0, gaugeWithLabel(t, reg, "tsdb_wal_records_skipped_total", "type", "exemplars"))
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	require.Len(t, querySamples(t, q), 2, "the samples of a commit group with an exemplar record skipped are replayed")
	require.NoError(t, q.Close())
	require.NoError(t, db.Close())

	db, _ = reopenExemplars(t, fsys, 1)
	require.Equal(t, []string{`{__name__="m", i="1"}: z@20=3`}, exemplarTraces(allExemplars(t, db)))
	require.NoError(t, db.Close())
}

// TestExemplarReplayForeignWAL replays a WAL written record by record as
// Prometheus writes it (exemplars in a record of their own after the
// samples, no commit group), a complete commit group of ours, and a torn
// one at the end: the first two come back, the torn commit neither with
// its samples nor with its exemplars. Exemplars of unknown series, with
// duplicate label names or out of order are dropped.
func TestExemplarReplayForeignWAL(t *testing.T) {
	fsys := vfs.NewMemFS()
	w, err := wlog.Open(nil, nil, fsys, filepath.Join("data", "wal"), wlog.Options{})
	require.NoError(t, err)
	var enc record.Encoder
	series := []record.RefSeries{{Ref: 1, Labels: labels.FromStrings("__name__", "m", "i", "1")}, {Ref: 2, Labels: labels.FromStrings("__name__", "m", "i", "2")}}
	require.NoError(t, w.Log(enc.Series(series, nil)))
	// Prometheus's way: samples, then exemplars, each its own record.
	require.NoError(t, w.Log(enc.Samples([]record.RefSample{{Ref: 1, T: 10, V: 1}, {Ref: 2, T: 10, V: 2}}, nil)))
	require.NoError(t, w.Log(enc.Exemplars([]record.RefExemplar{
		{Ref: 1, T: 10, V: 1, Labels: labels.FromStrings("trace_id", "prom")},
		{Ref: 2, T: 10, V: 2, Labels: labels.FromStrings("trace_id", "prom2")},
		{Ref: 99, T: 10, V: 2, Labels: labels.FromStrings("trace_id", "unknown series")},
		{Ref: 2, T: 5, V: 2, Labels: labels.FromStrings("trace_id", "out of order")},
	}, nil)))
	// Ours: a complete group.
	require.NoError(t, w.Log(enc.CommitGroup(2, nil),
		enc.Samples([]record.RefSample{{Ref: 1, T: 20, V: 3}}, nil),
		enc.Exemplars([]record.RefExemplar{{Ref: 1, T: 20, V: 3, Labels: labels.FromStrings("trace_id", "group")}}, nil)))
	// A torn group: the log ends before its third record.
	require.NoError(t, w.Log(enc.CommitGroup(3, nil),
		enc.Samples([]record.RefSample{{Ref: 1, T: 30, V: 4}}, nil),
		enc.Exemplars([]record.RefExemplar{{Ref: 1, T: 30, V: 4, Labels: labels.FromStrings("trace_id", "torn")}}, nil)))
	require.NoError(t, w.Close())

	db, _ := reopenExemplars(t, fsys, 10)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, []string{
		`{__name__="m", i="1"}: prom@10=1 group@20=3`,
		`{__name__="m", i="2"}: prom2@10=2`,
	}, exemplarTraces(allExemplars(t, db)))
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	require.Equal(t, []sample{{10, 1}, {20, 3}}, querySamples(t, q)[`{__name__="m", i="1"}`], "the torn commit's sample is gone too")
}

// TestExemplarCheckpoint: a WAL checkpoint keeps the exemplars of series
// in the head from its time on, and drops the older ones, as Prometheus's
// does; after a restart the exemplars come back from the checkpoint.
func TestExemplarCheckpoint(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, _ := reopenExemplars(t, fsys, 100)
	ls := labels.FromStrings("__name__", "m")
	var ref SeriesRef
	for i := range 10 {
		app := db.Appender(context.Background())
		var err error
		ref, err = app.Append(ref, ls, int64(i*100), float64(i))
		require.NoError(t, err)
		_, err = app.AppendExemplar(ref, ls, ex("t", float64(i), int64(i*100)))
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.cmtx.lock(context.Background()))
	err := db.checkpointWAL(500)
	db.cmtx.unlock()
	require.NoError(t, err)
	_, _, err = wlog.LastCheckpoint(fsys, filepath.Join("data", "wal"))
	require.NoError(t, err, "a checkpoint was written")
	require.NoError(t, db.Close())

	db, _ = reopenExemplars(t, fsys, 100)
	defer func() { require.NoError(t, db.Close()) }()
	res := allExemplars(t, db)
	require.Len(t, res, 1)
	var ts []int64
	for _, e := range res[0].Exemplars {
		ts = append(ts, e.Ts)
	}
	require.Equal(t, []int64{500, 600, 700, 800, 900}, ts)
}
