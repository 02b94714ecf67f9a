package remote

import (
	"fmt"

	"github.com/golang/snappy"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

// v2Seen is what the accepted 2.0 requests of a receiver carried: per
// sample key (as receiver.seen), its start time and the metadata of its
// TimeSeries; per exemplar (series, labels, time, value), the deliveries.
type v2Seen struct {
	st        map[string]int64
	meta      map[string]metadata.Metadata
	exemplars map[string]int
}

// recordV2 records an accepted 2.0 request (deliveries as record does,
// and v2Seen).
func (rv *receiver) recordV2(body []byte) {
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		return
	}
	var req writev2.Request
	if err := req.Unmarshal(raw); err != nil {
		return
	}
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.seen == nil {
		rv.seen = map[string]int{}
		rv.v2 = v2Seen{st: map[string]int64{}, meta: map[string]metadata.Metadata{}, exemplars: map[string]int{}}
	}
	b := plabels.NewScratchBuilder(0)
	for _, ts := range req.Timeseries {
		ls, err := ts.ToLabels(&b, req.Symbols)
		if err != nil {
			continue
		}
		m, err := ts.ToMetadata(req.Symbols)
		if err != nil {
			continue
		}
		for _, smp := range ts.Samples {
			k := fmt.Sprintf("%s@%d=%g", ls, smp.Timestamp, smp.Value)
			rv.seen[k]++
			rv.v2.st[k] = smp.StartTimestamp
			rv.v2.meta[k] = m
			rv.samples++
		}
		for _, h := range ts.Histograms {
			k := fmt.Sprintf("%s@%d=histogram", ls, h.Timestamp)
			rv.seen[k]++
			rv.v2.st[k] = h.StartTimestamp
			rv.v2.meta[k] = m
			rv.samples++
		}
		for _, e := range ts.Exemplars {
			ex, err := e.ToExemplar(&b, req.Symbols)
			if err != nil {
				continue
			}
			rv.v2.exemplars[fmt.Sprintf("%s %s@%d=%g", ls, ex.Labels, ex.Ts, ex.Value)]++
		}
	}
}

// statusCodes returns how many answers of each status Prometheus's
// handler gave.
func (rv *receiver) statusCodes() map[int]int {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	out := map[int]int{}
	for k, v := range rv.codes {
		out[k] = v
	}
	return out
}
