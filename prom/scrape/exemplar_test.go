package scrape_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/prom/scrape"
)

// collectorFunc is a prometheus.Collector of const metrics.
type collectorFunc struct {
	desc *prometheus.Desc
	fn   func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.fn(ch) }

// exemplarsOf returns the exemplars stored by series (short name) as
// "trace_id=value@ts" strings.
func exemplarsOf(t *testing.T, db *tsdb.DB) map[string][]tsdb.Exemplar {
	t.Helper()
	eq, err := db.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	res, err := eq.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "app")})
	require.NoError(t, err)
	out := map[string][]tsdb.Exemplar{}
	for _, r := range res {
		out[short(r.SeriesLabels)] = r.Exemplars
	}
	return out
}

// TestExemplars scrapes exemplars of a counter, a classic histogram's
// bucket and a native histogram from a real registry, and a const metric's
// exemplar with a known timestamp, and reads them back through
// DB.ExemplarQuerier. A second scrape with the same exemplars stores
// nothing new.
func TestExemplars(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "jobs_total", Help: "Jobs."})
	c.(prometheus.ExemplarAdder).AddWithExemplar(3, prometheus.Labels{"trace_id": "c1"})
	ch := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "wait_seconds", Help: "Wait.", Buckets: []float64{1}})
	ch.(prometheus.ExemplarObserver).ObserveWithExemplar(0.5, prometheus.Labels{"trace_id": "h1"})
	nh := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "native_seconds", Help: "Native.", NativeHistogramBucketFactor: 1.1, NativeHistogramMaxExemplars: 5})
	nh.(prometheus.ExemplarObserver).ObserveWithExemplar(7, prometheus.Labels{"trace_id": "n1"})
	fixed := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	desc := prometheus.NewDesc("fixed_total", "Fixed.", nil, nil)
	cf := collectorFunc{desc, func(out chan<- prometheus.Metric) {
		m := prometheus.MustNewConstMetric(desc, prometheus.CounterValue, 5)
		out <- prometheus.MustNewMetricWithExemplars(m, prometheus.Exemplar{Value: 4, Labels: prometheus.Labels{"trace_id": "f1"}, Timestamp: fixed})
	}}
	reg.MustRegister(c, ch, nh, cf)

	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	now := time.Now()
	res, err := s.ScrapeGatherer(context.Background(), reg, now)
	require.NoError(t, err)
	require.Equal(t, 4, res.Exemplars)

	got := exemplarsOf(t, db)
	one := func(series string) tsdb.Exemplar {
		t.Helper()
		require.Len(t, got[series], 1, series)
		return got[series][0]
	}
	require.Equal(t, "c1", one("jobs_total").Labels.Get("trace_id"))
	require.Equal(t, 3.0, one("jobs_total").Value)
	require.Equal(t, "h1", one(`wait_seconds_bucket{le="1.0"}`).Labels.Get("trace_id"))
	require.Equal(t, 0.5, one(`wait_seconds_bucket{le="1.0"}`).Value)
	require.Equal(t, "n1", one("native_seconds").Labels.Get("trace_id"))
	require.Equal(t, 7.0, one("native_seconds").Value)
	f := one("fixed_total")
	require.Equal(t, tsdb.Exemplar{Labels: labels.FromStrings("trace_id", "f1"), Value: 4, Ts: fixed.UnixMilli(), HasTs: true}, f)
	require.Len(t, got, 4)

	// The same exemplars again: all duplicates, nothing stored twice, and
	// the scrape succeeds.
	res, err = s.ScrapeGatherer(context.Background(), reg, now.Add(15*time.Second))
	require.NoError(t, err)
	require.Equal(t, 0, res.Exemplars, "%+v", res)
	require.Equal(t, 4, res.ExemplarsRejected, "%+v", res)
	require.Equal(t, got, exemplarsOf(t, db))
}
