package scrape_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/prom/scrape"
)

var target = labels.FromStrings("job", "app", "instance", "host:9100")

// newRegistry returns a registry with a counter, a gauge, a classic
// histogram, a native histogram and a summary, with known values.
func newRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "Requests handled."}, []string{"code"})
	c.WithLabelValues("200").Add(7)
	c.WithLabelValues("500").Add(2)
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "temperature_celsius", Help: "Temperature."})
	g.Set(21.5)
	ch := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "latency_seconds", Help: "Latency.", Buckets: []float64{0.1, 1}})
	ch.Observe(0.05)
	ch.Observe(0.5)
	ch.Observe(3)
	nh := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "size_bytes", Help: "Sizes.", NativeHistogramBucketFactor: 1.1})
	nh.Observe(10)
	nh.Observe(100)
	s := prometheus.NewSummary(prometheus.SummaryOpts{Name: "rpc_seconds", Help: "RPC time.", Objectives: map[float64]float64{0.5: 0.05}})
	s.Observe(2)
	reg.MustRegister(c, g, ch, nh, s)
	return reg
}

// TestScrapeGatherer scrapes a real client_golang registry and checks every
// stored sample, the native histogram, the metadata and the Result.
func TestScrapeGatherer(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	now := time.Now()
	res, err := s.ScrapeGatherer(context.Background(), newRegistry(t), now)
	require.NoError(t, err)

	ts := fmt.Sprint(ms(now))
	got := at(readAll(t, db), ms(now))
	dur := got[`{__name__="scrape_duration_seconds", instance="host:9100", job="app"}`]
	require.Equal(t, fmt.Sprintf("%s:%g", ts, res.Duration.Seconds()), dur)
	delete(got, `{__name__="scrape_duration_seconds", instance="host:9100", job="app"}`)
	want := map[string]string{
		`{__name__="requests_total", code="200", instance="host:9100", job="app"}`:            ts + ":7",
		`{__name__="requests_total", code="500", instance="host:9100", job="app"}`:            ts + ":2",
		`{__name__="temperature_celsius", instance="host:9100", job="app"}`:                   ts + ":21.5",
		`{__name__="latency_seconds_bucket", instance="host:9100", job="app", le="0.1"}`:      ts + ":1",
		`{__name__="latency_seconds_bucket", instance="host:9100", job="app", le="1.0"}`:      ts + ":2",
		`{__name__="latency_seconds_bucket", instance="host:9100", job="app", le="+Inf"}`:     ts + ":3",
		`{__name__="latency_seconds_sum", instance="host:9100", job="app"}`:                   ts + ":3.55",
		`{__name__="latency_seconds_count", instance="host:9100", job="app"}`:                 ts + ":3",
		`{__name__="size_bytes", instance="host:9100", job="app"}`:                            ts + ":h(count=2,sum=110)",
		`{__name__="rpc_seconds", instance="host:9100", job="app", quantile="0.5"}`:           ts + ":2",
		`{__name__="rpc_seconds_sum", instance="host:9100", job="app"}`:                       ts + ":2",
		`{__name__="rpc_seconds_count", instance="host:9100", job="app"}`:                     ts + ":1",
		`{__name__="up", instance="host:9100", job="app"}`:                                    ts + ":1",
		`{__name__="scrape_samples_scraped", instance="host:9100", job="app"}`:                ts + ":12",
		`{__name__="scrape_samples_post_metric_relabeling", instance="host:9100", job="app"}`: ts + ":12",
		`{__name__="scrape_series_added", instance="host:9100", job="app"}`:                   ts + ":12",
	}
	require.Equal(t, want, got)
	require.Equal(t, scrape.Result{Scraped: 12, PostRelabel: 12, SeriesAdded: 12, Samples: 11, Histograms: 1, Metadata: 17, Duration: res.Duration}, res)

	// The native histogram, bucket by bucket: 10 and 100 at schema 3
	// (factor 1.1 rounds to 2^(2^-3)), one observation each.
	all := readAll(t, db)
	h := all[`{__name__="size_bytes", instance="host:9100", job="app"}`][0].H
	require.NotNil(t, h)
	require.Equal(t, int32(3), h.Schema)
	require.Equal(t, 2.0, h.Count)
	var n float64
	for _, b := range h.PositiveBuckets {
		n += b
	}
	require.Equal(t, 2.0, n)

	for _, c := range []struct {
		series string
		want   tsdb.Metadata
	}{
		{"requests_total", tsdb.Metadata{Type: tsdb.MetricTypeCounter, Help: "Requests handled."}},
		{"temperature_celsius", tsdb.Metadata{Type: tsdb.MetricTypeGauge, Help: "Temperature."}},
		{"latency_seconds_bucket", tsdb.Metadata{Type: tsdb.MetricTypeHistogram, Help: "Latency."}},
		{"latency_seconds_count", tsdb.Metadata{Type: tsdb.MetricTypeHistogram, Help: "Latency."}},
		{"size_bytes", tsdb.Metadata{Type: tsdb.MetricTypeHistogram, Help: "Sizes."}},
		{"rpc_seconds_sum", tsdb.Metadata{Type: tsdb.MetricTypeSummary, Help: "RPC time."}},
		{"up", tsdb.Metadata{Type: tsdb.MetricTypeGauge, Unit: "targets", Help: "Health of the scrape target. 1 means the target is healthy, 0 if the scrape failed."}},
	} {
		q, err := db.Querier(0, math.MaxInt64)
		require.NoError(t, err)
		md, err := q.Metadata(context.Background(), c.series)
		require.NoError(t, err)
		require.NoError(t, q.Close())
		require.Equal(t, []tsdb.Metadata{c.want}, md[c.series], c.series)
	}
	m, ok := seriesMetadata(t, db, labels.FromStrings("__name__", "requests_total", "code", "500", "instance", "host:9100", "job", "app"))
	require.True(t, ok)
	require.Equal(t, tsdb.MetricTypeCounter, m.Type)
}
