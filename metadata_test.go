package tsdb

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

var (
	mdCounter = Metadata{Type: MetricTypeCounter, Unit: "seconds", Help: "Total time."}
	mdGauge   = Metadata{Type: MetricTypeGauge, Unit: "bytes", Help: "Memory."}
)

// seriesMetaNow returns the metadata a new Querier sees for lset.
func seriesMetaNow(t testing.TB, db *DB, lset labels.Labels) (Metadata, bool) {
	t.Helper()
	q, err := db.Querier(0, 1)
	require.NoError(t, err)
	defer q.Close()
	m, ok, err := q.SeriesMetadata(lset)
	require.NoError(t, err)
	return m, ok
}

// appendWithMeta commits one sample of lset at ts with metadata m.
func appendWithMeta(t testing.TB, db *DB, lset labels.Labels, ts int64, m Metadata) {
	t.Helper()
	app := db.Appender(context.Background())
	ref, err := app.Append(0, lset, ts, 1)
	require.NoError(t, err)
	_, err = app.UpdateMetadata(ref, lset, m)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
}

func TestMetricTypeNames(t *testing.T) {
	// The names and bytes are Prometheus's (model.MetricType and the WAL's
	// record.MetricType).
	want := map[MetricType]string{0: "unknown", 1: "counter", 2: "gauge", 3: "histogram", 4: "gaugehistogram", 5: "summary", 6: "info", 7: "stateset"}
	for typ, name := range want {
		require.Equal(t, name, typ.String())
		require.True(t, typ.Valid())
		got, ok := ParseMetricType(name)
		require.True(t, ok, name)
		require.Equal(t, typ, got)
	}
	require.False(t, MetricType(8).Valid())
	require.Equal(t, "unknown", MetricType(8).String())
	got, ok := ParseMetricType("")
	require.True(t, ok)
	require.Equal(t, MetricTypeUnknown, got)
	_, ok = ParseMetricType("Counter")
	require.False(t, ok)
	require.Equal(t, MetricTypeUnknown, metricTypeFromWAL(200))
	require.Equal(t, MetricTypeSummary, metricTypeFromWAL(5))
	require.True(t, Metadata{}.IsEmpty())
	require.False(t, Metadata{Help: "x"}.IsEmpty())
}

func TestUpdateMetadataValidation(t *testing.T) {
	db, _ := openTestDB(t, nil)
	lset := labels.FromStrings("__name__", "up", "job", "a")
	app := db.Appender(context.Background())
	ref, err := app.Append(0, lset, 10, 1)
	require.NoError(t, err)
	cases := []struct {
		name string
		ref  SeriesRef
		lset labels.Labels
		m    Metadata
		err  error
	}{
		{"by ref", ref, labels.EmptyLabels(), mdCounter, nil},
		{"by labels", 0, lset, mdCounter, nil},
		{"labels with an empty value", 0, labels.FromStrings("__name__", "up", "job", "a", "x", ""), mdGauge, nil},
		{"stale ref falls back to labels", 999, lset, mdGauge, nil},
		{"unknown series", 0, labels.FromStrings("__name__", "nope"), mdCounter, ErrUnknownSeries},
		{"unknown ref, no labels", 999, labels.EmptyLabels(), mdCounter, ErrUnknownSeries},
		{"bad type", ref, lset, Metadata{Type: 8}, ErrInvalidMetadata},
		{"bad unit", ref, lset, Metadata{Unit: "\xff"}, ErrInvalidMetadata},
		{"bad help", ref, lset, Metadata{Help: "a\xc3"}, ErrInvalidMetadata},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := app.UpdateMetadata(c.ref, c.lset, c.m)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				require.Zero(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, ref, got)
		})
	}
	// Nothing is visible before Commit; the last valid update wins.
	_, ok := seriesMetaNow(t, db, lset)
	require.False(t, ok)
	require.NoError(t, app.Commit())
	m, ok := seriesMetaNow(t, db, lset)
	require.True(t, ok)
	require.Equal(t, mdGauge, m)
	_, err = app.UpdateMetadata(ref, lset, mdCounter)
	require.ErrorIs(t, err, ErrAppenderClosed)
}

func TestMetadataRollbackNeverVisible(t *testing.T) {
	db, _ := openTestDB(t, nil)
	lset := labels.FromStrings("__name__", "up")
	appendWithMeta(t, db, lset, 10, mdCounter)
	app := db.Appender(context.Background())
	_, err := app.UpdateMetadata(0, lset, mdGauge)
	require.NoError(t, err)
	require.NoError(t, app.Rollback())
	m, ok := seriesMetaNow(t, db, lset)
	require.True(t, ok)
	require.Equal(t, mdCounter, m)
	// The rolled-back update unpinned the series.
	db.head.series.refs.each(func(s *memSeries) {
		s.mu.Lock()
		defer s.mu.Unlock()
		require.Zero(t, s.pending)
	})
}

// TestMetadataIsolation: a Querier opened before a commit keeps seeing the
// metadata from before it; one opened after sees the commit's; a commit
// in flight is invisible to a Querier opened meanwhile.
func TestMetadataIsolation(t *testing.T) {
	db, _ := openTestDB(t, nil)
	lset := labels.FromStrings("__name__", "up", "job", "a")
	appendWithMeta(t, db, lset, 10, mdCounter)
	before, err := db.Querier(0, 100)
	require.NoError(t, err)
	defer before.Close()

	appendWithMeta(t, db, lset, 20, mdGauge)
	m, ok, err := before.SeriesMetadata(lset)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, mdCounter, m, "reader opened before the commit")
	all, err := before.Metadata(context.Background(), "")
	require.NoError(t, err)
	require.Equal(t, map[string][]Metadata{"up": {mdCounter}}, all)
	m, _ = seriesMetaNow(t, db, lset)
	require.Equal(t, mdGauge, m, "reader opened after the commit")

	// A commit in flight: a Querier opened while it applies sees neither
	// its sample nor its metadata.
	app := db.Appender(context.Background())
	_, err = app.Append(0, lset, 30, 3)
	require.NoError(t, err)
	_, err = app.UpdateMetadata(0, lset, Metadata{Type: MetricTypeSummary})
	require.NoError(t, err)
	// (Paused in another goroutine: Commit holds the head's close lock,
	// which comes after the DB's in the lock order.)
	pc := newCommitGate(t, db.head).commitPaused(app, 0)
	during, err := db.Querier(0, 100)
	require.NoError(t, err)
	defer during.Close()
	close(pc.release)
	require.NoError(t, <-pc.done)
	m, _, err = during.SeriesMetadata(lset)
	require.NoError(t, err)
	require.Equal(t, mdGauge, m)
	require.Equal(t, []sample{{10, 1}, {20, 1}}, querySamples(t, during)[lset.String()])
	m, _ = seriesMetaNow(t, db, lset)
	require.Equal(t, Metadata{Type: MetricTypeSummary}, m)
	// A new series whose first commit is invisible has no metadata.
	other := labels.FromStrings("__name__", "new")
	appendWithMeta(t, db, other, 10, mdCounter)
	_, ok, err = before.SeriesMetadata(other)
	require.NoError(t, err)
	require.False(t, ok)
}

// TestMetadataUnchangedNotLogged: an update equal to the current metadata
// buffers nothing: Commit of it alone logs nothing and takes no write ID.
func TestMetadataUnchangedNotLogged(t *testing.T) {
	db, _ := openTestDB(t, nil)
	lset := labels.FromStrings("__name__", "up")
	appendWithMeta(t, db, lset, 10, mdCounter)
	id := db.head.iso.highWatermark()
	app := db.Appender(context.Background())
	_, err := app.UpdateMetadata(0, lset, mdCounter)
	require.NoError(t, err)
	require.Nil(t, app.(*headAppender).appendBatch, "an unchanged update buffers nothing")
	require.NoError(t, app.Commit())
	require.Equal(t, id, db.head.iso.highWatermark(), "no write ID taken")
}

func TestMetadataAfterClose(t *testing.T) {
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	lset := labels.FromStrings("__name__", "up")
	app := db.Appender(context.Background())
	_, err = app.Append(0, lset, 10, 1)
	require.NoError(t, err)
	q, err := db.Querier(0, 100)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = app.UpdateMetadata(0, lset, mdCounter)
	require.True(t, errors.Is(err, ErrClosed), "%v", err)
	_, err = db.Appender(context.Background()).UpdateMetadata(0, lset, mdCounter)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, app.Commit(), ErrClosed)
	require.NoError(t, q.Close())
	_, _, err = q.SeriesMetadata(lset)
	require.ErrorIs(t, err, ErrClosed)
	_, err = q.Metadata(context.Background(), "")
	require.ErrorIs(t, err, ErrClosed)
}

// TestMetadataPinsSeries: a series with buffered metadata is not removed
// by a truncation until the appender commits, rolls back or is found
// leaked by the garbage collector.
func TestMetadataPinsSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	db, err := Open("data", nil, reg, &Options{FS: vfs.NewMemFS()})
	require.NoError(t, err)
	defer db.Close()
	lset := labels.FromStrings("__name__", "pinned")
	// A rolled-back Append leaves the series in the head without samples.
	create := func() {
		app := db.Appender(ctx)
		_, err := app.Append(0, lset, 10, 1)
		require.NoError(t, err)
		require.NoError(t, app.Rollback())
		require.Equal(t, int64(1), db.head.NumSeries())
	}
	create()
	app := db.Appender(ctx)
	_, err = app.UpdateMetadata(0, lset, mdCounter)
	require.NoError(t, err)
	db.head.truncate(0, 0)
	require.Equal(t, int64(1), db.head.NumSeries(), "pinned by the buffered metadata")
	require.NoError(t, app.Rollback())
	db.head.truncate(0, 0)
	require.Equal(t, int64(0), db.head.NumSeries(), "unpinned by Rollback")

	create()
	func() {
		app := db.Appender(ctx)
		_, err := app.UpdateMetadata(0, lset, mdCounter)
		require.NoError(t, err)
		// app is dropped here without Commit or Rollback.
	}()
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_head_open_appenders"), "metadata alone counts the appender as open")
	deadline := time.Now().Add(20 * time.Second)
	for gauge(t, reg, "tsdb_head_open_appenders") != 0 {
		if time.Now().After(deadline) {
			require.FailNow(t, "leaked appender never released")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	db.head.truncate(0, 0)
	require.Equal(t, int64(0), db.head.NumSeries(), "unpinned when the leaked appender was released")
	_, ok := seriesMetaNow(t, db, lset)
	require.False(t, ok)
}

// TestMetadataByMetric: Querier.Metadata groups distinct metadata by
// metric name, sorted, optionally for one name; series without a name or
// metadata are left out; a cancelled context stops it.
func TestMetadataByMetric(t *testing.T) {
	db, _ := openTestDB(t, nil)
	appendWithMeta(t, db, labels.FromStrings("__name__", "x", "i", "1"), 10, mdGauge)
	appendWithMeta(t, db, labels.FromStrings("__name__", "x", "i", "2"), 10, mdCounter)
	appendWithMeta(t, db, labels.FromStrings("__name__", "x", "i", "3"), 10, mdGauge)
	appendWithMeta(t, db, labels.FromStrings("__name__", "y"), 10, mdGauge)
	appendWithMeta(t, db, labels.FromStrings("noname", "1"), 10, mdGauge)
	app := db.Appender(ctx)
	_, err := app.Append(0, labels.FromStrings("__name__", "z"), 10, 1) // no metadata
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	q, err := db.Querier(0, 100)
	require.NoError(t, err)
	defer q.Close()
	all, err := q.Metadata(ctx, "")
	require.NoError(t, err)
	require.Equal(t, map[string][]Metadata{"x": {mdCounter, mdGauge}, "y": {mdGauge}}, all)
	one, err := q.Metadata(ctx, "x")
	require.NoError(t, err)
	require.Equal(t, map[string][]Metadata{"x": {mdCounter, mdGauge}}, one)
	none, err := q.Metadata(ctx, "z")
	require.NoError(t, err)
	require.Empty(t, none)

	app = db.Appender(ctx)
	for i := range 2 * metadataCtxEvery {
		_, err := app.Append(0, labels.FromStrings("__name__", "many", "i", strconv.Itoa(i)), 10, 1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	q2, err := db.Querier(0, 100)
	require.NoError(t, err)
	defer q2.Close()
	_, err = q2.Metadata(cancelled, "")
	require.ErrorIs(t, err, context.Canceled)
	_, err = q2.Metadata(cancelled, "many")
	require.ErrorIs(t, err, context.Canceled)
}
