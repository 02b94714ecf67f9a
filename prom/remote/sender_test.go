package remote

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestSendToPrometheus ingests into isotsdb while a sender runs and checks
// that Prometheus's receiver holds every sample exactly once.
func TestSendToPrometheus(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprint("compression=", compress), func(t *testing.T) { testSendToPrometheus(t, compress) })
	}
}

func testSendToPrometheus(t *testing.T, compress bool) {
	rv := newReceiver(t)
	dir := t.TempDir()
	o := isoOptions()
	o.WALCompression = compress
	db := openIso(t, dir, o)
	reg := prometheus.NewRegistry()
	s, err := New(dir, testConfig(rv.url(t)), nil, reg)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	want := ingest(t, db, 50, 0, 200*15000, 15000, s.Notify)
	waitFor(t, 20*time.Second, "all samples", func() bool { return received(want, rv.counts(t)) == 0 })
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	require.Equal(t, want, rv.counts(t))
	seen, total := rv.deliveries()
	require.Equal(t, want, seen, "every sample delivered exactly once")
	require.Equal(t, len(want), total)
	require.Equal(t, float64(len(want)), testutil.ToFloat64(s.metrics.samplesSent))
	require.Zero(t, testutil.ToFloat64(s.metrics.samplesFailed))
	require.Equal(t, float64(200*15), testutil.ToFloat64(s.metrics.highestSent))
}

// TestRelabelAndExternalLabels: external labels reach every series, and
// series dropped by relabeling send nothing.
func TestRelabelAndExternalLabels(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(rv.url(t))
	cfg.ExternalLabels = promLabels("cluster", "c1")
	cfg.RelabelConfigs = dropJob("j1")
	s, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	all := ingest(t, db, 9, 0, 50*15000, 15000, s.Notify)
	want := map[string]int{}
	for k := range all {
		if strings.Contains(k, `job="j1"`) {
			continue
		}
		want[strings.Replace(k, `{__name__="m", `, `{__name__="m", cluster="c1", `, 1)] = 1
	}
	waitFor(t, 20*time.Second, "kept samples", func() bool { return received(want, rv.counts(t)) == 0 })
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	require.Equal(t, want, rv.counts(t))
	require.Equal(t, float64(len(all)-len(want)), testutil.ToFloat64(s.metrics.samplesDropped))
}

// TestReshard slows the receiver so that the queues fill: the sender adds
// shards, and every sample still arrives exactly once and in order per
// series (Prometheus's TSDB rejects out-of-order samples).
func TestReshard(t *testing.T) {
	rv := newReceiver(t)
	// The receiver answers nothing until the whole WAL is written, so
	// that the queues are full however fast the machine ingests.
	ingested := make(chan struct{})
	rv.setHook(func(http.ResponseWriter, *http.Request) bool {
		<-ingested
		time.Sleep(5 * time.Millisecond)
		return false
	})
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(rv.url(t))
	cfg.Capacity, cfg.MaxSamplesPerSend = 100, 20
	cfg.ReshardInterval = 50 * time.Millisecond
	// The decision is read from the log: the shards gauge may show 2
	// for too short a time to be sampled (the old shards drain first).
	var logs syncBuffer
	s, err := New(dir, cfg, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	want := ingest(t, db, 40, 0, 300*15000, 15000, s.Notify)
	close(ingested)
	waitFor(t, 30*time.Second, "all samples", func() bool {
		return received(want, rv.counts(t)) == 0
	})
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	require.Contains(t, logs.String(), `msg="remote write: resharding" remote_name=default from=1 to=2`, "resharded up")
	require.Equal(t, want, rv.counts(t))
	seen, total := rv.deliveries()
	require.Equal(t, want, seen)
	require.Equal(t, len(want), total)
}
