package remote

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/model"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
)

// TestSendExemplarsAndMetadata sends floats with start times, native
// histograms, exemplars and metadata, committed in isotsdb, to
// Prometheus's own receiver (both messages accepted, exemplar storage and
// metadata appends on), as remote write 1.0 and as 2.0. Every sample
// arrives, every exemplar is in Prometheus's exemplar storage, and the
// 2.0 requests carried each sample's start time and its series' metadata
// as of the sample's commit (1.0 carries neither).
func TestSendExemplarsAndMetadata(t *testing.T) {
	for _, msg := range []ProtobufMessage{WriteV1, WriteV2} {
		t.Run(string(msg), func(t *testing.T) {
			rv := newReceiverFor(t, remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}, true)
			dir := t.TempDir()
			o := isoOptions()
			o.MaxExemplars = 10_000
			db := openIso(t, dir, o)
			cfg := testConfig(rv.url(t))
			cfg.SendExemplars = true
			cfg.ProtobufMessage = msg
			s, err := New(dir, cfg, nil, nil)
			require.NoError(t, err)
			require.NoError(t, s.Start())

			const n = 60
			counters := []labels.Labels{
				labels.FromStrings("__name__", "c_total", "i", "0"),
				labels.FromStrings("__name__", "c_total", "i", "1"),
			}
			hl := labels.FromStrings("__name__", "lat_seconds")
			gl := labels.FromStrings("__name__", "g")
			want := map[string]int{}
			wantST := map[string]int64{}
			wantEx := map[string]int{}
			wantMeta := map[string]metadata.Metadata{}
			key := func(ls labels.Labels, ts int64, v string) string {
				return fmt.Sprintf("%s@%d=%s", prom(ls), ts, v)
			}
			counterMeta := tsdb.Metadata{Type: tsdb.MetricTypeCounter, Help: "Things done."}
			for i := range int64(n) {
				ts := 1_000_000 + i*15_000
				app := db.Appender(context.Background())
				if i == n/2 {
					counterMeta.Help = "Things done, counted."
				}
				for j, cl := range counters {
					v := float64(i*10) + float64(j)
					ref, err := app.AppendST(0, cl, 1_000_000-5000, ts, v, nil, nil)
					require.NoError(t, err)
					want[key(cl, ts, fmt.Sprint(v))] = 1
					wantST[key(cl, ts, fmt.Sprint(v))] = 1_000_000 - 5000
					wantMeta[key(cl, ts, fmt.Sprint(v))] = metadata.Metadata{Type: model.MetricTypeCounter, Help: counterMeta.Help}
					_, err = app.UpdateMetadata(ref, cl, counterMeta)
					require.NoError(t, err)
					if j == 0 && i%3 == 0 {
						e := tsdb.Exemplar{Labels: labels.FromStrings("trace_id", fmt.Sprint("t", i)), Value: v, Ts: ts, HasTs: true}
						_, err = app.AppendExemplar(ref, cl, e)
						require.NoError(t, err)
						wantEx[fmt.Sprintf("%s %s@%d=%g", prom(cl), prom(e.Labels), ts, v)] = 1
					}
				}
				c := uint64(i + 1)
				h := &histogram.Histogram{Schema: 0, Count: c, Sum: float64(i),
					PositiveSpans: []histogram.Span{{Offset: 0, Length: 1}}, PositiveBuckets: []int64{int64(c)}}
				ref, err := app.AppendST(0, hl, 1_000_000-9000, ts, 0, h, nil)
				require.NoError(t, err)
				want[key(hl, ts, "histogram")] = 1
				wantST[key(hl, ts, "histogram")] = 1_000_000 - 9000
				wantMeta[key(hl, ts, "histogram")] = metadata.Metadata{Type: model.MetricTypeHistogram, Unit: "seconds", Help: "Latency."}
				_, err = app.UpdateMetadata(ref, hl, tsdb.Metadata{Type: tsdb.MetricTypeHistogram, Unit: "seconds", Help: "Latency."})
				require.NoError(t, err)
				if i%5 == 0 {
					e := tsdb.Exemplar{Labels: labels.FromStrings("trace_id", fmt.Sprint("h", i)), Value: 0.5, Ts: ts, HasTs: true}
					_, err = app.AppendExemplar(ref, hl, e)
					require.NoError(t, err)
					wantEx[fmt.Sprintf("%s %s@%d=%g", prom(hl), prom(e.Labels), ts, 0.5)] = 1
				}
				// A series without metadata, its samples without start time.
				_, err = app.Append(0, gl, ts, float64(i))
				require.NoError(t, err)
				want[key(gl, ts, fmt.Sprint(float64(i)))] = 1
				wantST[key(gl, ts, fmt.Sprint(float64(i)))] = 0
				wantMeta[key(gl, ts, fmt.Sprint(float64(i)))] = metadata.Metadata{Type: model.MetricTypeUnknown}
				require.NoError(t, app.Commit())
				s.Notify()
			}

			waitFor(t, 20*time.Second, "all samples and exemplars", func() bool {
				_, total := rv.deliveries()
				return total >= len(want) && int(testutil.ToFloat64(s.metrics.exemplarsSent)) >= len(wantEx)
			})
			got, _ := rv.deliveries()
			require.Equal(t, want, got)
			require.Zero(t, testutil.ToFloat64(s.metrics.samplesFailed))
			require.Zero(t, testutil.ToFloat64(s.metrics.exemplarsFailed))
			require.Equal(t, len(wantEx), int(testutil.ToFloat64(s.metrics.exemplarsSent)))
			require.Equal(t, map[int]int{204: int(rv.requests.Load())}, rv.statusCodes())

			eq, err := rv.db.ExemplarQuerier(context.Background())
			require.NoError(t, err)
			res, err := eq.Select(0, 1<<62, []*plabels.Matcher{promMatcher()})
			require.NoError(t, err)
			gotEx := map[string]int{}
			for _, r := range res {
				for _, e := range r.Exemplars {
					gotEx[fmt.Sprintf("%s %s@%d=%g", r.SeriesLabels, e.Labels, e.Ts, e.Value)]++
				}
			}
			require.Equal(t, wantEx, gotEx)

			// A commit of an exemplar alone (its series has samples in
			// earlier commits): 1.0 sends it in a TimeSeries of its own,
			// as Prometheus does; 2.0 cannot (a TimeSeries needs a
			// sample), so it is counted failed.
			app := db.Appender(context.Background())
			lone := tsdb.Exemplar{Labels: labels.FromStrings("trace_id", "lone"), Value: 7, Ts: 2_000_000, HasTs: true}
			_, err = app.AppendExemplar(0, counters[1], lone)
			require.NoError(t, err)
			require.NoError(t, app.Commit())
			s.Notify()
			if msg == WriteV1 {
				waitFor(t, 20*time.Second, "the lone exemplar", func() bool {
					return int(testutil.ToFloat64(s.metrics.exemplarsSent)) == len(wantEx)+1
				})
				res, err := eq.Select(2_000_000, 2_000_000, []*plabels.Matcher{plabels.MustNewMatcher(plabels.MatchEqual, "i", "1")})
				require.NoError(t, err)
				require.Len(t, res, 1)
				require.Equal(t, `{trace_id="lone"}`, res[0].Exemplars[0].Labels.String())
			} else {
				waitFor(t, 20*time.Second, "the lone exemplar counted failed", func() bool {
					return int(testutil.ToFloat64(s.metrics.exemplarsFailed)) == 1
				})
			}
			require.NoError(t, s.Stop())
			require.NoError(t, db.Close())

			rv.mu.Lock()
			seen := rv.v2
			rv.mu.Unlock()
			if msg == WriteV1 {
				require.Empty(t, seen.meta, "1.0 requests were decoded as 2.0")
				return
			}
			require.Equal(t, wantST, seen.st)
			require.Equal(t, wantMeta, seen.meta)
		})
	}
}

// TestEncodeV2ExemplarsOnly checks that the 2.0 encoder puts the
// exemplars of an exOnly item into the batch's earlier TimeSeries of the
// same series, and counts those of a series without one as unsent.
func TestEncodeV2ExemplarsOnly(t *testing.T) {
	a := &series{labels: []prompb.Label{{Name: "__name__", Value: "a"}}}
	b := &series{labels: []prompb.Label{{Name: "__name__", Value: "b"}}}
	ex := func(id string) []prompb.Exemplar {
		return []prompb.Exemplar{{Labels: []prompb.Label{{Name: "trace_id", Value: id}}, Value: 1, Timestamp: 5}}
	}
	batch := []item{
		{s: a, t: 5, v: 1},
		{s: b, x: &itemExtra{exOnly: true, ex: ex("b1")}},
		{s: a, x: &itemExtra{exOnly: true, ex: ex("a1")}},
		{s: a, x: &itemExtra{exOnly: true, ex: ex("a2")}},
	}
	var e v2Encoder
	body, unsent, err := e.encode(batch)
	require.NoError(t, err)
	require.Equal(t, 1, unsent)
	raw, err := snappy.Decode(nil, body)
	require.NoError(t, err)
	var req writev2.Request
	require.NoError(t, req.Unmarshal(raw))
	require.Len(t, req.Timeseries, 1)
	var got []string
	sb := plabels.NewScratchBuilder(0)
	for _, x := range req.Timeseries[0].Exemplars {
		pe, err := x.ToExemplar(&sb, req.Symbols)
		require.NoError(t, err)
		got = append(got, pe.Labels.Get("trace_id"))
	}
	require.Equal(t, []string{"a1", "a2"}, got)
	ls, err := req.Timeseries[0].ToLabels(&sb, req.Symbols)
	require.NoError(t, err)
	require.Equal(t, `{__name__="a"}`, ls.String())
}

// TestSendV2ToV1Receiver sends remote write 2.0 to Prometheus's receiver
// accepting only 1.0: it answers 415, which the sender does not retry. Every
// sample is counted failed, the failure is logged, and the position still
// moves past them (nothing stays pending).
func TestSendV2ToV1Receiver(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(rv.url(t))
	cfg.ProtobufMessage = WriteV2
	var logs syncBuffer
	s, err := New(dir, cfg, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	want := ingest(t, db, 10, 0, 49_000, 1000, s.Notify)

	waitFor(t, 20*time.Second, "every sample failed", func() bool {
		return int(testutil.ToFloat64(s.metrics.samplesFailed)) >= len(want)
	})
	require.Equal(t, len(want), int(testutil.ToFloat64(s.metrics.samplesFailed)))
	require.Zero(t, testutil.ToFloat64(s.metrics.samplesRetried))
	require.Zero(t, testutil.ToFloat64(s.metrics.samplesSent))
	codes := rv.statusCodes()
	require.Equal(t, map[int]int{415: codes[415]}, codes)
	require.Equal(t, int(testutil.ToFloat64(s.metrics.requestsSent)), codes[415], "a rejected request was sent again")
	waitFor(t, 10*time.Second, "nothing pending", func() bool { return testutil.ToFloat64(s.metrics.samplesPending) == 0 })
	require.Contains(t, logs.String(), "batch dropped")
	require.Contains(t, logs.String(), "415")
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	got, _ := rv.deliveries()
	require.Empty(t, got)
}

// TestConfigProtobufMessage checks the message names accepted.
func TestConfigProtobufMessage(t *testing.T) {
	u, err := url.Parse("http://127.0.0.1:1/api/v1/write")
	require.NoError(t, err)
	for _, tc := range []struct {
		msg  ProtobufMessage
		want ProtobufMessage
		ok   bool
	}{
		{"", WriteV1, true},
		{"prometheus.WriteRequest", WriteV1, true},
		{"io.prometheus.write.v2.Request", WriteV2, true},
		{"io.prometheus.write.v3.Request", "", false},
	} {
		c := DefaultConfig()
		c.URL = u
		c.ProtobufMessage = tc.msg
		got, err := c.withDefaults()
		if !tc.ok {
			require.ErrorIs(t, err, ErrConfig, tc.msg)
			continue
		}
		require.NoError(t, err, tc.msg)
		require.Equal(t, tc.want, got.ProtobufMessage)
	}
}

// prom converts isotsdb labels to Prometheus's.
func prom(ls labels.Labels) plabels.Labels {
	b := plabels.NewScratchBuilder(0)
	ls.Range(func(l labels.Label) { b.Add(l.Name, l.Value) })
	return b.Labels()
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (a logger's
// output).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSendV2MetadataAcrossRestart sets a series' metadata in its first
// commit only (isotsdb logs metadata when it changes), stops the sender,
// and starts another from the persisted position: the new sender reads
// the metadata from the WAL before its position, so the samples it sends
// still carry it.
func TestSendV2MetadataAcrossRestart(t *testing.T) {
	rv := newReceiverFor(t, remoteapi.MessageTypes{remoteapi.WriteV2MessageType}, false)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(rv.url(t))
	cfg.ProtobufMessage = WriteV2
	ls := labels.FromStrings("__name__", "up_total")
	meta := metadata.Metadata{Type: model.MetricTypeCounter, Unit: "seconds", Help: "Up."}
	want := map[string]metadata.Metadata{}
	commit := func(i int64, notify func()) {
		app := db.Appender(context.Background())
		ref, err := app.Append(0, ls, i*1000, float64(i))
		require.NoError(t, err)
		if i == 0 {
			_, err = app.UpdateMetadata(ref, ls, tsdb.Metadata{Type: tsdb.MetricTypeCounter, Unit: "seconds", Help: "Up."})
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
		want[fmt.Sprintf("%s@%d=%g", prom(ls), i*1000, float64(i))] = meta
		if notify != nil {
			notify()
		}
	}
	s1, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s1.Start())
	for i := range int64(20) {
		commit(i, s1.Notify)
	}
	waitFor(t, 20*time.Second, "the first half", func() bool { _, n := rv.deliveries(); return n >= 20 })
	require.NoError(t, s1.Stop())

	s2, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.Equal(t, s1.Position(), s2.start)
	require.NoError(t, s2.Start())
	for i := int64(20); i < 40; i++ {
		commit(i, s2.Notify)
	}
	waitFor(t, 20*time.Second, "the second half", func() bool { _, n := rv.deliveries(); return n >= 40 })
	require.NoError(t, s2.Stop())
	require.NoError(t, db.Close())
	rv.mu.Lock()
	got := rv.v2.meta
	rv.mu.Unlock()
	require.Equal(t, want, got)
}

// TestSendV2PartialWrite: a 2.0 receiver that stores part of a request
// and rejects the rest (Prometheus's: 400 with the counts written) gets
// the stored part counted as sent and only the rest as failed, as
// Prometheus's queue manager counts them.
func TestSendV2PartialWrite(t *testing.T) {
	rv := newReceiverFor(t, remoteapi.MessageTypes{remoteapi.WriteV2MessageType}, false)
	// The receiver already has a newer sample of series 0: every sample of
	// it sent is out of order there.
	app := rv.db.Appender(context.Background())
	_, err := app.Append(0, plabels.FromStrings("__name__", "m", "i", "0", "job", "j0"), 100_000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(rv.url(t))
	cfg.ProtobufMessage = WriteV2
	s, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	want := ingest(t, db, 10, 0, 49_000, 1000, s.Notify) // 50 samples of each of 10 series

	waitFor(t, 20*time.Second, "every sample sent or failed", func() bool {
		return int(testutil.ToFloat64(s.metrics.samplesSent)+testutil.ToFloat64(s.metrics.samplesFailed)) >= len(want)
	})
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	require.Equal(t, 50, int(testutil.ToFloat64(s.metrics.samplesFailed)), "series 0's samples")
	require.Equal(t, len(want)-50, int(testutil.ToFloat64(s.metrics.samplesSent)), "the rest, stored")
	require.Positive(t, rv.statusCodes()[400], "partial writes answered 400")
	got := rv.counts(t)
	require.Len(t, got, len(want)-50+1, "what was sent and stored, and the sample stored before")
	require.Equal(t, 50, received(want, got), "only series 0's samples missing")
}
