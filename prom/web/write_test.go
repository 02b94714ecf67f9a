package promweb

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/golang/snappy"
	ksnappy "github.com/klauspost/compress/snappy"
	config_util "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage/remote"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

// newWriteClient is Prometheus's remote-write client for base's
// /api/v1/write.
func newWriteClient(tb testing.TB, base string) remote.WriteClient {
	tb.Helper()
	u, err := url.Parse(base + "/api/v1/write")
	require.NoError(tb, err)
	c, err := remote.NewWriteClient("isotsdb-test", &remote.ClientConfig{
		URL:     &config_util.URL{URL: u},
		Timeout: model.Duration(10 * time.Second),
	})
	require.NoError(tb, err)
	return c
}

// TestRemoteWrite sends requests with Prometheus's remote-write client
// over loopback and reads every sample back, through the DB and through
// /api/v1/query; exemplars sent with them come back from
// /api/v1/query_exemplars.
func TestRemoteWrite(t *testing.T) {
	o := isoOptions()
	o.MaxExemplars = 1000
	db, err := tsdb.Open(t.TempDir(), nil, nil, o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	base := serve(t, isoHandler(t, db, Options{}))
	client := newWriteClient(t, base)

	// 4 requests of 50 series with 20 samples each, then one with
	// histograms and exemplars; times end a minute ago.
	start := time.Now().Add(-time.Hour).UnixMilli()
	want := stored{}
	for r := range 4 {
		req := &prompb.WriteRequest{}
		for s := range 50 {
			ls := labels.FromStrings("__name__", "rw_metric", "req", strconv.Itoa(r), "series", strconv.Itoa(s))
			var smps []floatSample
			for i := range 20 {
				smps = append(smps, floatSample{start + int64(i)*60_000, float64(r*1000 + s*20 + i)})
				want[ls.String()] = append(want[ls.String()], storedSample{t: smps[i].t, v: smps[i].v})
			}
			req.Timeseries = append(req.Timeseries, promTS(ls, smps...))
		}
		_, err := client.Store(context.Background(), encodeWrite(t, req), 0)
		require.NoError(t, err)
	}
	hls := labels.FromStrings("__name__", "rw_histogram", "kind", "native")
	hts := promTS(hls)
	for i := range 10 {
		ts := start + int64(i)*60_000
		hts.Histograms = append(hts.Histograms, prompb.FromIntHistogram(ts, testHistogram(uint64(i+1))))
		want[hls.String()] = append(want[hls.String()], storedSample{t: ts, v: float64(i + 1), hist: true})
	}
	els := labels.FromStrings("__name__", "rw_exemplified", "kind", "float")
	ets := promTS(els, floatSample{start, 1}, floatSample{start + 60_000, 2})
	ets.Exemplars = []prompb.Exemplar{
		{Labels: []prompb.Label{{Name: "trace_id", Value: "abc"}}, Value: 1, Timestamp: start},
		{Labels: []prompb.Label{{Name: "trace_id", Value: "def"}}, Value: 2, Timestamp: start + 60_000},
	}
	want[els.String()] = []storedSample{{t: start, v: 1}, {t: start + 60_000, v: 2}}
	_, err = client.Store(context.Background(), encodeWrite(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{hts, ets}}), 0)
	require.NoError(t, err)

	// Through the DB.
	require.Equal(t, want, readStored(t, isoQueryable(db)))

	// Through the API: each series' samples in the hour before the last.
	last := start + 19*60_000
	c := &http.Client{}
	r := get(t, c, base, "/api/v1/query?"+url.Values{
		"query": {`rw_metric[20m]`},
		"time":  {strconv.FormatFloat(float64(last)/1000, 'f', -1, 64)},
	}.Encode(), nil)
	require.Equal(t, 200, r.code, r.raw)
	res := r.body.(map[string]any)["data"].(map[string]any)["result"].([]any)
	require.Len(t, res, 200)
	for _, e := range res {
		m := e.(map[string]any)
		b := labels.NewScratchBuilder(3)
		for k, v := range m["metric"].(map[string]any) {
			b.Add(k, v.(string))
		}
		b.Sort()
		ls := b.Labels()
		exp := want[ls.String()]
		vals := m["values"].([]any)
		require.Len(t, vals, len(exp), ls.String())
		for i, pair := range vals {
			p := pair.([]any)
			require.InDelta(t, float64(exp[i].t)/1000, p[0].(float64), 1e-9)
			require.Equal(t, strconv.FormatFloat(exp[i].v, 'f', -1, 64), p[1])
		}
	}

	// The exemplars, through the API.
	r = get(t, c, base, "/api/v1/query_exemplars?"+url.Values{
		"query": {`rw_exemplified`},
		"start": {strconv.FormatInt(start/1000-1, 10)},
		"end":   {strconv.FormatInt(last/1000+1, 10)},
	}.Encode(), nil)
	require.Equal(t, 200, r.code, r.raw)
	ex := r.body.(map[string]any)["data"].([]any)
	require.Len(t, ex, 1, r.raw)
	exs := ex[0].(map[string]any)["exemplars"].([]any)
	require.Len(t, exs, 2, r.raw)
	require.Equal(t, map[string]any{"trace_id": "def"}, exs[1].(map[string]any)["labels"])
}

// TestWriteReadOnly checks that a read-only handler has no receiver and
// no admin endpoints, as Prometheus without the flags that enable them.
func TestWriteReadOnly(t *testing.T) {
	db := openIso(t)
	h := isoHandler(t, db, Options{ReadOnly: true})
	body := encodeWrite(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		promTS(labels.FromStrings("__name__", "x"), floatSample{time.Now().UnixMilli(), 1}),
	}})
	code, _ := post(h, body, rwHeader)
	require.Equal(t, http.StatusNotFound, code)
	require.Empty(t, readStored(t, isoQueryable(db)))

	for _, path := range []string{"/api/v1/admin/tsdb/delete_series?match[]=x", "/api/v1/admin/tsdb/clean_tombstones", "/api/v1/admin/tsdb/snapshot"} {
		r := get(t, &http.Client{}, serve(t, h), path, url.Values{})
		require.Equal(t, http.StatusInternalServerError, r.code, path)
		require.Equal(t, "unavailable", r.body.(map[string]any)["errorType"], path)
	}

	// With writes on, the same request is stored.
	code, msg := post(isoHandler(t, db, Options{}), body, rwHeader)
	require.Equal(t, http.StatusNoContent, code, msg)
	require.Len(t, readStored(t, isoQueryable(db)), 1)
}

// writeCase is a request to /api/v1/write: its headers, and a body built
// from the time of the test.
type writeCase struct {
	name   string
	header map[string]string
	// before, if set, is a request sent (and accepted) first.
	before func(now int64) *prompb.WriteRequest
	body   func(tb testing.TB, now int64) []byte
	// partial marks the requests Prometheus's receiver applies in part:
	// it accepts them (204) and its TSDB drops, at Commit, the samples
	// that are out of order or duplicate against earlier samples of the
	// same request. isotsdb rejects such a request whole (400, nothing
	// applied): its transaction rejects those samples at Append, and the
	// receiver then rolls back.
	partial bool
	// empty marks requests both receivers accept (204) having stored
	// nothing: a 1.0 body sent as a 2.0 message decodes as an empty 2.0
	// request (the 1.0 fields are unknown to 2.0).
	empty bool
}

// TestWriteBadInput sends the same bad requests to Prometheus's receiver
// over Prometheus's TSDB and to New's over isotsdb: each gets the status
// code Prometheus's gets, and each DB then holds exactly what the other
// holds. isotsdb's is also checked to hold all or nothing of each request.
func TestWriteBadInput(t *testing.T) {
	valid := func(now int64) *prompb.WriteRequest {
		return &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
			promTS(labels.FromStrings("__name__", "a", "k", "1"), floatSample{now - 2000, 1}, floatSample{now - 1000, 2}),
			promTS(labels.FromStrings("__name__", "b", "k", "2"), floatSample{now - 1000, 3}),
		}}
	}
	enc := func(f func(now int64) *prompb.WriteRequest) func(testing.TB, int64) []byte {
		return func(tb testing.TB, now int64) []byte { return encodeWrite(tb, f(now)) }
	}
	rawTS := func(lbls []prompb.Label, samples ...prompb.Sample) prompb.TimeSeries {
		return prompb.TimeSeries{Labels: lbls, Samples: samples}
	}
	cases := []writeCase{
		{name: "valid", header: rwHeader, body: enc(valid)},
		{name: "malformed protobuf", header: rwHeader, body: func(_ testing.TB, _ int64) []byte {
			return snappy.Encode(nil, []byte("\x0a\xff\xff\xff\xff\x0fnot a protobuf"))
		}},
		{name: "truncated protobuf", header: rwHeader, body: func(tb testing.TB, now int64) []byte {
			b, err := valid(now).Marshal()
			require.NoError(tb, err)
			return snappy.Encode(nil, b[:len(b)-3])
		}},
		{name: "wrong content type", header: map[string]string{"Content-Type": "text/plain", "Content-Encoding": "snappy"}, body: enc(valid)},
		{name: "unknown proto message", header: map[string]string{"Content-Type": "application/x-protobuf;proto=foo.Bar", "Content-Encoding": "snappy"}, body: enc(valid)},
		{name: "1.0 body as remote write 2 message", empty: true, header: map[string]string{"Content-Type": "application/x-protobuf;proto=io.prometheus.write.v2.Request", "Content-Encoding": "snappy"}, body: enc(valid)},
		{name: "gzip encoding", header: map[string]string{"Content-Type": protoContentType, "Content-Encoding": "gzip"}, body: enc(valid)},
		{name: "bad snappy frame", header: rwHeader, body: func(tb testing.TB, now int64) []byte {
			b, err := valid(now).Marshal()
			require.NoError(tb, err)
			return b // not snappy-encoded
		}},
		{name: "corrupt snappy frame", header: rwHeader, body: func(tb testing.TB, now int64) []byte {
			b := encodeWrite(tb, valid(now))
			b[len(b)/2] ^= 0xff
			return b[:len(b)-1]
		}},
		{name: "decoded size too big", header: rwHeader, body: func(testing.TB, int64) []byte {
			// A snappy block whose header claims 64 MiB.
			return append([]byte{0x80, 0x80, 0x80, 0x20}, make([]byte, 16)...)
		}},
		{name: "body too big", header: rwHeader, body: func(testing.TB, int64) []byte {
			return make([]byte, 32<<20+2)
		}},
		{name: "invalid labels", header: rwHeader, body: enc(func(now int64) *prompb.WriteRequest {
			r := valid(now)
			r.Timeseries = append(r.Timeseries,
				rawTS([]prompb.Label{{Name: "job", Value: "no name"}}, prompb.Sample{Timestamp: now, Value: 1}),
				rawTS([]prompb.Label{{Name: "__name__", Value: ""}, {Name: "x", Value: "y"}}, prompb.Sample{Timestamp: now, Value: 1}),
				rawTS([]prompb.Label{{Name: "__name__", Value: "dup"}, {Name: "l", Value: "1"}, {Name: "l", Value: "2"}}, prompb.Sample{Timestamp: now, Value: 1}),
				rawTS([]prompb.Label{{Name: "__name__", Value: "badutf8"}, {Name: "l", Value: "\xff"}}, prompb.Sample{Timestamp: now, Value: 1}),
			)
			return r
		})},
		{name: "only invalid labels", header: rwHeader, body: enc(func(now int64) *prompb.WriteRequest {
			return &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
				rawTS([]prompb.Label{{Name: "__name__", Value: "dup"}, {Name: "l", Value: "1"}, {Name: "l", Value: "2"}}, prompb.Sample{Timestamp: now, Value: 1}),
			}}
		})},
		{name: "out of order against stored", header: rwHeader, before: valid, body: enc(func(now int64) *prompb.WriteRequest {
			return &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
				promTS(labels.FromStrings("__name__", "c", "k", "3"), floatSample{now, 10}),
				promTS(labels.FromStrings("__name__", "a", "k", "1"), floatSample{now - 60_000, 11}),
				promTS(labels.FromStrings("__name__", "d", "k", "4"), floatSample{now, 12}),
			}}
		})},
		{name: "duplicate timestamp new value", header: rwHeader, before: valid, body: enc(func(now int64) *prompb.WriteRequest {
			return &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
				promTS(labels.FromStrings("__name__", "c", "k", "3"), floatSample{now, 10}),
				promTS(labels.FromStrings("__name__", "b", "k", "2"), floatSample{now - 1000, 99}),
			}}
		})},
		{name: "out of order within request", partial: true, header: rwHeader, body: enc(func(now int64) *prompb.WriteRequest {
			return &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
				promTS(labels.FromStrings("__name__", "c", "k", "3"), floatSample{now, 10}),
				promTS(labels.FromStrings("__name__", "a", "k", "1"), floatSample{now - 1000, 11}, floatSample{now - 2000, 12}),
				promTS(labels.FromStrings("__name__", "d", "k", "4"), floatSample{now, 12}),
			}}
		})},
		{name: "duplicate within request", partial: true, header: rwHeader, body: enc(func(now int64) *prompb.WriteRequest {
			return &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
				promTS(labels.FromStrings("__name__", "c", "k", "3"), floatSample{now, 10}),
				promTS(labels.FromStrings("__name__", "a", "k", "1"), floatSample{now - 1000, 11}, floatSample{now - 1000, 12}),
			}}
		})},
		{name: "same series twice in request", partial: true, header: rwHeader, body: enc(func(now int64) *prompb.WriteRequest {
			return &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
				promTS(labels.FromStrings("__name__", "a", "k", "1"), floatSample{now - 1000, 11}),
				promTS(labels.FromStrings("__name__", "a", "k", "1"), floatSample{now - 2000, 12}),
			}}
		})},
		{name: "too far in the future", header: rwHeader, body: enc(func(now int64) *prompb.WriteRequest {
			return &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
				promTS(labels.FromStrings("__name__", "c", "k", "3"), floatSample{now, 10}),
				promTS(labels.FromStrings("__name__", "f", "k", "5"), floatSample{now + int64(time.Hour/time.Millisecond), 1}),
			}}
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pdb, idb := openProm(t), openIso(t)
			ph, ih := promHandler(t, pdb, Options{}), isoHandler(t, idb, Options{})
			now := time.Now().UnixMilli()
			if tc.before != nil {
				b := encodeWrite(t, tc.before(now))
				for _, h := range []http.Handler{ph, ih} {
					code, msg := post(h, b, rwHeader)
					require.Equal(t, http.StatusNoContent, code, msg)
				}
			}
			pBefore, iBefore := readStored(t, pdb), readStored(t, isoQueryable(idb))
			require.Equal(t, pBefore, iBefore)

			body := tc.body(t, now)
			wantCode, wantMsg := post(ph, body, tc.header)
			code, msg := post(ih, body, tc.header)
			pAfter, iAfter := readStored(t, pdb), readStored(t, isoQueryable(idb))
			if tc.partial {
				// Measure Prometheus's partial application, then check
				// that isotsdb applied nothing.
				require.Equal(t, http.StatusNoContent, wantCode, wantMsg)
				require.NotEqual(t, pBefore, pAfter, "Prometheus applied nothing")
				require.NotEqual(t, wholeAfter(t, body, pBefore), pAfter, "Prometheus applied the whole request")
				require.Equal(t, http.StatusBadRequest, code, msg)
				require.Equal(t, iBefore, iAfter, "isotsdb applied part of a rejected request")
				t.Logf("Prometheus: %d, applied in part; isotsdb: %d %q, applied nothing", wantCode, code, msg)
				return
			}
			require.Equal(t, wantCode, code, "Prometheus: %d %q; isotsdb: %q", wantCode, wantMsg, msg)
			t.Logf("status %d (%q)", code, wantMsg)

			require.Equal(t, pAfter, iAfter, "the DBs differ after the request")
			if tc.empty {
				require.Equal(t, http.StatusNoContent, code)
			}
			if code >= 400 || tc.empty {
				require.Equal(t, iBefore, iAfter, "a rejected or empty request changed the DB")
			} else {
				requireWhole(t, body, iBefore, iAfter)
			}
		})
	}
}

// requireWhole checks that after holds every sample of the request in
// body whose series has valid labels (Prometheus's receiver drops the
// others), on top of before.
func requireWhole(t *testing.T, body []byte, before, after stored) {
	t.Helper()
	require.Equal(t, wholeAfter(t, body, before), after, "an accepted request is not whole in the DB")
}

// wholeAfter is before with every sample of the request in body whose
// series has valid labels appended (in request order: the requests of the
// tests are in time order per series unless they test otherwise).
func wholeAfter(t *testing.T, body []byte, before stored) stored {
	t.Helper()
	req := decodeWrite(t, body)
	want := stored{}
	for k, v := range before {
		want[k] = append([]storedSample(nil), v...)
	}
	for _, ts := range req.Timeseries {
		b := labels.NewScratchBuilder(len(ts.Labels))
		ls := ts.ToLabels(&b, nil)
		if !validSeries(ls) {
			continue
		}
		for _, s := range ts.Samples {
			want[ls.String()] = append(want[ls.String()], storedSample{t: s.Timestamp, v: s.Value})
		}
	}
	return want
}

// validSeries reports whether Prometheus's 1.0 receiver keeps a series
// with labels ls: a metric name, valid UTF-8 names and values, no name
// twice.
func validSeries(ls labels.Labels) bool {
	if !ls.Has(model.MetricNameLabel) || !ls.IsValid(model.UTF8Validation) {
		return false
	}
	_, dup := ls.HasDuplicateLabelNames()
	return !dup
}

// decodeWrite decodes a snappy-encoded 1.0 request with the decoder
// the receiver uses (klauspost/compress's snappy, which accepts some
// bodies that golang/snappy, the encoder of Prometheus's client, calls
// corrupt).
func decodeWrite(tb testing.TB, body []byte) *prompb.WriteRequest {
	tb.Helper()
	b, err := ksnappy.Decode(nil, body)
	require.NoError(tb, err)
	req := &prompb.WriteRequest{}
	require.NoError(tb, req.Unmarshal(b))
	return req
}
