package remote

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/relabel"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// metaReceiver records the remote write 1.0 requests it gets, decoded
// with prompb, and answers 204, or failStatus to the first failN requests
// holding metadata.
type metaReceiver struct {
	srv *httptest.Server

	mu         sync.Mutex // protects the fields below
	meta       []metaRequest
	samples    int // samples received in 1.0 requests
	v2         int // 2.0 requests received
	failN      int
	failStatus int
}

// metaRequest is an accepted request holding metadata.
type metaRequest struct {
	at       time.Time
	entries  []prompb.MetricMetadata
	size     int  // body bytes
	withData bool // the request also held time series
}

func newMetaReceiver(t *testing.T) *metaReceiver {
	rv := &metaReceiver{}
	rv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rv.mu.Lock()
		defer rv.mu.Unlock()
		if strings.Contains(r.Header.Get("Content-Type"), "io.prometheus.write.v2.Request") {
			rv.v2++
			w.WriteHeader(http.StatusNoContent)
			return
		}
		raw, err := snappy.Decode(nil, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req prompb.WriteRequest
		if err := req.Unmarshal(raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(req.Metadata) > 0 {
			if rv.failN > 0 {
				rv.failN--
				http.Error(w, "failing on purpose", rv.failStatus)
				return
			}
			rv.meta = append(rv.meta, metaRequest{at: time.Now(), entries: req.Metadata, size: len(body), withData: len(req.Timeseries) > 0})
		}
		for _, ts := range req.Timeseries {
			rv.samples += len(ts.Samples)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rv.srv.Close)
	return rv
}

func (rv *metaReceiver) url(t *testing.T) *url.URL {
	u, err := url.Parse(rv.srv.URL + "/api/v1/write")
	require.NoError(t, err)
	return u
}

func (rv *metaReceiver) requests() []metaRequest {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]metaRequest(nil), rv.meta...)
}

func (rv *metaReceiver) counts() (samples, v2 int) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.samples, rv.v2
}

// metaSeries is a series appended with metadata by appendWithMetadata.
type metaSeries struct {
	ls labels.Labels
	md tsdb.Metadata
}

// appendWithMetadata commits one sample at ts for each series, with its
// metadata, and returns how many samples it committed.
func appendWithMetadata(t *testing.T, db *tsdb.DB, ts int64, ss []metaSeries) int {
	t.Helper()
	app := db.Appender(context.Background())
	for _, s := range ss {
		ref, err := app.Append(0, s.ls, ts, 1)
		require.NoError(t, err)
		_, err = app.UpdateMetadata(ref, s.ls, s.md)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	return len(ss)
}

// metaTestSeries: five families (one of them with two series whose
// metadata differ, the newer one to be sent), and a series dropped by
// metaRelabel whose family must not be sent.
var metaTestSeries = []metaSeries{
	{labels.FromStrings("__name__", "a_total", "i", "0"), tsdb.Metadata{Type: tsdb.MetricTypeCounter, Help: "A, old."}},
	{labels.FromStrings("__name__", "a_total", "i", "1"), tsdb.Metadata{Type: tsdb.MetricTypeCounter, Help: "A."}},
	{labels.FromStrings("__name__", "b"), tsdb.Metadata{Type: tsdb.MetricTypeGauge, Help: "B.", Unit: "bytes"}},
	{labels.FromStrings("__name__", "c_seconds"), tsdb.Metadata{Type: tsdb.MetricTypeHistogram, Help: "C.", Unit: "seconds"}},
	{labels.FromStrings("__name__", "d"), tsdb.Metadata{Type: tsdb.MetricTypeSummary, Help: "D."}},
	{labels.FromStrings("__name__", "e_info"), tsdb.Metadata{Type: tsdb.MetricTypeInfo}},
	{labels.FromStrings("__name__", "dropped"), tsdb.Metadata{Type: tsdb.MetricTypeGauge, Help: "Dropped."}},
}

// metaTestWant is what is sent for metaTestSeries, in order.
var metaTestWant = []prompb.MetricMetadata{
	{MetricFamilyName: "a_total", Type: prompb.MetricMetadata_COUNTER, Help: "A."},
	{MetricFamilyName: "b", Type: prompb.MetricMetadata_GAUGE, Help: "B.", Unit: "bytes"},
	{MetricFamilyName: "c_seconds", Type: prompb.MetricMetadata_HISTOGRAM, Help: "C.", Unit: "seconds"},
	{MetricFamilyName: "d", Type: prompb.MetricMetadata_SUMMARY, Help: "D."},
	{MetricFamilyName: "e_info", Type: prompb.MetricMetadata_INFO},
}

func metaRelabel() []*relabel.Config {
	rc := &relabel.Config{SourceLabels: model.LabelNames{"__name__"}, Regex: relabel.MustNewRegexp("dropped"), Action: relabel.Drop}
	return []*relabel.Config{rc}
}

// TestSendMetadataV1 checks the 1.0 metadata requests against a
// recording receiver: the newest metadata of each family kept by
// relabeling, all its fields, in requests of their own of at most
// MaxSamplesPerSend entries, once per SendInterval, with the metrics
// counting what was acknowledged.
func TestSendMetadataV1(t *testing.T) {
	rv := newMetaReceiver(t)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	defer func() { require.NoError(t, db.Close()) }()
	const interval = 100 * time.Millisecond
	cfg := testConfig(rv.url(t))
	cfg.RelabelConfigs = metaRelabel()
	cfg.Metadata.SendInterval = interval
	cfg.Metadata.MaxSamplesPerSend = 2
	require.True(t, cfg.Metadata.Send, "on by default")
	s, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	n := appendWithMetadata(t, db, 1000, metaTestSeries)
	started := time.Now()
	require.NoError(t, s.Start())
	defer func() { require.NoError(t, s.Stop()) }()
	s.Notify()

	// Three requests a round (2+2+1 entries); wait for three full rounds.
	waitFor(t, 20*time.Second, "three rounds of metadata", func() bool { return len(rv.requests()) >= 9 })
	reqs := rv.requests()
	var rounds [][]prompb.MetricMetadata
	for _, r := range reqs {
		require.False(t, r.withData, "metadata in a request of its own")
		require.LessOrEqual(t, len(r.entries), 2, "batch cap")
		if r.entries[0].MetricFamilyName == metaTestWant[0].MetricFamilyName {
			rounds = append(rounds, nil)
		}
		require.NotEmpty(t, rounds, "a round starts with the first family")
		rounds[len(rounds)-1] = append(rounds[len(rounds)-1], r.entries...)
	}
	// Every round but perhaps the first (sent before the reader read the
	// Metadata records) and the last (in progress) is whole.
	require.GreaterOrEqual(t, len(rounds), 3)
	for i, r := range rounds[1 : len(rounds)-1] {
		require.Equal(t, metaTestWant, r, "round %d", i+1)
	}
	// Rounds come once per interval: the first one interval after Start,
	// and no more of them than intervals passed.
	require.GreaterOrEqual(t, reqs[0].at.Sub(started), interval)
	elapsed := reqs[len(reqs)-1].at.Sub(started)
	require.LessOrEqual(t, len(rounds), int(elapsed/interval), "rounds in %v", elapsed)

	waitFor(t, 10*time.Second, "the samples", func() bool { got, _ := rv.counts(); return got == n-1 })
	require.NoError(t, s.Stop())
	reqs = rv.requests()
	entries, size := 0, 0
	for _, r := range reqs {
		entries += len(r.entries)
		size += r.size
	}
	require.Equal(t, float64(entries), testutil.ToFloat64(s.metrics.metadataSent))
	require.Equal(t, float64(size), testutil.ToFloat64(s.metrics.metadataBytes))
	require.Zero(t, testutil.ToFloat64(s.metrics.metadataFailed))
	require.Zero(t, testutil.ToFloat64(s.metrics.metadataRetried))
}

// TestSendMetadataErrors: a metadata request answered 5xx or 429 is
// retried (its entries counted in metadata_retried_total) and then
// arrives; one answered 400 is given up (metadata_failed_total), and the
// next interval sends the metadata again.
func TestSendMetadataErrors(t *testing.T) {
	for _, tc := range []struct {
		status           int
		retried, failed  float64
		firstRoundWanted bool // the first round arrives whole
	}{
		{status: http.StatusServiceUnavailable, retried: 2, firstRoundWanted: true},
		{status: http.StatusTooManyRequests, retried: 2, firstRoundWanted: true},
		{status: http.StatusBadRequest, failed: 2},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			rv := newMetaReceiver(t)
			rv.failN, rv.failStatus = 1, tc.status
			dir := t.TempDir()
			db := openIso(t, dir, isoOptions())
			defer func() { require.NoError(t, db.Close()) }()
			cfg := testConfig(rv.url(t))
			cfg.RelabelConfigs = metaRelabel()
			cfg.Metadata.SendInterval = 50 * time.Millisecond
			cfg.Metadata.MaxSamplesPerSend = 2
			// The Metadata records are read before the first send.
			appendWithMetadata(t, db, 1000, metaTestSeries)
			s, err := New(dir, cfg, nil, nil)
			require.NoError(t, err)
			require.NoError(t, s.Start())
			defer func() { require.NoError(t, s.Stop()) }()
			waitFor(t, 20*time.Second, "two rounds of metadata", func() bool { return len(rv.requests()) >= 5 })
			require.NoError(t, s.Stop())
			reqs := rv.requests()
			var first []prompb.MetricMetadata
			for _, r := range reqs[:3] {
				first = append(first, r.entries...)
			}
			if tc.firstRoundWanted {
				require.Equal(t, metaTestWant, first)
			} else {
				require.Equal(t, metaTestWant[2:], first[:3], "the first batch is given up")
			}
			require.Equal(t, tc.retried, testutil.ToFloat64(s.metrics.metadataRetried))
			require.Equal(t, tc.failed, testutil.ToFloat64(s.metrics.metadataFailed))
		})
	}
}

// TestMetadataNotSent: no 1.0 metadata requests with Metadata.Send off,
// nor with remote write 2.0 (which carries metadata inline), however
// many intervals pass.
func TestMetadataNotSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  ProtobufMessage
		send bool
	}{
		{"v1 send off", WriteV1, false},
		{"v2", WriteV2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rv := newMetaReceiver(t)
			dir := t.TempDir()
			db := openIso(t, dir, isoOptions())
			defer func() { require.NoError(t, db.Close()) }()
			cfg := testConfig(rv.url(t))
			cfg.ProtobufMessage = tc.msg
			cfg.Metadata.Send = tc.send
			cfg.Metadata.SendInterval = 10 * time.Millisecond
			s, err := New(dir, cfg, nil, nil)
			require.NoError(t, err)
			require.NoError(t, s.Start())
			defer func() { require.NoError(t, s.Stop()) }()
			appendWithMetadata(t, db, 1000, metaTestSeries)
			s.Notify()
			waitFor(t, 10*time.Second, "the samples", func() bool {
				return testutil.ToFloat64(s.metrics.samplesSent) == float64(len(metaTestSeries))
			})
			time.Sleep(20 * cfg.Metadata.SendInterval)
			require.NoError(t, s.Stop())
			require.Empty(t, rv.requests())
			if _, v2 := rv.counts(); tc.msg == WriteV2 {
				require.Positive(t, v2)
			}
			require.Zero(t, testutil.ToFloat64(s.metrics.metadataSent))
		})
	}
}

// TestMetadataConfigDefaults: DefaultConfig sends metadata every minute
// in batches of 500, as Prometheus's metadata_config; zero durations and
// counts take those defaults, and a Config not made from DefaultConfig
// leaves Send off.
func TestMetadataConfigDefaults(t *testing.T) {
	u, _ := url.Parse("http://localhost/write")
	for _, tc := range []struct {
		name string
		in   Config
		want MetadataConfig
	}{
		{"DefaultConfig", DefaultConfig(), MetadataConfig{Send: true, SendInterval: time.Minute, MaxSamplesPerSend: 500}},
		{"zero", Config{}, MetadataConfig{SendInterval: time.Minute, MaxSamplesPerSend: 500}},
		{"set", Config{Metadata: MetadataConfig{Send: true, SendInterval: time.Second, MaxSamplesPerSend: 7}},
			MetadataConfig{Send: true, SendInterval: time.Second, MaxSamplesPerSend: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.URL = u
			got, err := tc.in.withDefaults()
			require.NoError(t, err)
			require.Equal(t, tc.want, got.Metadata)
		})
	}
}
