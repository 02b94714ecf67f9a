package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	pmodel "github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	precord "github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// TestPromReadsIsotsdbMetadata: Prometheus's TSDB has no API that returns
// a head series' metadata, so this test has Prometheus's own code read the
// metadata of isotsdb's WAL the two ways it does: its checkpoint (which
// keeps each series' newest metadata, as its head replay applies it) and
// its head replay. isotsdb writes commits that mix samples, metadata
// (set, changed, set again unchanged, and in a commit of metadata alone)
// and exemplars; Prometheus's checkpoint then holds, for every series,
// exactly the metadata isotsdb's querier reports, and Prometheus's head
// replays the WAL with the same samples and exemplars.
func TestPromReadsIsotsdbMetadata(t *testing.T) {
	dir := t.TempDir()
	o := isotsdbReaderOptions()
	o.MaxExemplars = 100
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	s := promstorage.New(db)
	const n = 6
	types := []pmodel.MetricType{pmodel.MetricTypeCounter, pmodel.MetricTypeGauge, pmodel.MetricTypeHistogram, pmodel.MetricTypeSummary, pmodel.MetricTypeInfo, pmodel.MetricTypeStateset}
	lsets := make([]labels.Labels, n)
	refs := make([]storage.SeriesRef, n)
	t0 := int64(1_700_000_000_000)
	for step := range 4 {
		app := s.Appender(context.Background())
		for i := range n {
			lsets[i] = labels.FromStrings("__name__", fmt.Sprintf("m%d", i), "job", "j")
			ref, err := app.Append(refs[i], lsets[i], t0+int64(step)*15_000, float64(step))
			require.NoError(t, err)
			refs[i] = ref
			help := "help of " + lsets[i].Get("__name__")
			if step >= 2 && i%2 == 0 {
				help += ", changed" // from the third step on
			}
			_, err = app.UpdateMetadata(ref, lsets[i], metadata.Metadata{Type: types[i], Unit: "seconds", Help: help})
			require.NoError(t, err)
			_, err = app.AppendExemplar(ref, lsets[i], exemplarOf(i, step, t0+int64(step)*15_000))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	// A commit of metadata alone.
	app := s.Appender(context.Background())
	_, err = app.UpdateMetadata(refs[1], lsets[1], metadata.Metadata{Type: pmodel.MetricTypeGauge, Unit: "bytes", Help: "now bytes"})
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	want := map[string]metadata.Metadata{}
	q, err := db.Querier(0, 1)
	require.NoError(t, err)
	for i := range n {
		m, ok, err := q.SeriesMetadata(toOurLabels(lsets[i]))
		require.NoError(t, err)
		require.True(t, ok)
		want[lsets[i].String()] = promstorage.ToPromMetadata(m)
	}
	require.NoError(t, q.Close())
	require.Equal(t, "now bytes", want[lsets[1].String()].Help)
	require.Equal(t, "help of m2, changed", want[lsets[2].String()].Help)
	eq, err := s.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	wantEx, err := eq.Select(0, 1<<62, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "j")})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	// Prometheus's head replays the WAL: same samples, same exemplars.
	pdb, err := promtsdb.Open(dir, nil, nil, promExemplarOptions(), nil)
	require.NoError(t, err)
	pdb.DisableCompactions()
	pq, err := pdb.Querier(0, 1<<62)
	require.NoError(t, err)
	ss := pq.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchEqual, "job", "j"))
	series := 0
	for ss.Next() {
		series++
		it := ss.At().Iterator(nil)
		samples := 0
		for it.Next() != chunkenc.ValNone {
			samples++
		}
		require.NoError(t, it.Err())
		require.Equal(t, 4, samples, ss.At().Labels().String())
	}
	require.NoError(t, ss.Err())
	require.Equal(t, n, series)
	require.NoError(t, pq.Close())
	peq, err := pdb.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	gotEx, err := peq.Select(0, 1<<62, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "j")})
	require.NoError(t, err)
	for _, r := range append(wantEx, gotEx...) {
		for j := range r.Exemplars {
			r.Exemplars[j].HasTs = false // not kept by the WAL
		}
	}
	require.Equal(t, wantEx, gotEx, "Prometheus's exemplars after replaying isotsdb's WAL")
	require.NoError(t, pdb.Close())

	// Prometheus's checkpoint of the WAL's segments keeps each series'
	// newest metadata.
	walDir := filepath.Join(dir, "wal")
	first, last, err := wlog.Segments(walDir)
	require.NoError(t, err)
	w, err := wlog.New(nil, nil, walDir, compression.None) // opens a new segment after last
	require.NoError(t, err)
	stats, err := wlog.Checkpoint(promslog.NewNopLogger(), w, first, last, func(chunks.HeadSeriesRef) bool { return true }, 0, false, false)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Positive(t, stats.TotalMetadata)
	cpDir, _, err := wlog.LastCheckpoint(walDir)
	require.NoError(t, err)
	sr, err := wlog.NewSegmentsReader(cpDir)
	require.NoError(t, err)
	defer sr.Close()
	r := wlog.NewReader(sr)
	dec := precord.NewDecoder(nil, nil)
	names := map[chunks.HeadSeriesRef]string{}
	got := map[string]metadata.Metadata{}
	for r.Next() {
		rec := r.Record()
		switch dec.Type(rec) {
		case precord.Series:
			ser, err := dec.Series(rec, nil)
			require.NoError(t, err)
			for _, s := range ser {
				names[s.Ref] = s.Labels.String()
			}
		case precord.Metadata:
			ms, err := dec.Metadata(rec, nil)
			require.NoError(t, err)
			for _, m := range ms {
				name, ok := names[m.Ref]
				require.True(t, ok, "metadata of ref %d before its series", m.Ref)
				got[name] = metadata.Metadata{Type: precord.ToMetricType(m.Type), Unit: m.Unit, Help: m.Help}
			}
		}
	}
	require.NoError(t, r.Err())
	require.Equal(t, want, got, "Prometheus's checkpoint of isotsdb's WAL")
}

// exemplarOf is series i's exemplar at step.
func exemplarOf(i, step int, ts int64) exemplar.Exemplar {
	return exemplar.Exemplar{Labels: labels.FromStrings("trace_id", fmt.Sprintf("%d-%d", i, step)), Value: float64(step), Ts: ts, HasTs: true}
}
