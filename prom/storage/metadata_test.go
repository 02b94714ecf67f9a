package promstorage_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"
	precord "github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// TestMetadataConversion: every Prometheus metric type maps to the isotsdb
// type with the same name and WAL byte, and back.
func TestMetadataConversion(t *testing.T) {
	for _, typ := range []model.MetricType{
		model.MetricTypeCounter, model.MetricTypeGauge, model.MetricTypeHistogram, model.MetricTypeGaugeHistogram,
		model.MetricTypeSummary, model.MetricTypeInfo, model.MetricTypeStateset, model.MetricTypeUnknown,
	} {
		pm := metadata.Metadata{Type: typ, Unit: "u", Help: "h"}
		ours := promstorage.FromPromMetadata(pm)
		require.Equal(t, precord.GetMetricType(typ), uint8(ours.Type), "WAL byte of %s", typ)
		require.Equal(t, string(typ), ours.Type.String())
		require.Equal(t, pm, promstorage.ToPromMetadata(ours))
	}
	// The empty type and names Prometheus does not know are unknown.
	for _, typ := range []model.MetricType{"", "bogus"} {
		ours := promstorage.FromPromMetadata(metadata.Metadata{Type: typ})
		require.Equal(t, tsdb.MetricTypeUnknown, ours.Type)
		require.Equal(t, precord.GetMetricType(typ), uint8(ours.Type))
	}
}

// seriesMetadata returns the metadata isotsdb's Querier sees for ls.
func seriesMetadata(t *testing.T, db *tsdb.DB, ls labels.Labels) (tsdb.Metadata, bool) {
	t.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	m, ok, err := q.SeriesMetadata(toOurs(ls))
	require.NoError(t, err)
	return m, ok
}

func TestAppenderUpdateMetadata(t *testing.T) {
	s := newStorage(t)
	ls := labels.FromStrings("__name__", "http_requests_total", "job", "a")
	pm := metadata.Metadata{Type: model.MetricTypeCounter, Unit: "requests", Help: "Requests served."}
	app := s.Appender(context.Background())
	ref, err := app.Append(0, ls, 1000, 1)
	require.NoError(t, err)
	got, err := app.UpdateMetadata(ref, ls, pm)
	require.NoError(t, err)
	require.Equal(t, ref, got)
	_, err = app.UpdateMetadata(0, labels.FromStrings("__name__", "absent"), pm)
	require.ErrorIs(t, err, tsdb.ErrUnknownSeries, "as in Prometheus, metadata needs the series")
	_, ok := seriesMetadata(t, s.DB(), ls)
	require.False(t, ok, "not visible before Commit")
	require.NoError(t, app.Commit())
	m, ok := seriesMetadata(t, s.DB(), ls)
	require.True(t, ok)
	require.Equal(t, pm, promstorage.ToPromMetadata(m))

	// A rolled-back update is never seen.
	app = s.Appender(context.Background())
	_, err = app.UpdateMetadata(ref, ls, metadata.Metadata{Type: model.MetricTypeGauge})
	require.NoError(t, err)
	require.NoError(t, app.Rollback())
	m, _ = seriesMetadata(t, s.DB(), ls)
	require.Equal(t, pm, promstorage.ToPromMetadata(m))
}

func TestAppenderV2Metadata(t *testing.T) {
	s := newStorage(t)
	ls := labels.FromStrings("__name__", "temp_celsius")
	bad := labels.FromStrings("__name__", "bad")
	pm := metadata.Metadata{Type: model.MetricTypeGauge, Unit: "celsius", Help: "Temperature."}
	app := s.AppenderV2(context.Background())
	_, err := app.Append(0, ls, 0, 1000, 21, nil, nil, storage.AppendV2Options{Metadata: pm})
	require.NoError(t, err)
	_, err = app.Append(0, bad, 0, 1000, 1, nil, nil, storage.AppendV2Options{Metadata: metadata.Metadata{Help: "\xff"}})
	require.NoError(t, err, "invalid metadata does not cost the sample")
	require.NoError(t, app.Commit())
	m, ok := seriesMetadata(t, s.DB(), ls)
	require.True(t, ok)
	require.Equal(t, pm, promstorage.ToPromMetadata(m))
	_, ok = seriesMetadata(t, s.DB(), bad)
	require.False(t, ok)
	require.Equal(t, []sample{{1000, 1}}, querySamples(t, s, bad))
}

// TestPrometheusDecodesOurMetadata: the Metadata records isotsdb logs
// decode with Prometheus's own WAL reader and decoder to what was set.
func TestPrometheusDecodesOurMetadata(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.NoWAL = false
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	s := promstorage.New(db)
	want := map[string]metadata.Metadata{}
	for i, typ := range []model.MetricType{model.MetricTypeCounter, model.MetricTypeSummary, model.MetricTypeStateset} {
		ls := labels.FromStrings("__name__", "m", "i", string(rune('a'+i)))
		pm := metadata.Metadata{Type: typ, Unit: "seconds", Help: "help " + string(typ)}
		app := s.Appender(context.Background())
		ref, err := app.Append(0, ls, 1000, float64(i))
		require.NoError(t, err)
		_, err = app.UpdateMetadata(ref, ls, pm)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		want[ls.String()] = pm
	}
	require.NoError(t, s.Close())

	sr, err := wlog.NewSegmentsReader(filepath.Join(dir, "wal"))
	require.NoError(t, err)
	defer sr.Close()
	r := wlog.NewReader(sr)
	dec := precord.NewDecoder(nil, nil)
	names := map[uint64]string{}
	got := map[string]metadata.Metadata{}
	for r.Next() {
		rec := r.Record()
		switch dec.Type(rec) {
		case precord.Series:
			series, err := dec.Series(rec, nil)
			require.NoError(t, err)
			for _, s := range series {
				names[uint64(s.Ref)] = s.Labels.String()
			}
		case precord.Metadata:
			ms, err := dec.Metadata(rec, nil)
			require.NoError(t, err)
			for _, m := range ms {
				name, ok := names[uint64(m.Ref)]
				require.True(t, ok, "metadata of ref %d before its series", m.Ref)
				got[name] = metadata.Metadata{Type: precord.ToMetricType(m.Type), Unit: m.Unit, Help: m.Help}
			}
		}
	}
	require.NoError(t, r.Err())
	require.Equal(t, want, got)
}
