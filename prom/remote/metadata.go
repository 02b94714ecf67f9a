package remote

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// Remote write 1.0 metadata. Prometheus's queue manager sends, every
// send interval, the metadata its scrape targets hold, in requests holding
// only metadata. A Sender has no scrape targets: it sends the newest
// metadata the WAL's Metadata records gave each metric family (the
// __name__ of a series as sent, after relabeling) among the series it
// sends. A family stays known once seen, even after its series are gone
// from the WAL.

// families is the newest metadata of each metric family. The reader
// goroutine sets it; the metadata goroutine reads it. Safe for concurrent
// use.
type families struct {
	mu sync.Mutex // protects m
	m  map[string]seriesMeta
}

// set records md as the newest metadata of the family of se, if se has a
// metric name.
func (f *families) set(se *series, md seriesMeta) {
	name := ""
	for _, l := range se.labels {
		if l.Name == "__name__" {
			name = l.Value
			break
		}
	}
	if name == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]seriesMeta{}
	}
	f.m[name] = md
}

// appendAll appends the metadata of every family to dst as 1.0 metadata,
// sorted by family name, and returns it.
func (f *families) appendAll(dst []prompb.MetricMetadata) []prompb.MetricMetadata {
	f.mu.Lock()
	start := len(dst)
	for name, md := range f.m {
		pm := promstorage.ToPromMetadata(tsdb.Metadata{Type: tsdb.MetricType(md.typ), Unit: md.unit, Help: md.help})
		dst = append(dst, prompb.MetricMetadata{
			Type:             prompb.FromMetadataType(pm.Type),
			MetricFamilyName: name,
			Help:             pm.Help,
			Unit:             pm.Unit,
		})
	}
	f.mu.Unlock()
	slices.SortFunc(dst[start:], func(a, b prompb.MetricMetadata) int {
		return strings.Compare(a.MetricFamilyName, b.MetricFamilyName)
	})
	return dst
}

// sendMetadata is the metadata goroutine (remote write 1.0 with
// Config.Metadata.Send): every SendInterval, it sends the families'
// metadata in requests of at most MaxSamplesPerSend entries, each retried
// as sample batches are, until ctx ends.
func (s *Sender) sendMetadata(ctx context.Context) {
	cfg := s.cfg.Metadata
	t := time.NewTicker(cfg.SendInterval)
	defer t.Stop()
	var (
		all      []prompb.MetricMetadata
		pb, body []byte
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		all = s.families.appendAll(all[:0])
		for batch := range slices.Chunk(all, cfg.MaxSamplesPerSend) {
			req := prompb.WriteRequest{Metadata: batch}
			size := req.Size()
			if cap(pb) < size {
				pb = make([]byte, size)
			}
			n, err := req.MarshalToSizedBuffer(pb[:size])
			if err == nil {
				body = snappy.Encode(body[:cap(body)], pb[size-n:size])
				err = s.sendWithRetry(ctx, body, func() { s.metrics.metadataRetried.Add(float64(len(batch))) })
			}
			switch {
			case err == nil:
				s.metrics.metadataSent.Add(float64(len(batch)))
				s.metrics.metadataBytes.Add(float64(len(body)))
			case ctx.Err() != nil && errors.Is(err, ctx.Err()):
				return
			default:
				s.metrics.metadataFailed.Add(float64(len(batch)))
				s.logger.Error("remote write: metadata dropped", "count", len(batch), "err", err)
			}
		}
		clear(all) // drop string references
	}
}
