package tsdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// openMetaDB opens the DB in "data" on fsys; the caller closes it.
func openMetaDB(t *testing.T, fsys vfs.FS) *DB {
	t.Helper()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	return db
}

// headMetadata returns what a new Querier's Metadata returns.
func headMetadata(t *testing.T, db *DB) map[string][]Metadata {
	t.Helper()
	q, err := db.Querier(0, 1)
	require.NoError(t, err)
	defer q.Close()
	all, err := q.Metadata(context.Background(), "")
	require.NoError(t, err)
	return all
}

// walRecordTypes returns the types of the records in the WAL's segments
// (checkpoints not included), in order.
func walRecordTypes(t *testing.T, fsys vfs.FS) []record.Type {
	t.Helper()
	sr, err := wlog.NewSegmentsReader(fsys, filepath.Join("data", "wal"))
	require.NoError(t, err)
	defer sr.Close()
	r := wlog.NewReader(sr)
	var types []record.Type
	for r.Next() {
		types = append(types, record.RecordType(r.Record()))
	}
	require.NoError(t, r.Err())
	return types
}

// TestMetadataReplay: metadata survives a restart, from commits of every
// shape: floats with metadata (a commit group), metadata alone (a lone
// Metadata record), histograms with metadata, a later update replacing
// an earlier one.
func TestMetadataReplay(t *testing.T) {
	fsys := vfs.NewMemFS()
	db := openMetaDB(t, fsys)
	a := labels.FromStrings("__name__", "a_total")
	b := labels.FromStrings("__name__", "b")
	b2 := labels.FromStrings("__name__", "b", "x", "2")
	hist := labels.FromStrings("__name__", "h")
	appendWithMeta(t, db, a, 10, mdCounter)
	appendWithMeta(t, db, b, 10, mdCounter)
	appendWithMeta(t, db, b2, 10, mdGauge)
	app := db.Appender(context.Background())
	_, err := app.UpdateMetadata(0, b, mdGauge) // metadata alone
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	app = db.Appender(context.Background())
	_, err = app.AppendHistogram(0, hist, 10, testHistogram(1), nil)
	require.NoError(t, err)
	hm := Metadata{Type: MetricTypeHistogram, Unit: "seconds", Help: "Latency."}
	_, err = app.UpdateMetadata(0, hist, hm)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	want := map[string][]Metadata{"a_total": {mdCounter}, "b": {mdGauge}, "h": {hm}}
	require.Equal(t, want, headMetadata(t, db))
	require.NoError(t, db.Close())

	types := walRecordTypes(t, fsys)
	require.Equal(t, []record.Type{
		record.Series, record.CommitGroup, record.Samples, record.Metadata,
		record.Series, record.CommitGroup, record.Samples, record.Metadata,
		record.Series, record.CommitGroup, record.Samples, record.Metadata,
		record.Metadata,
		record.Series, record.CommitGroup, record.HistogramSamples, record.Metadata,
	}, types)

	db = openMetaDB(t, fsys)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, want, headMetadata(t, db))
	m, ok := seriesMetaNow(t, db, b)
	require.True(t, ok)
	require.Equal(t, mdGauge, m)
	// Replayed metadata is current: an equal update buffers nothing.
	app = db.Appender(context.Background())
	_, err = app.UpdateMetadata(0, b, mdGauge)
	require.NoError(t, err)
	require.Nil(t, app.(*headAppender).appendBatch)
	require.NoError(t, app.Rollback())
}

// TestMetadataReplayForeign replays records laid out as Prometheus writes
// them (no commit groups; metadata in its own records, possibly with
// several entries of one series, unknown types) and a torn commit group
// holding metadata, which must not apply.
func TestMetadataReplayForeign(t *testing.T) {
	fsys := vfs.NewMemFS()
	dir := filepath.Join("data", "wal")
	require.NoError(t, fsys.MkdirAll(dir, 0o777))
	w, err := wlog.Open(nil, nil, fsys, dir, wlog.Options{})
	require.NoError(t, err)
	var enc record.Encoder
	series := []record.RefSeries{
		{Ref: 1, Labels: labels.FromStrings("__name__", "a")},
		{Ref: 2, Labels: labels.FromStrings("__name__", "b")},
		{Ref: 3, Labels: labels.FromStrings("__name__", "a", "i", "3")},
	}
	require.NoError(t, w.Log(
		enc.Series(series, nil),
		enc.Samples([]record.RefSample{{Ref: 1, T: 10, V: 1}, {Ref: 2, T: 10, V: 2}, {Ref: 3, T: 10, V: 3}}, nil),
		enc.Metadata([]record.RefMetadata{
			{Ref: 1, Type: record.MetricTypeGauge, Help: "first"},
			{Ref: 2, Type: 99, Unit: "u"}, // a type from a newer writer
			{Ref: 1, Type: record.MetricTypeCounter, Help: "second"},
			{Ref: 3, Type: record.MetricTypeCounter, Help: "second"},
			{Ref: 77, Type: record.MetricTypeGauge}, // no such series
		}, nil),
		// A torn commit: the group announces two records, only one follows.
		enc.CommitGroup(2, nil),
		enc.Metadata([]record.RefMetadata{{Ref: 2, Type: record.MetricTypeSummary}}, nil),
	))
	require.NoError(t, w.Close())

	db := openMetaDB(t, fsys)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, map[string][]Metadata{
		"a": {{Type: MetricTypeCounter, Help: "second"}},
		"b": {{Type: MetricTypeUnknown, Unit: "u"}},
	}, headMetadata(t, db))
	// A new series must not take ref 77, which metadata in the log names.
	app := db.Appender(context.Background())
	ref, err := app.Append(0, labels.FromStrings("__name__", "new"), 20, 1)
	require.NoError(t, err)
	require.Greater(t, ref, SeriesRef(77))
	require.NoError(t, app.Commit())
}

// TestMetadataCheckpoint: after a checkpoint removed the segments that
// logged it, the latest metadata of each series still replays.
func TestMetadataCheckpoint(t *testing.T) {
	fsys := vfs.NewMemFS()
	db := openMetaDB(t, fsys)
	a := labels.FromStrings("__name__", "a")
	b := labels.FromStrings("__name__", "b")
	appendWithMeta(t, db, a, 10, mdCounter)
	appendWithMeta(t, db, b, 10, mdCounter)
	appendWithMeta(t, db, a, 20, mdGauge)
	require.NoError(t, db.checkpointWAL(0))
	_, cp, err := wlog.LastCheckpoint(fsys, filepath.Join("data", "wal"))
	require.NoError(t, err)
	first, _, err := db.head.wal.Segments()
	require.NoError(t, err)
	require.Greater(t, first, cp, "the checkpointed segments are gone")
	require.NotContains(t, walRecordTypes(t, fsys), record.Metadata)
	require.NoError(t, db.Close())

	db = openMetaDB(t, fsys)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, map[string][]Metadata{"a": {mdGauge}, "b": {mdCounter}}, headMetadata(t, db))
}
