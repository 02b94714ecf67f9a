package promweb

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/golang/snappy"
	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	config_util "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/prometheus/prometheus/storage/remote"
	"github.com/stretchr/testify/require"
)

// v2ContentType is the content type of remote-write 2.0 requests, as
// Prometheus's client sends it.
const v2ContentType = "application/x-protobuf;proto=io.prometheus.write.v2.Request"

// rw2Header is the header Prometheus's client sends with a 2.0 request.
var rw2Header = map[string]string{
	"Content-Type":                      v2ContentType,
	"Content-Encoding":                  "snappy",
	"X-Prometheus-Remote-Write-Version": "2.0.0",
}

// writtenHeaders are the response headers in which a 2.0 receiver
// reports what it stored.
var writtenHeaders = []string{
	"X-Prometheus-Remote-Write-Samples-Written",
	"X-Prometheus-Remote-Write-Histograms-Written",
	"X-Prometheus-Remote-Write-Exemplars-Written",
}

// newWriteClientV2 is Prometheus's remote-write client for base's
// /api/v1/write, sending 2.0 messages.
func newWriteClientV2(tb testing.TB, base string) remote.WriteClient {
	tb.Helper()
	u, err := url.Parse(base + "/api/v1/write")
	require.NoError(tb, err)
	c, err := remote.NewWriteClient("isotsdb-test-v2", &remote.ClientConfig{
		URL:           &config_util.URL{URL: u},
		Timeout:       model.Duration(10 * time.Second),
		WriteProtoMsg: remoteapi.WriteV2MessageType,
	})
	require.NoError(tb, err)
	return c
}

// v2Builder builds a 2.0 request: one symbol table for every string.
type v2Builder struct {
	syms writev2.SymbolsTable
	req  writev2.Request
}

func newV2Builder() *v2Builder { return &v2Builder{syms: writev2.NewSymbolTable()} }

// v2Series describes one series of a 2.0 request.
type v2Series struct {
	ls         labels.Labels
	typ        model.MetricType // "" for none
	help, unit string
	samples    []v2Sample
	hists      []v2Hist
	exemplars  []v2Exemplar
}

type v2Sample struct {
	st, t int64
	v     float64
}

type v2Hist struct {
	st, t int64
	h     *histogram.Histogram
}

type v2Exemplar struct {
	ls labels.Labels
	t  int64
	v  float64
}

// add appends s to the request.
func (b *v2Builder) add(s v2Series) *v2Builder {
	ts := writev2.TimeSeries{
		LabelsRefs: b.syms.SymbolizeLabels(s.ls, nil),
		Metadata: writev2.Metadata{
			Type:    writev2.FromMetadataType(s.typ),
			HelpRef: b.syms.Symbolize(s.help),
			UnitRef: b.syms.Symbolize(s.unit),
		},
	}
	if s.typ == "" {
		ts.Metadata.Type = writev2.Metadata_METRIC_TYPE_UNSPECIFIED
	}
	for _, x := range s.samples {
		ts.Samples = append(ts.Samples, writev2.Sample{StartTimestamp: x.st, Timestamp: x.t, Value: x.v})
	}
	for _, x := range s.hists {
		ts.Histograms = append(ts.Histograms, writev2.FromIntHistogram(x.st, x.t, x.h))
	}
	for _, e := range s.exemplars {
		ts.Exemplars = append(ts.Exemplars, writev2.Exemplar{LabelsRefs: b.syms.SymbolizeLabels(e.ls, nil), Timestamp: e.t, Value: e.v})
	}
	b.req.Timeseries = append(b.req.Timeseries, ts)
	return b
}

// raw appends ts as given (its references into the symbols as they are).
func (b *v2Builder) raw(ts writev2.TimeSeries) *v2Builder {
	b.req.Timeseries = append(b.req.Timeseries, ts)
	return b
}

// encode marshals the request and snappy-encodes it, as Prometheus's
// queue manager builds a 2.0 body.
func (b *v2Builder) encode(tb testing.TB) []byte {
	tb.Helper()
	b.req.Symbols = b.syms.Symbols()
	raw, err := b.req.Marshal()
	require.NoError(tb, err)
	return snappy.Encode(nil, raw)
}

// writtenStats reads the 2.0 written-counts headers of an answer.
func writtenStats(h http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range writtenHeaders {
		out[k] = h.Get(k)
	}
	return out
}
