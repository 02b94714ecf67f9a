package promweb

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// protoContentType is the content type of remote-write 1.0 requests, as
// Prometheus's client sends it.
const protoContentType = "application/x-protobuf;proto=prometheus.WriteRequest"

// encodeWrite marshals req and snappy-encodes it, as Prometheus's queue
// manager builds a remote-write 1.0 body.
func encodeWrite(tb testing.TB, req *prompb.WriteRequest) []byte {
	tb.Helper()
	b, err := req.Marshal()
	require.NoError(tb, err)
	return snappy.Encode(nil, b)
}

// promTS is a prompb series of float samples.
func promTS(ls labels.Labels, samples ...floatSample) prompb.TimeSeries {
	ts := prompb.TimeSeries{}
	ls.Range(func(l labels.Label) { ts.Labels = append(ts.Labels, prompb.Label{Name: l.Name, Value: l.Value}) })
	for _, s := range samples {
		ts.Samples = append(ts.Samples, prompb.Sample{Timestamp: s.t, Value: s.v})
	}
	return ts
}

// post sends body to h's /api/v1/write with the given headers, and
// returns the status code.
func post(h http.Handler, body []byte, header map[string]string) (int, string) {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/write", bytes.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// rwHeader is the header Prometheus's client sends with a 1.0 request.
var rwHeader = map[string]string{
	"Content-Type":                      protoContentType,
	"Content-Encoding":                  "snappy",
	"X-Prometheus-Remote-Write-Version": "0.1.0",
}

// stored is what a DB holds: per series (labels' String), its samples in
// time order. Histogram samples are recorded with v = their count and
// hist set.
type stored map[string][]storedSample

type storedSample struct {
	t    int64
	v    float64
	hist bool
}

// readStored reads every sample of q.
func readStored(tb testing.TB, q storage.Queryable) stored {
	tb.Helper()
	qr, err := q.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(tb, err)
	defer func() { require.NoError(tb, qr.Close()) }()
	ss := qr.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	out := stored{}
	var it chunkenc.Iterator
	for ss.Next() {
		s := ss.At()
		it = s.Iterator(it)
		var smps []storedSample
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			switch vt {
			case chunkenc.ValFloat:
				t, v := it.At()
				smps = append(smps, storedSample{t: t, v: v})
			case chunkenc.ValHistogram:
				t, h := it.AtHistogram(nil)
				smps = append(smps, storedSample{t: t, v: float64(h.Count), hist: true})
			case chunkenc.ValFloatHistogram:
				t, fh := it.AtFloatHistogram(nil)
				smps = append(smps, storedSample{t: t, v: fh.Count, hist: true})
			}
		}
		require.NoError(tb, it.Err())
		out[s.Labels().String()] = smps
	}
	require.NoError(tb, ss.Err())
	return out
}

// isoQueryable reads db through the adapter (not closed: that would close
// db).
func isoQueryable(db *tsdb.DB) storage.Queryable { return promstorage.New(db) }

// testHistogram is a small integer native histogram with count n.
func testHistogram(n uint64) *histogram.Histogram {
	return &histogram.Histogram{
		Count: n, Sum: float64(n) * 1.5, Schema: 0, ZeroThreshold: 0.001, ZeroCount: 0,
		PositiveSpans:   []histogram.Span{{Offset: 0, Length: 1}},
		PositiveBuckets: []int64{int64(n)},
	}
}
