package promweb

import (
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/golang/snappy"
	ksnappy "github.com/klauspost/compress/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/stretchr/testify/require"
)

// FuzzWriteV2 posts random remote-write 2.0 bodies to /api/v1/write. The
// handler must not panic or fail with 5xx; it answers 204 or 400, as
// Prometheus's 2.0 receiver does for bad input, and reports what it stored
// in the written-counts headers. Whatever the answer, the DB changes only
// by appending: every series keeps what it held, and the samples added are
// at most those the headers count (an identical repeat of a sample is
// counted but adds nothing); a request the headers count nothing of
// changes nothing. An accepted request (204) has every sample and
// histogram of it counted and stored (expectWholeV2). One DB and handler serve all the inputs, as in
// FuzzWrite. The seeds are valid requests with metadata, start times,
// exemplars and histograms, bad symbol references, out-of-order samples,
// and bodies that are not snappy or not protobuf.
func FuzzWriteV2(f *testing.F) {
	now := time.Now().UnixMilli()
	a := labels.FromStrings("__name__", "a", "k", "1")
	b := labels.FromStrings("__name__", "b")
	f.Add(newV2Builder().
		add(v2Series{ls: a, typ: model.MetricTypeCounter, help: "A.", unit: "seconds",
			samples:   []v2Sample{{st: now - 5000, t: now - 2000, v: 1}, {st: now - 5000, t: now - 1000, v: 2}},
			exemplars: []v2Exemplar{{ls: labels.FromStrings("trace_id", "x"), t: now - 1000, v: 2}}}).
		add(v2Series{ls: b, samples: []v2Sample{{t: now - 1000, v: staleNaN}}}).
		encode(f))
	f.Add(newV2Builder().
		add(v2Series{ls: a, samples: []v2Sample{{t: now - 1000, v: 1}, {t: now - 2000, v: 2}}}).
		add(v2Series{ls: b, hists: []v2Hist{{st: now - 9000, t: now - 1000, h: testHistogram(3)}, {t: now, h: testHistogram(5)}}}).
		encode(f))
	f.Add(newV2Builder().
		add(v2Series{ls: a, samples: []v2Sample{{t: now, v: 1}}}).
		raw(writev2.TimeSeries{LabelsRefs: []uint32{0, 77}, Samples: []writev2.Sample{{Timestamp: now, Value: 1}}}).
		add(v2Series{ls: labels.FromStrings("x", "no name"), samples: []v2Sample{{t: now, v: 1}}}).
		add(v2Series{ls: b}).
		encode(f))
	f.Add(newV2Builder().add(v2Series{ls: a, samples: []v2Sample{{t: now + int64(time.Hour/time.Millisecond), v: 1}}}).encode(f))
	f.Add([]byte("not snappy"))
	f.Add(snappy.Encode(nil, []byte("\x2a\x05not a protobuf")))
	f.Add([]byte{})

	db := openIso(f)
	handler := isoHandler(f, db, Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		before := readStored(t, isoQueryable(db))
		w := postRecorded(handler, body, rw2Header)
		got := readStored(t, isoQueryable(db))
		require.Contains(t, []int{http.StatusNoContent, http.StatusBadRequest}, w.Code, w.Body.String())
		written := 0
		for _, k := range writtenHeaders[:2] {
			if v := w.Header().Get(k); v != "" {
				n, err := strconv.Atoi(v)
				require.NoError(t, err, k)
				written += n
			}
		}
		added := 0
		for k, ss := range got {
			old := before[k]
			require.GreaterOrEqual(t, len(ss), len(old), "series %s lost samples", k)
			require.True(t, sameStored(stored{k: old}, stored{k: ss[:len(old)]}), "series %s changed: %v to %v", k, old, ss)
			added += len(ss) - len(old)
		}
		for k := range before {
			require.Contains(t, got, k, "series %s disappeared", k)
		}
		require.LessOrEqual(t, added, written, "%d samples added, %d counted written (%d %q)", added, written, w.Code, w.Body.String())
		if w.Code == http.StatusNoContent {
			require.Equal(t, requestSamples(t, body), written, "an accepted request not counted whole")
			want := expectWholeV2(t, before, body)
			require.True(t, sameStored(want, got), "accepted request not whole:\nwant %v\ngot  %v", want, got)
		}
	})
}

// expectWholeV2 is what a DB holding before holds after storing every
// sample and histogram of the 2.0 request in body (which must decode and
// have valid series), as expectWhole for 1.0.
func expectWholeV2(t *testing.T, before stored, body []byte) stored {
	t.Helper()
	raw, err := ksnappy.Decode(nil, body)
	require.NoError(t, err)
	var req writev2.Request
	require.NoError(t, req.Unmarshal(raw))
	want := stored{}
	for k, v := range before {
		want[k] = append([]storedSample(nil), v...)
	}
	add := func(key string, s storedSample) {
		ss := want[key]
		if n := len(ss); n > 0 && ss[n-1].t == s.t && ss[n-1].hist == s.hist && math.Float64bits(ss[n-1].v) == math.Float64bits(s.v) {
			return
		}
		want[key] = append(ss, s)
	}
	sb := labels.NewScratchBuilder(0)
	for _, ts := range req.Timeseries {
		ls, err := ts.ToLabels(&sb, req.Symbols)
		require.NoError(t, err)
		key := ls.WithoutEmpty().String()
		for _, s := range ts.Samples {
			add(key, storedSample{t: s.Timestamp, v: s.Value})
		}
		for _, h := range ts.Histograms {
			if h.IsFloatHistogram() {
				add(key, storedSample{t: h.Timestamp, v: h.ToFloatHistogram().Count, hist: true})
			} else {
				add(key, storedSample{t: h.Timestamp, v: float64(h.ToIntHistogram().Count), hist: true})
			}
		}
	}
	return want
}

// requestSamples is the number of samples and histograms of the 2.0
// request in body, which must decode.
func requestSamples(t *testing.T, body []byte) int {
	t.Helper()
	raw, err := ksnappy.Decode(nil, body)
	require.NoError(t, err)
	var req writev2.Request
	require.NoError(t, req.Unmarshal(raw))
	n := 0
	for _, ts := range req.Timeseries {
		n += len(ts.Samples) + len(ts.Histograms)
	}
	return n
}
