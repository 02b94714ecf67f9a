package promweb

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"
)

// FuzzWrite posts random bodies to /api/v1/write. The handler must not
// panic, and a request is applied whole or not at all: after a rejected
// request (4xx, 5xx) the DB is as before; after an accepted one it holds
// what it held plus every sample of every series the receiver keeps
// (valid labels), nothing else. One DB and handler serve all the inputs
// of a fuzzing process (building the API takes long; the DB's contents
// are read before and after each request). The seeds are valid requests, requests with
// invalid labels, out-of-order and duplicate samples, histograms,
// stale markers, and bodies that are not snappy or not protobuf.
func FuzzWrite(f *testing.F) {
	now := time.Now().UnixMilli()
	seed := func(req *prompb.WriteRequest) {
		b, err := req.Marshal()
		require.NoError(f, err)
		f.Add(snappy.Encode(nil, b))
	}
	a := labels.FromStrings("__name__", "a", "k", "1")
	b := labels.FromStrings("__name__", "b")
	seed(&prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		promTS(a, floatSample{now - 2000, 1}, floatSample{now - 1000, 2}),
		promTS(b, floatSample{now - 1000, staleNaN}),
	}})
	seed(&prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		promTS(a, floatSample{now - 1000, 1}, floatSample{now - 2000, 2}),
		promTS(b, floatSample{now, 3}),
	}})
	seed(&prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		promTS(a, floatSample{now, 1}),
		{Labels: []prompb.Label{{Name: "__name__", Value: "d"}, {Name: "l", Value: "1"}, {Name: "l", Value: "2"}}, Samples: []prompb.Sample{{Timestamp: now, Value: 1}}},
		{Labels: []prompb.Label{{Name: "x", Value: "no name"}}, Samples: []prompb.Sample{{Timestamp: now, Value: 1}}},
	}})
	h := promTS(labels.FromStrings("__name__", "h"))
	h.Histograms = []prompb.Histogram{prompb.FromIntHistogram(now-1000, testHistogram(3)), prompb.FromIntHistogram(now, testHistogram(5))}
	seed(&prompb.WriteRequest{Timeseries: []prompb.TimeSeries{h, promTS(a, floatSample{now, 1}, floatSample{now, 1})}})
	seed(&prompb.WriteRequest{Timeseries: []prompb.TimeSeries{promTS(a, floatSample{now + int64(time.Hour/time.Millisecond), 1})}})
	f.Add([]byte("not snappy"))
	f.Add(snappy.Encode(nil, []byte("\x0a\x05not a protobuf")))
	f.Add([]byte{})

	db := openIso(f)
	handler := isoHandler(f, db, Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		before := readStored(t, isoQueryable(db))
		code, msg := post(handler, body, rwHeader)
		got := readStored(t, isoQueryable(db))
		if code >= 400 {
			require.True(t, sameStored(before, got), "rejected request (%d %q) changed the DB", code, msg)
			return
		}
		require.Equal(t, http.StatusNoContent, code, msg)
		want := expectWhole(t, before, body)
		require.True(t, sameStored(want, got), "accepted request not whole:\nwant %v\ngot  %v", want, got)
	})
}

// expectWhole is what a DB holding before holds after accepting the
// request in body whole: before plus the samples and histograms of the
// series with valid labels (empty labels dropped, as storage drops them),
// in the order the receiver appends them, a sample identical to the one
// before it in its series appended once (a no-op).
func expectWhole(t *testing.T, before stored, body []byte) stored {
	t.Helper()
	req := decodeWrite(t, body)
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
	for _, ts := range req.Timeseries {
		sb := labels.NewScratchBuilder(len(ts.Labels))
		ls := ts.ToLabels(&sb, nil)
		if !validSeries(ls) {
			continue
		}
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

// sameStored compares two DB contents, NaNs equal when both are or both
// are not stale markers.
func sameStored(a, b stored) bool {
	if len(a) != len(b) {
		return false
	}
	for k, as := range a {
		bs, ok := b[k]
		if !ok || len(as) != len(bs) {
			return false
		}
		for i := range as {
			x, y := as[i], bs[i]
			if x.t != y.t || x.hist != y.hist {
				return false
			}
			if math.IsNaN(x.v) || math.IsNaN(y.v) {
				if !math.IsNaN(x.v) || !math.IsNaN(y.v) || value.IsStaleNaN(x.v) != value.IsStaleNaN(y.v) {
					return false
				}
				continue
			}
			if x.v != y.v {
				return false
			}
		}
	}
	return true
}
