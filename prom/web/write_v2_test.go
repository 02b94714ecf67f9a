package promweb

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/prometheus/prometheus/storage/remote"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// TestRemoteWriteV2 sends 2.0 requests with Prometheus's remote-write
// client over loopback: the samples, histograms and start times are in
// the DB, the exemplars in its exemplar storage, the inline metadata on
// /api/v1/metadata, and the client gets the written counts Prometheus's
// receiver reports.
func TestRemoteWriteV2(t *testing.T) {
	o := isoOptions()
	o.MaxExemplars = 1000
	db, err := tsdb.Open(t.TempDir(), nil, nil, o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	base := serve(t, isoHandler(t, db, Options{}))
	client := newWriteClientV2(t, base)

	start := time.Now().Add(-time.Hour).UnixMilli()
	counter := labels.FromStrings("__name__", "rw2_requests_total", "path", "/a")
	gauge := labels.FromStrings("__name__", "rw2_temperature_celsius", "room", "1")
	hist := labels.FromStrings("__name__", "rw2_latency_seconds", "path", "/a")
	bare := labels.FromStrings("__name__", "rw2_bare", "k", "v")
	trace := func(id string) labels.Labels { return labels.FromStrings("trace_id", id) }

	want := stored{}
	wantST := map[string][]int64{}
	b := newV2Builder()
	cs := v2Series{ls: counter, typ: model.MetricTypeCounter, help: "Requests served.", exemplars: []v2Exemplar{
		{ls: trace("a1"), t: start, v: 1}, {ls: trace("a2"), t: start + 120_000, v: 3},
	}}
	gs := v2Series{ls: gauge, typ: model.MetricTypeGauge, help: "Room temperature.", unit: "celsius"}
	hs := v2Series{ls: hist, typ: model.MetricTypeHistogram, help: "Latency.", unit: "seconds", exemplars: []v2Exemplar{
		{ls: trace("h1"), t: start + 60_000, v: 0.25},
	}}
	bs := v2Series{ls: bare}
	for i := range 5 {
		ts := start + int64(i)*60_000
		cs.samples = append(cs.samples, v2Sample{st: start - 1000, t: ts, v: float64(i + 1)})
		want[counter.String()] = append(want[counter.String()], storedSample{t: ts, v: float64(i + 1)})
		wantST[counter.String()] = append(wantST[counter.String()], start-1000)
		gs.samples = append(gs.samples, v2Sample{t: ts, v: 20 + float64(i)})
		want[gauge.String()] = append(want[gauge.String()], storedSample{t: ts, v: 20 + float64(i)})
		wantST[gauge.String()] = append(wantST[gauge.String()], 0)
		if i < 3 {
			hs.hists = append(hs.hists, v2Hist{st: start - 2000, t: ts, h: testHistogram(uint64(i + 1))})
			want[hist.String()] = append(want[hist.String()], storedSample{t: ts, v: float64(i + 1), hist: true})
			wantST[hist.String()] = append(wantST[hist.String()], start-2000)
		}
	}
	bs.samples = []v2Sample{{t: start, v: 7}}
	want[bare.String()] = []storedSample{{t: start, v: 7}}
	wantST[bare.String()] = []int64{0}
	b.add(cs).add(gs).add(hs).add(bs)

	stats, err := client.Store(context.Background(), b.encode(t), 0)
	require.NoError(t, err)
	require.Equal(t, remote.WriteResponseStats{Samples: 11, Histograms: 3, Exemplars: 3, Confirmed: true}, stats)

	require.Equal(t, want, readStored(t, isoQueryable(db)))
	require.Equal(t, wantST, readStartTimes(t, db))

	// Exemplars, from the DB's exemplar storage.
	eq, err := promstorage.New(db).ExemplarQuerier(context.Background())
	require.NoError(t, err)
	res, err := eq.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "__name__", "rw2_.+")})
	require.NoError(t, err)
	gotEx := map[string][]string{}
	for _, r := range res {
		for _, e := range r.Exemplars {
			gotEx[r.SeriesLabels.String()] = append(gotEx[r.SeriesLabels.String()],
				e.Labels.String()+"@"+strconv.FormatInt(e.Ts, 10)+"="+strconv.FormatFloat(e.Value, 'g', -1, 64))
		}
	}
	require.Equal(t, map[string][]string{
		counter.String(): {`{trace_id="a1"}@` + strconv.FormatInt(start, 10) + "=1", `{trace_id="a2"}@` + strconv.FormatInt(start+120_000, 10) + "=3"},
		hist.String():    {`{trace_id="h1"}@` + strconv.FormatInt(start+60_000, 10) + "=0.25"},
	}, gotEx)

	// Metadata, from /api/v1/metadata: the series without metadata has
	// none listed.
	c := &http.Client{}
	r := get(t, c, base, "/api/v1/metadata", nil)
	require.Equal(t, http.StatusOK, r.code, r.raw)
	require.Equal(t, map[string]any{"status": "success", "data": map[string]any{
		"rw2_requests_total":      []any{map[string]any{"type": "counter", "help": "Requests served.", "unit": ""}},
		"rw2_temperature_celsius": []any{map[string]any{"type": "gauge", "help": "Room temperature.", "unit": "celsius"}},
		"rw2_latency_seconds":     []any{map[string]any{"type": "histogram", "help": "Latency.", "unit": "seconds"}},
	}}, r.body)
	r = get(t, c, base, "/api/v1/metadata?metric=rw2_temperature_celsius", nil)
	require.Equal(t, map[string]any{"status": "success", "data": map[string]any{
		"rw2_temperature_celsius": []any{map[string]any{"type": "gauge", "help": "Room temperature.", "unit": "celsius"}},
	}}, r.body)
	r = get(t, c, base, "/api/v1/metadata?limit=1", nil)
	require.Equal(t, map[string]any{"status": "success", "data": map[string]any{
		"rw2_latency_seconds": []any{map[string]any{"type": "histogram", "help": "Latency.", "unit": "seconds"}},
	}}, r.body)

	// A later request changes the gauge's help; the metadata follows.
	gs2 := v2Series{ls: gauge, typ: model.MetricTypeGauge, help: "Room temperature, new.", unit: "celsius",
		samples: []v2Sample{{t: start + 10*60_000, v: 30}}}
	_, err = client.Store(context.Background(), newV2Builder().add(gs2).encode(t), 0)
	require.NoError(t, err)
	r = get(t, c, base, "/api/v1/metadata?metric=rw2_temperature_celsius", nil)
	require.Equal(t, map[string]any{"status": "success", "data": map[string]any{
		"rw2_temperature_celsius": []any{map[string]any{"type": "gauge", "help": "Room temperature, new.", "unit": "celsius"}},
	}}, r.body)
}

// TestMetadataEndpointErrors checks that /api/v1/metadata's bad
// parameters get Prometheus's answers.
func TestMetadataEndpointErrors(t *testing.T) {
	pbase, ibase := serve(t, promHandler(t, openProm(t), Options{})), serve(t, isoHandler(t, openIso(t), Options{}))
	c := &http.Client{}
	for _, q := range []string{"?limit=x", "?limit_per_metric=y", "?limit=1&limit_per_metric=z", "", "?limit=0", "?metric=nothing"} {
		want := get(t, c, pbase, "/api/v1/metadata"+q, nil)
		got := get(t, c, ibase, "/api/v1/metadata"+q, nil)
		require.Equal(t, want.code, got.code, q)
		require.Equal(t, want.contentType, got.contentType, q)
		require.Equal(t, want.body, got.body, q)
	}
}

// readStartTimes reads the start time of every sample in db, per series.
func readStartTimes(tb testing.TB, db *tsdb.DB) map[string][]int64 {
	tb.Helper()
	qr, err := promstorage.New(db).Querier(math.MinInt64, math.MaxInt64)
	require.NoError(tb, err)
	defer func() { require.NoError(tb, qr.Close()) }()
	ss := qr.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	out := map[string][]int64{}
	var it chunkenc.Iterator
	for ss.Next() {
		it = ss.At().Iterator(it)
		for it.Next() != chunkenc.ValNone {
			out[ss.At().Labels().String()] = append(out[ss.At().Labels().String()], it.AtST())
		}
		require.NoError(tb, it.Err())
	}
	require.NoError(tb, ss.Err())
	return out
}

// postRecorded sends body to h's /api/v1/write and returns the answer.
func postRecorded(h http.Handler, body []byte, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/write", bytes.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestWriteV2BadInput sends the same 2.0 requests to Prometheus's
// receiver over Prometheus's TSDB and to New's over isotsdb: each gets
// Prometheus's status code and written-counts headers, and the DBs then
// hold the same samples. As in Prometheus, a 2.0 request with bad series
// or samples is answered 400 with the rest of it stored (a partial write,
// which the 2.0 specification allows); here the rest is still stored in
// one transaction.
func TestWriteV2BadInput(t *testing.T) {
	a := labels.FromStrings("__name__", "a", "k", "1")
	bl := labels.FromStrings("__name__", "b", "k", "2")
	c := labels.FromStrings("__name__", "c", "k", "3")
	d := labels.FromStrings("__name__", "d", "k", "4")
	valid := func(now int64) *v2Builder {
		return newV2Builder().
			add(v2Series{ls: a, typ: model.MetricTypeCounter, help: "A.", samples: []v2Sample{{st: now - 5000, t: now - 2000, v: 1}, {st: now - 5000, t: now - 1000, v: 2}}}).
			add(v2Series{ls: bl, samples: []v2Sample{{t: now - 1000, v: 3}}})
	}
	enc := func(f func(now int64) *v2Builder) func(testing.TB, int64) []byte {
		return func(tb testing.TB, now int64) []byte { return f(now).encode(tb) }
	}
	badHist := &histogram.Histogram{Count: 1, Schema: 0, PositiveSpans: []histogram.Span{{Offset: 0, Length: 1}}, PositiveBuckets: []int64{5}}
	cases := []struct {
		name   string
		header map[string]string
		before func(now int64) *v2Builder
		body   func(testing.TB, int64) []byte
		// lateWithin: Prometheus stores the request but drops the late
		// sample silently at commit (204); isotsdb rejects it at append
		// (400) and stores the rest.
		lateWithin bool
	}{
		{name: "valid", header: rw2Header, body: enc(valid)},
		{name: "unknown proto message", header: map[string]string{"Content-Type": "application/x-protobuf;proto=io.prometheus.write.v3.Request", "Content-Encoding": "snappy"}, body: enc(valid)},
		{name: "malformed protobuf", header: rw2Header, body: func(_ testing.TB, _ int64) []byte {
			return snappy.Encode(nil, []byte("\x2a\xff\xff\xff\xff\x0fnot a protobuf"))
		}},
		{name: "truncated protobuf", header: rw2Header, body: func(tb testing.TB, now int64) []byte {
			b := valid(now)
			b.req.Symbols = b.syms.Symbols()
			raw, err := b.req.Marshal()
			require.NoError(tb, err)
			return snappy.Encode(nil, raw[:len(raw)-3])
		}},
		{name: "bad snappy frame", header: rw2Header, body: func(tb testing.TB, now int64) []byte {
			b := valid(now)
			b.req.Symbols = b.syms.Symbols()
			raw, err := b.req.Marshal()
			require.NoError(tb, err)
			return raw
		}},
		{name: "label symbol out of range", header: rw2Header, body: enc(func(now int64) *v2Builder {
			return valid(now).raw(writev2.TimeSeries{LabelsRefs: []uint32{0, 999}, Samples: []writev2.Sample{{Timestamp: now, Value: 1}}})
		})},
		{name: "invalid labels", header: rw2Header, body: enc(func(now int64) *v2Builder {
			return valid(now).
				add(v2Series{ls: labels.FromStrings("job", "no name"), samples: []v2Sample{{t: now, v: 1}}}).
				add(v2Series{ls: labels.FromStrings("__name__", "badutf8", "l", "\xff"), samples: []v2Sample{{t: now, v: 1}}})
		})},
		{name: "series without samples", header: rw2Header, body: enc(func(now int64) *v2Builder {
			return valid(now).add(v2Series{ls: c})
		})},
		{name: "out of order against stored", header: rw2Header, before: valid, body: enc(func(now int64) *v2Builder {
			return newV2Builder().
				add(v2Series{ls: c, samples: []v2Sample{{t: now, v: 10}}}).
				add(v2Series{ls: a, samples: []v2Sample{{t: now - 60_000, v: 11}, {t: now, v: 12}}}).
				add(v2Series{ls: d, samples: []v2Sample{{t: now, v: 13}}})
		})},
		{name: "duplicate timestamp new value", header: rw2Header, before: valid, body: enc(func(now int64) *v2Builder {
			return newV2Builder().
				add(v2Series{ls: c, samples: []v2Sample{{t: now, v: 10}}}).
				add(v2Series{ls: bl, samples: []v2Sample{{t: now - 1000, v: 99}}})
		})},
		{name: "too far in the future", header: rw2Header, body: enc(func(now int64) *v2Builder {
			return newV2Builder().
				add(v2Series{ls: c, samples: []v2Sample{{t: now, v: 10}}}).
				add(v2Series{ls: d, samples: []v2Sample{{t: now + int64(time.Hour/time.Millisecond), v: 1}}})
		})},
		{name: "microsecond timestamp", header: rw2Header, body: enc(func(now int64) *v2Builder {
			return newV2Builder().
				add(v2Series{ls: c, samples: []v2Sample{{t: now, v: 10}}}).
				add(v2Series{ls: d, samples: []v2Sample{{t: now * 1000, v: 1}}})
		})},
		{name: "timestamp at the int64 maximum", header: rw2Header, body: enc(func(now int64) *v2Builder {
			return newV2Builder().
				add(v2Series{ls: c, samples: []v2Sample{{t: now, v: 10}}}).
				add(v2Series{ls: d, samples: []v2Sample{{t: math.MaxInt64, v: 1}}})
		})},
		{name: "invalid histogram", header: rw2Header, body: enc(func(now int64) *v2Builder {
			return newV2Builder().
				add(v2Series{ls: c, samples: []v2Sample{{t: now, v: 10}}}).
				add(v2Series{ls: d, hists: []v2Hist{{t: now, h: badHist}}})
		})},
		{name: "out of order within request", header: rw2Header, lateWithin: true, body: enc(func(now int64) *v2Builder {
			return newV2Builder().
				add(v2Series{ls: c, samples: []v2Sample{{t: now, v: 10}}}).
				add(v2Series{ls: a, samples: []v2Sample{{t: now - 1000, v: 11}, {t: now - 2000, v: 12}}}).
				add(v2Series{ls: d, samples: []v2Sample{{t: now, v: 13}}})
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pdb, idb := openProm(t), openIso(t)
			ph, ih := promHandler(t, pdb, Options{}), isoHandler(t, idb, Options{})
			now := time.Now().UnixMilli()
			if tc.before != nil {
				b := tc.before(now).encode(t)
				for _, h := range []http.Handler{ph, ih} {
					w := postRecorded(h, b, rw2Header)
					require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
				}
			}
			pBefore, iBefore := readStored(t, pdb), readStored(t, isoQueryable(idb))
			require.Equal(t, pBefore, iBefore)

			body := tc.body(t, now)
			pw, iw := postRecorded(ph, body, tc.header), postRecorded(ih, body, tc.header)
			pAfter, iAfter := readStored(t, pdb), readStored(t, isoQueryable(idb))
			t.Logf("Prometheus: %d %q %v; isotsdb: %d %q %v", pw.Code, pw.Body.String(), writtenStats(pw.Header()), iw.Code, iw.Body.String(), writtenStats(iw.Header()))
			require.Equal(t, pAfter, iAfter, "the DBs differ after the request")
			if tc.lateWithin {
				require.Equal(t, http.StatusNoContent, pw.Code)
				require.Equal(t, http.StatusBadRequest, iw.Code)
				require.NotEqual(t, iBefore, iAfter, "isotsdb stored nothing of the request")
				return
			}
			require.Equal(t, pw.Code, iw.Code)
			require.Equal(t, writtenStats(pw.Header()), writtenStats(iw.Header()))
			if iw.Code == http.StatusUnsupportedMediaType || iw.Code == http.StatusBadRequest && writtenStats(iw.Header())[writtenHeaders[0]] == "" {
				require.Equal(t, iBefore, iAfter, "an undecodable request changed the DB")
			}
		})
	}
}
