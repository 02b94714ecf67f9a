package remote

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang/snappy"
	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus/testutil"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/stretchr/testify/require"
)

// TestResumeUnevenShards stops a sender whose two shards progressed
// unevenly: the receiver (Prometheus's handler over a Prometheus TSDB)
// hangs every request of one shard, while the other shard has everything
// it holds acknowledged. The position persisted is the slow shard's, so
// the next sender sends the fast shard's samples again, in requests that
// also hold samples committed while no sender ran. Prometheus's 1.0
// handler answers such a request 400 and stores none of it (its older
// samples are out of order); 2.0 stores what it can and answers 400. Every
// sample committed to isotsdb must arrive.
func TestResumeUnevenShards(t *testing.T) {
	for _, msg := range []ProtobufMessage{WriteV1, WriteV2} {
		t.Run(string(msg), func(t *testing.T) { testResumeUnevenShards(t, msg) })
	}
}

func testResumeUnevenShards(t *testing.T, msg ProtobufMessage) {
	const nSeries, step = 20, 15000
	rv := newReceiverFor(t, remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}, false)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(rv.url(t))
	cfg.ProtobufMessage = msg
	cfg.MinShards, cfg.MaxShards = 2, 2
	cfg.FlushDeadline = 200 * time.Millisecond
	// The slow shard queues everything (else the reader waits for it and
	// the fast shard waits for the reader).
	cfg.Capacity = 5000
	cfg.Metadata.Send = false

	// The first commit, before any sender, tells which series share a
	// shard (a series goes to shard ref mod 2).
	want, refs := ingestRefs(t, db, "m", nSeries, 0, 0, step, nil)
	slow := map[string]bool{} // values of label i of the slow shard's series
	for i, ref := range refs {
		if ref%2 == refs[0]%2 {
			slow[fmt.Sprint(i)] = true
		}
	}
	require.Equal(t, nSeries/2, len(slow), "the batch arithmetic below assumes an even split")
	var hung atomic.Int64
	rv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		r.Body = io.NopCloser(bytes.NewReader(body))
		for _, v := range requestLabel(t, r, body, "i") {
			if slow[v] {
				hung.Add(1)
				<-r.Context().Done() // until the sender gives up on it
				return true
			}
		}
		return false
	})

	s1, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s1.Start())
	for k, v := range ingest(t, db, nSeries, step, 92*step, step, s1.Notify) {
		want[k] = v
	}
	fast := map[string]int{} // samples of the fast shard
	for k := range want {
		if !slow[seriesIndex(t, k)] {
			fast[k] = 1
		}
	}
	waitFor(t, 20*time.Second, "the fast shard's samples", func() bool { return received(fast, rv.counts(t)) == 0 })
	require.Positive(t, hung.Load())
	require.NoError(t, s1.Stop())
	require.Equal(t, len(fast), received(want, rv.counts(t)), "the slow shard delivered nothing")

	// Committed while no sender runs.
	for k, v := range ingest(t, db, nSeries, 93*step, 150*step, step, nil) {
		want[k] = v
	}
	rv.setHook(nil)
	// Only full batches (of 100) in the replay: the fast shard's 10 series
	// resend 930 samples (timestamps 0 to 92), so its 10th batch holds 30
	// old samples (timestamps 90 to 92: the first 20 older than what the
	// receiver has; same-valued ones at its newest time are accepted) and
	// then 70 new ones, with new samples of each series in both halves.
	cfg.BatchSendDeadline = 2 * time.Second
	s2, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.Equal(t, s1.Position(), s2.start)
	require.NoError(t, s2.Start())
	for k, v := range ingest(t, db, nSeries, 151*step, 200*step, step, s2.Notify) {
		want[k] = v
	}
	// s1 had nothing of the slow shard acknowledged, so s2 resumes before
	// the first sample and sends (or gives up) each sample once.
	waitFor(t, 20*time.Second, "every sample arrived or given up", func() bool {
		return received(want, rv.counts(t)) == 0 ||
			testutil.ToFloat64(s2.metrics.samplesSent)+testutil.ToFloat64(s2.metrics.samplesFailed) >= float64(len(want)) &&
				testutil.ToFloat64(s2.metrics.samplesPending) == 0
	})
	missing := received(want, rv.counts(t))
	failed := testutil.ToFloat64(s2.metrics.samplesFailed)
	t.Logf("%d samples, %d missing; resumed sender: sent %v, failed %v, requests %d, answers %v",
		len(want), missing, testutil.ToFloat64(s2.metrics.samplesSent), failed, rv.requests.Load(), rv.statusCodes())
	require.Zero(t, missing, "samples committed to isotsdb and never stored by the receiver")
	require.NoError(t, s2.Stop())
	require.NoError(t, db.Close())
}

// requestLabel returns the values of label name in the series of a
// remote-write request (1.0 or 2.0, as its content type says).
func requestLabel(t *testing.T, r *http.Request, body []byte, name string) []string {
	t.Helper()
	raw, err := snappy.Decode(nil, body)
	require.NoError(t, err)
	var out []string
	if strings.Contains(r.Header.Get("Content-Type"), "io.prometheus.write.v2.Request") {
		var req writev2.Request
		require.NoError(t, req.Unmarshal(raw))
		b := plabels.NewScratchBuilder(0)
		for _, ts := range req.Timeseries {
			ls, err := ts.ToLabels(&b, req.Symbols)
			require.NoError(t, err)
			out = append(out, ls.Get(name))
		}
		return out
	}
	var req prompb.WriteRequest
	require.NoError(t, req.Unmarshal(raw))
	for _, ts := range req.Timeseries {
		for _, l := range ts.Labels {
			if l.Name == name {
				out = append(out, l.Value)
			}
		}
	}
	return out
}

// seriesIndex returns the value of label i in a sample key of
// receiver.seen.
func seriesIndex(t *testing.T, key string) string {
	t.Helper()
	m := seriesIndexRE.FindStringSubmatch(key)
	require.NotNil(t, m, key)
	return m[1]
}

var seriesIndexRE = regexp.MustCompile(`[{ ]i="([0-9]+)"`)

// TestRejectedSplitOnlyInReplay has the receiver answer 400 to every
// request. Records committed after the Sender was created are outside the
// replay zone: each sample goes in one request only, dropped with it. A
// Sender started later over the same WAL (under another name, so from the
// first segment) has every record in the zone: with 1.0 each rejected
// request is split down to single samples, and each sample is counted
// failed once; with 2.0 nothing is split.
func TestRejectedSplitOnlyInReplay(t *testing.T) {
	rv := newReceiverFor(t, remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}, false)
	var (
		mu     sync.Mutex
		sent   map[string]int // per sample: requests that held it
		single map[string]int // per sample: requests that held it alone
	)
	rv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		keys := requestKeys(t, r, body)
		mu.Lock()
		for _, k := range keys {
			sent[k]++
			if len(keys) == 1 {
				single[k]++
			}
		}
		mu.Unlock()
		http.Error(w, "rejected", http.StatusBadRequest)
		return true
	})
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	var want map[string]int
	for i, tc := range []struct {
		name   string
		msg    ProtobufMessage
		before bool // samples committed before the Sender is created
		split  bool
	}{
		{"live", WriteV1, false, false},
		{"replay", WriteV1, true, true},
		{"replay-v2", WriteV2, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			sent, single = map[string]int{}, map[string]int{}
			mu.Unlock()
			cfg := testConfig(rv.url(t))
			cfg.Name = fmt.Sprint("s", i)
			cfg.ProtobufMessage = tc.msg
			cfg.Metadata.Send = false
			s, err := New(dir, cfg, nil, nil)
			require.NoError(t, err)
			require.NoError(t, s.Start())
			if !tc.before {
				want = ingest(t, db, 20, 0, 10*15000, 15000, s.Notify)
			}
			waitFor(t, 20*time.Second, "every sample failed", func() bool {
				return testutil.ToFloat64(s.metrics.samplesFailed) >= float64(len(want))
			})
			require.NoError(t, s.Stop())
			require.Equal(t, len(want), int(testutil.ToFloat64(s.metrics.samplesFailed)), "each sample failed once")
			require.Zero(t, testutil.ToFloat64(s.metrics.samplesSent))
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, len(want), len(sent))
			for k := range want {
				if tc.split {
					require.Equal(t, 1, single[k], k)
					require.Greater(t, sent[k], 1, k)
				} else {
					require.Equal(t, 1, sent[k], k)
				}
			}
		})
	}
	require.NoError(t, db.Close())
}

// requestKeys returns the sample keys (as receiver.seen) of a
// remote-write request.
func requestKeys(t *testing.T, r *http.Request, body []byte) []string {
	t.Helper()
	raw, err := snappy.Decode(nil, body)
	require.NoError(t, err)
	var out []string
	b := plabels.NewScratchBuilder(0)
	if strings.Contains(r.Header.Get("Content-Type"), "io.prometheus.write.v2.Request") {
		var req writev2.Request
		require.NoError(t, req.Unmarshal(raw))
		for _, ts := range req.Timeseries {
			ls, err := ts.ToLabels(&b, req.Symbols)
			require.NoError(t, err)
			for _, smp := range ts.Samples {
				out = append(out, fmt.Sprintf("%s@%d=%g", ls, smp.Timestamp, smp.Value))
			}
		}
		return out
	}
	var req prompb.WriteRequest
	require.NoError(t, req.Unmarshal(raw))
	for _, ts := range req.Timeseries {
		for _, smp := range ts.Samples {
			out = append(out, fmt.Sprintf("%s@%d=%g", ts.ToLabels(&b, nil), smp.Timestamp, smp.Value))
		}
	}
	return out
}
