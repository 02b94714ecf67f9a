package remote

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	config_util "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/config"
	promremote "github.com/prometheus/prometheus/storage/remote"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// Benchmark WAL: benchSeries series, benchSteps commits. Timestamps start
// an hour ahead, because Prometheus's WAL watcher only sends samples newer
// than its start.
const (
	benchSeries = 1000
	benchSteps  = 200
)

// benchWAL writes the benchmark WAL into a new DB directory and closes
// the DB. It returns the directory and the number of samples.
func benchWAL(b *testing.B) (string, int) {
	b.Helper()
	dir := b.TempDir()
	o := tsdb.DefaultOptions()
	o.NoLockfile = true
	db, err := tsdb.Open(dir, nil, nil, o)
	if err != nil {
		b.Fatal(err)
	}
	ls := make([]labels.Labels, benchSeries)
	for i := range ls {
		ls[i] = labels.FromStrings("__name__", "bench_metric", "instance", fmt.Sprintf("host-%d:9100", i%50), "series", fmt.Sprint(i))
	}
	base := time.Now().Add(time.Hour).UnixMilli()
	for s := range int64(benchSteps) {
		app := db.Appender(context.Background())
		for i := range ls {
			if _, err := app.Append(0, ls[i], base+s*15000, float64(i)+float64(s)); err != nil {
				b.Fatal(err)
			}
		}
		if err := app.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return dir, benchSteps * benchSeries
}

// sink is a receiver that reads and discards requests, so that the
// benchmark measures the sender.
func sink(b *testing.B) *url.URL {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/write")
	return u
}

// cpuTime returns the user+system CPU time of the process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(b *testing.B, samples int, wall, cpu time.Duration) {
	n := float64(samples) * float64(b.N)
	b.ReportMetric(float64(wall.Nanoseconds())/n, "ns/sample")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/sample")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSend sends the whole benchmark WAL with a new Sender per
// iteration (each under its own name, so none resumes) to a discarding
// receiver, and reports wall and CPU time per sample.
func BenchmarkSend(b *testing.B) { benchSend(b, WriteV1) }

// BenchmarkSendV2 is BenchmarkSend with remote write 2.0.
func BenchmarkSendV2(b *testing.B) { benchSend(b, WriteV2) }

func benchSend(b *testing.B, msg ProtobufMessage) {
	dir, samples := benchWAL(b)
	u := sink(b)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := range b.N {
		cfg := DefaultConfig()
		cfg.URL = u
		cfg.Name = fmt.Sprint("bench", i)
		cfg.ProtobufMessage = msg
		cfg.BatchSendDeadline = 10 * time.Millisecond
		cfg.PollInterval = 5 * time.Millisecond
		s, err := New(dir, cfg, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		for testutil.ToFloat64(s.metrics.samplesSent) < float64(samples) {
			s.Notify()
			time.Sleep(5 * time.Millisecond)
		}
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
	}
	report(b, samples, time.Since(start), cpuTime()-cpu0)
}

// BenchmarkSendPrometheus does the same with Prometheus's remote write
// storage (its QueueManager and WAL watcher) over the same kind of WAL.
func BenchmarkSendPrometheus(b *testing.B) { benchSendPrometheus(b, remoteapi.WriteV1MessageType) }

// BenchmarkSendPrometheusV2 is BenchmarkSendPrometheus with remote write
// 2.0.
func BenchmarkSendPrometheusV2(b *testing.B) { benchSendPrometheus(b, remoteapi.WriteV2MessageType) }

func benchSendPrometheus(b *testing.B, msg remoteapi.WriteMessageType) {
	dir, samples := benchWAL(b)
	u := sink(b)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := range b.N {
		reg := prometheus.NewRegistry()
		ws := promremote.NewWriteStorage(nil, reg, dir, 10*time.Second, nil, false)
		rwc := config.DefaultRemoteWriteConfig
		rwc.Name = fmt.Sprint("bench", i)
		rwc.URL = &config_util.URL{URL: u}
		rwc.ProtobufMessage = msg
		rwc.QueueConfig.BatchSendDeadline = model.Duration(10 * time.Millisecond)
		rwc.MetadataConfig.Send = false
		conf := &config.Config{GlobalConfig: config.DefaultGlobalConfig, RemoteWriteConfigs: []*config.RemoteWriteConfig{&rwc}}
		if err := ws.ApplyConfig(conf); err != nil {
			b.Fatal(err)
		}
		// The watcher reads the live (here: only) segment when notified,
		// as the DB does on every commit, or every 15 s.
		for promSent(b, reg) < float64(samples) {
			ws.Notify()
			time.Sleep(5 * time.Millisecond)
		}
		if err := ws.Close(); err != nil {
			b.Fatal(err)
		}
	}
	report(b, samples, time.Since(start), cpuTime()-cpu0)
}

// promSent reads prometheus_remote_storage_samples_total from reg.
func promSent(b *testing.B, reg *prometheus.Registry) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "prometheus_remote_storage_samples_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
