package scrape_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

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

func TestScrapeGatherer(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	now := time.Now()
	res, err := s.ScrapeGatherer(context.Background(), newRegistry(t), now)
	require.NoError(t, err)
	t.Logf("%+v", res)
	for k, v := range at(readAll(t, db), ms(now)) {
		t.Log(k, v)
	}
}
