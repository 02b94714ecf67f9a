package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang/snappy"
	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	promremote "github.com/prometheus/prometheus/storage/remote"
	ptsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// receiver is Prometheus's own remote-write handler over a Prometheus
// TSDB, behind a hook that can fail requests, on a loopback server.
type receiver struct {
	db       *ptsdb.DB
	handler  http.Handler
	srv      *httptest.Server
	requests atomic.Int64 // requests that reached Prometheus's handler

	mu      sync.Mutex                                        // protects the fields below
	hook    func(w http.ResponseWriter, r *http.Request) bool // true: answered
	seen    map[string]int                                    // accepted deliveries per sample
	samples int                                               // accepted samples, duplicates included
	codes   map[int]int                                       // answers of Prometheus's handler, by status
	v2      v2Seen                                            // what accepted 2.0 requests carried
}

// tlogWriter writes to the test's log.
type tlogWriter struct{ t *testing.T }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Logf("receiver: %s", p)
	return len(p), nil
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	return newReceiverFor(t, remoteapi.MessageTypes{remoteapi.WriteV1MessageType}, false)
}

// newReceiverFor is newReceiver accepting the messages msgs, with
// Prometheus's exemplar storage on if exemplars, and metadata appends on
// (stored with the samples of a 2.0 request, as with Prometheus's
// metadata-wal-records feature).
func newReceiverFor(t *testing.T, msgs remoteapi.MessageTypes, exemplars bool) *receiver {
	t.Helper()
	o := ptsdb.DefaultOptions()
	if exemplars {
		o.EnableExemplarStorage = true
		o.MaxExemplars = 100_000
	}
	o.EnableMetadataWALRecords = true
	db, err := ptsdb.Open(t.TempDir(), nil, nil, o, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	rv := &receiver{db: db}
	// Prometheus's handler logs rejected samples and needs a logger for
	// that (nil panics, and the sender then retries forever).
	logger := slog.New(slog.NewTextHandler(tlogWriter{t}, nil))
	rv.handler = promremote.NewWriteHandler(logger, nil, db, msgs, false, true)
	rv.srv = httptest.NewServer(rv)
	t.Cleanup(func() {
		rv.mu.Lock()
		srv := rv.srv
		rv.mu.Unlock()
		if srv != nil {
			srv.Close()
		}
	})
	return rv
}

// kill closes the server and every connection to it.
func (rv *receiver) kill() {
	rv.mu.Lock()
	srv := rv.srv
	rv.mu.Unlock()
	srv.CloseClientConnections()
	srv.Close()
}

// restart listens again on the address of the killed server.
func (rv *receiver) restart(t *testing.T) {
	t.Helper()
	rv.mu.Lock()
	addr := rv.srv.Listener.Addr().String()
	rv.mu.Unlock()
	var l net.Listener
	var err error
	for range 100 { // the port may take a moment to be free again
		if l, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(rv)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	rv.mu.Lock()
	rv.srv = srv
	rv.mu.Unlock()
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rv.mu.Lock()
	hook := rv.hook
	rv.mu.Unlock()
	if hook != nil && hook(w, r) {
		return
	}
	rv.requests.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	rv.handler.ServeHTTP(rec, r)
	rv.mu.Lock()
	if rv.codes == nil {
		rv.codes = map[int]int{}
	}
	rv.codes[rec.Code]++
	rv.mu.Unlock()
	if rec.Code/100 == 2 {
		if strings.Contains(r.Header.Get("Content-Type"), "io.prometheus.write.v2.Request") {
			rv.recordV2(body)
		} else {
			rv.record(body)
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// record counts the samples of an accepted request.
func (rv *receiver) record(body []byte) {
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		return
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		return
	}
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.seen == nil {
		rv.seen = map[string]int{}
	}
	for _, ts := range req.Timeseries {
		b := plabels.NewScratchBuilder(len(ts.Labels))
		for _, l := range ts.Labels {
			b.Add(l.Name, l.Value)
		}
		ls := b.Labels()
		for _, smp := range ts.Samples {
			rv.seen[fmt.Sprintf("%s@%d=%g", ls, smp.Timestamp, smp.Value)]++
			rv.samples++
		}
		for _, h := range ts.Histograms {
			rv.seen[fmt.Sprintf("%s@%d=histogram", ls, h.Timestamp)]++
			rv.samples++
		}
	}
}

// deliveries returns how many times each sample was accepted, and the
// total.
func (rv *receiver) deliveries() (map[string]int, int) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	out := make(map[string]int, len(rv.seen))
	for k, v := range rv.seen {
		out[k] = v
	}
	return out, rv.samples
}

func (rv *receiver) setHook(h func(w http.ResponseWriter, r *http.Request) bool) {
	rv.mu.Lock()
	rv.hook = h
	rv.mu.Unlock()
}

func (rv *receiver) url(t *testing.T) *url.URL {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	u, err := url.Parse(rv.srv.URL + "/api/v1/write")
	require.NoError(t, err)
	return u
}

// counts returns how many times the receiver holds each (series, t).
func (rv *receiver) counts(t *testing.T) map[string]int {
	t.Helper()
	out, err := promSampleKeys(rv.db)
	require.NoError(t, err)
	return out
}

// testConfig is a fast configuration for tests.
func testConfig(u *url.URL) Config {
	c := DefaultConfig()
	c.URL = u
	c.Timeout = 2 * time.Second // a request hung by a killed receiver is retried soon
	c.MaxSamplesPerSend = 100
	c.Capacity = 500
	c.BatchSendDeadline = 20 * time.Millisecond
	c.PollInterval = 10 * time.Millisecond
	c.PositionFlushInterval = 50 * time.Millisecond
	c.MinBackoff = 5 * time.Millisecond
	c.MaxBackoff = 50 * time.Millisecond
	c.ReshardInterval = 200 * time.Millisecond
	c.MaxShards = 4
	c.FlushDeadline = 5 * time.Second
	return c
}

func isoOptions() *tsdb.Options {
	o := tsdb.DefaultOptions()
	o.NoLockfile = true
	return o
}

func openIso(t *testing.T, dir string, o *tsdb.Options) *tsdb.DB {
	t.Helper()
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	return db
}

// ingest commits samples for nSeries series at timestamps from..to (step
// ms), one commit per timestamp, and returns what it wrote in the form of
// receiver.counts with count 1. Series carry the label "job" so that
// relabeling tests can act on it.
func ingest(t *testing.T, db *tsdb.DB, nSeries int, from, to, step int64, notify func()) map[string]int {
	t.Helper()
	return ingestNamed(t, db, "m", nSeries, from, to, step, notify)
}

// ingestNamed is ingest with metric name name.
func ingestNamed(t *testing.T, db *tsdb.DB, name string, nSeries int, from, to, step int64, notify func()) map[string]int {
	t.Helper()
	want, _ := ingestRefs(t, db, name, nSeries, from, to, step, notify)
	return want
}

// ingestRefs is ingestNamed that also returns the series' references
// (the WAL's, which the sender shards by), by series index.
func ingestRefs(t *testing.T, db *tsdb.DB, name string, nSeries int, from, to, step int64, notify func()) (map[string]int, []tsdb.SeriesRef) {
	t.Helper()
	want := map[string]int{}
	refs := make([]tsdb.SeriesRef, nSeries)
	ls := make([]labels.Labels, nSeries)
	pls := make([]plabels.Labels, nSeries)
	for i := range ls {
		ls[i] = labels.FromStrings("__name__", name, "i", fmt.Sprint(i), "job", fmt.Sprint("j", i%3))
		pls[i] = plabels.FromStrings("__name__", name, "i", fmt.Sprint(i), "job", fmt.Sprint("j", i%3))
	}
	for ts := from; ts <= to; ts += step {
		app := db.Appender(context.Background())
		for i := range ls {
			v := float64(ts)/1000 + float64(i)
			ref, err := app.Append(0, ls[i], ts, v)
			require.NoError(t, err)
			refs[i] = ref
			want[fmt.Sprintf("%s@%d=%g", pls[i], ts, v)] = 1
		}
		require.NoError(t, app.Commit())
		if notify != nil {
			notify()
		}
	}
	return want, refs
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// received reports whether every key of want is in got.
func received(want, got map[string]int) (missing int) {
	for k := range want {
		if got[k] == 0 {
			missing++
		}
	}
	return missing
}

// promMatcher matches every series.
func promMatcher() *plabels.Matcher {
	return plabels.MustNewMatcher(plabels.MatchRegexp, "__name__", ".+")
}
