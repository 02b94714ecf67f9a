package promweb

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/prometheus/prompb"
	ptsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

// Receiver benchmark shape: the 20,000 series of the standard corpus in
// targets of 500, scraped every 15 s, sent as Prometheus's queue manager
// sends them: shards, each owning a quarter of the series, each sending
// its samples in order in requests of at most 2,000 samples
// (max_samples_per_send's default), one sample per series per request.
const (
	benchShards       = 4
	benchPerRequest   = 2000
	benchRounds       = 30
	benchScrapePeriod = 15_000
)

// benchLabels reads the corpus and adds job and instance labels.
func benchLabels(b *testing.B) [][]prompb.Label {
	f, err := os.Open("../../testdata/20kseries.json")
	require.NoError(b, err)
	defer f.Close()
	var out [][]prompb.Label
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]string
		require.NoError(b, json.Unmarshal(sc.Bytes(), &m))
		i := len(out)
		m["job"] = "bench"
		m["instance"] = fmt.Sprintf("host-%d:9100", i/500)
		var ls []prompb.Label
		for k, v := range m {
			ls = append(ls, prompb.Label{Name: k, Value: v})
		}
		slices.SortFunc(ls, func(a, b prompb.Label) int {
			switch {
			case a.Name < b.Name:
				return -1
			case a.Name > b.Name:
				return 1
			}
			return 0
		})
		out = append(out, ls)
	}
	require.NoError(b, sc.Err())
	return out
}

// benchRequests returns each shard's encoded requests, in the order the
// shard sends them, and the number of samples in all.
func benchRequests(b *testing.B, lsets [][]prompb.Label, t0 int64) ([][][]byte, int) {
	shards := make([][][]byte, benchShards)
	samples := 0
	for k := range shards {
		var own [][]prompb.Label
		for i := k; i < len(lsets); i += benchShards {
			own = append(own, lsets[i])
		}
		for r := range benchRounds {
			for lo := 0; lo < len(own); lo += benchPerRequest {
				req := &prompb.WriteRequest{}
				for i, ls := range own[lo:min(lo+benchPerRequest, len(own))] {
					req.Timeseries = append(req.Timeseries, prompb.TimeSeries{
						Labels:  ls,
						Samples: []prompb.Sample{{Timestamp: t0 + int64(r)*benchScrapePeriod, Value: float64(r*31 + i%97)}},
					})
				}
				samples += len(req.Timeseries)
				shards[k] = append(shards[k], encodeWrite(b, req))
			}
		}
	}
	return shards, samples
}

// BenchmarkRemoteWriteReceiver measures samples/s ingested through
// /api/v1/write over loopback, isotsdb's receiver (New) against
// Prometheus's over its own TSDB (built the same way), each into a fresh
// database with a WAL at every iteration. Run with -count to repeat; see
// BenchmarkRemoteWriteReceiverPaired for the ratio of the two.
func BenchmarkRemoteWriteReceiver(b *testing.B) {
	lsets := benchLabels(b)
	t0 := time.Now().Add(-time.Hour).UnixMilli()
	shards, samples := benchRequests(b, lsets, t0)
	for _, store := range []string{"isotsdb", "prometheus"} {
		b.Run("store="+store, func(b *testing.B) {
			var elapsed time.Duration
			for b.Loop() {
				elapsed += receiveOnce(b, store, shards)
			}
			b.ReportMetric(float64(samples*b.N)/elapsed.Seconds(), "samples/s")
		})
	}
}

// BenchmarkRemoteWriteReceiverPaired runs both receivers at every
// iteration, one after the other (which goes first alternates), and
// reports the median over iterations of isotsdb's samples/s over
// Prometheus's: a ratio taken seconds apart, which a shared machine's
// changing load skews far less than the two sub-benchmarks of
// BenchmarkRemoteWriteReceiver run minutes apart.
func BenchmarkRemoteWriteReceiverPaired(b *testing.B) {
	lsets := benchLabels(b)
	t0 := time.Now().Add(-time.Hour).UnixMilli()
	shards, samples := benchRequests(b, lsets, t0)
	var ratios []float64
	var iso, prom, isoCPU, promCPU time.Duration
	for b.Loop() {
		order := []string{"isotsdb", "prometheus"}
		if len(ratios)%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		took, cpu := map[string]time.Duration{}, map[string]time.Duration{}
		for _, store := range order {
			c0 := processCPU()
			took[store] = receiveOnce(b, store, shards)
			cpu[store] = processCPU() - c0
		}
		iso += took["isotsdb"]
		prom += took["prometheus"]
		isoCPU += cpu["isotsdb"]
		promCPU += cpu["prometheus"]
		ratios = append(ratios, took["prometheus"].Seconds()/took["isotsdb"].Seconds())
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "iso/prom")
	b.ReportMetric(float64(samples*b.N)/iso.Seconds(), "iso-samples/s")
	b.ReportMetric(float64(samples*b.N)/prom.Seconds(), "prom-samples/s")
	// CPU per sample, client and receiver together (the client's share is
	// the same for both), DB open and close included: whether a lower
	// throughput comes from more work or from idle cores.
	b.ReportMetric(float64(isoCPU.Nanoseconds())/float64(samples*b.N), "iso-cpu-ns/sample")
	b.ReportMetric(float64(promCPU.Nanoseconds())/float64(samples*b.N), "prom-cpu-ns/sample")
}

// processCPU returns the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// receiveOnce opens a fresh database of the given store ("isotsdb" or
// "prometheus") behind its receiver, sends it every shard's requests
// concurrently, one client connection per shard, and returns how long
// they took. The benchmark timer runs only while they are sent.
func receiveOnce(b *testing.B, store string, shards [][][]byte) time.Duration {
	b.StopTimer()
	var h http.Handler
	var closeDB func() error
	switch store {
	case "isotsdb":
		db, err := tsdb.Open(b.TempDir(), nil, nil, nil)
		require.NoError(b, err)
		h, err = New(db, Options{})
		require.NoError(b, err)
		closeDB = db.Close
	default:
		db, err := ptsdb.Open(b.TempDir(), nil, nil, ptsdb.DefaultOptions(), nil)
		require.NoError(b, err)
		h = promHandler(b, db, Options{})
		closeDB = db.Close
	}
	base := serve(b, h)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchShards}}
	b.StartTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, benchShards)
	for _, reqs := range shards {
		wg.Go(func() {
			for _, body := range reqs {
				r, err := http.NewRequest(http.MethodPost, base+"/api/v1/write", bytes.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				for k, v := range rwHeader {
					r.Header.Set(k, v)
				}
				resp, err := client.Do(r)
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					errs <- fmt.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
	client.CloseIdleConnections()
	require.NoError(b, closeDB())
	b.StartTimer()
	return elapsed
}
