package interop

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// The exemplar workload: exemplarSeries series, a sample and an exemplar
// each every 15 s for exemplarSteps steps, and a commit of exemplars only
// at the end. Both directions replay the other's WAL: the exemplars come
// back the same (except HasTs, which the WAL does not keep).
const (
	exemplarSeries = 5
	exemplarSteps  = 40
)

// writeExemplarWorkload appends the workload through app (one commit per
// step) and returns what a query of every exemplar should return.
func writeExemplarWorkload(t *testing.T, newApp func() storage.Appender) []exemplar.QueryResult {
	t.Helper()
	want := make([]exemplar.QueryResult, exemplarSeries)
	refs := make([]storage.SeriesRef, exemplarSeries)
	for step := range exemplarSteps + 1 {
		app := newApp()
		ts := int64(1_700_000_000_000) + int64(step)*15_000
		for i := range exemplarSeries {
			ls := labels.FromStrings("__name__", "requests_total", "i", fmt.Sprint(i))
			want[i].SeriesLabels = ls
			if step < exemplarSteps {
				ref, err := app.Append(refs[i], ls, ts, float64(step))
				require.NoError(t, err)
				refs[i] = ref
			}
			e := exemplar.Exemplar{Labels: labels.FromStrings("trace_id", fmt.Sprintf("%d-%d", i, step)), Value: float64(step) / 2, Ts: ts, HasTs: true}
			_, err := app.AppendExemplar(refs[i], ls, e)
			require.NoError(t, err)
			e.HasTs = false // not kept by the WAL
			want[i].Exemplars = append(want[i].Exemplars, e)
		}
		require.NoError(t, app.Commit())
	}
	return want
}

// selectAllExemplars reads every exemplar of the workload through q.
func selectAllExemplars(t *testing.T, q storage.ExemplarQuerier) []exemplar.QueryResult {
	t.Helper()
	res, err := q.Select(0, 1<<62, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "requests_total")})
	require.NoError(t, err)
	for i := range res {
		for j := range res[i].Exemplars {
			res[i].Exemplars[j].HasTs = false
		}
	}
	return res
}

func promExemplarOptions() *promtsdb.Options {
	opts := promtsdb.DefaultOptions()
	opts.EnableExemplarStorage = true
	opts.MaxExemplars = 1000
	return opts
}

// TestPromReadsIsotsdbExemplars: Prometheus replays the exemplars of
// isotsdb's WAL (in isotsdb's commit groups, whose CommitGroup records it
// skips).
func TestPromReadsIsotsdbExemplars(t *testing.T) {
	dir := t.TempDir()
	o := isotsdbReaderOptions()
	o.MaxExemplars = 1000
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	s := promstorage.New(db)
	want := writeExemplarWorkload(t, func() storage.Appender { return s.Appender(context.Background()) })
	q, err := s.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, selectAllExemplars(t, q), "isotsdb before the restart")
	require.NoError(t, s.Close())

	pdb, err := promtsdb.Open(dir, nil, nil, promExemplarOptions(), nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pdb.Close()) }()
	pq, err := pdb.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, selectAllExemplars(t, pq), "Prometheus replaying isotsdb's WAL")
}

// TestIsotsdbReadsPromExemplars: isotsdb replays the exemplars of
// Prometheus's WAL.
func TestIsotsdbReadsPromExemplars(t *testing.T) {
	dir := t.TempDir()
	pdb, err := promtsdb.Open(dir, nil, nil, promExemplarOptions(), nil)
	require.NoError(t, err)
	pdb.DisableCompactions()
	want := writeExemplarWorkload(t, func() storage.Appender { return pdb.Appender(context.Background()) })
	require.NoError(t, pdb.Close())

	o := isotsdbReaderOptions()
	o.MaxExemplars = 1000
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	s := promstorage.New(db)
	defer func() { require.NoError(t, s.Close()) }()
	q, err := s.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, selectAllExemplars(t, q), "isotsdb replaying Prometheus's WAL")
}
