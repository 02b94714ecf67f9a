package remote

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a Sender's metrics, named like Prometheus's
// prometheus_remote_storage_* family and labelled with remote_name. They
// are registered on the Registerer given to New (nil: not registered).
type metrics struct {
	samplesSent      prometheus.Counter
	samplesFailed    prometheus.Counter
	samplesRetried   prometheus.Counter
	exemplarsSent    prometheus.Counter
	exemplarsFailed  prometheus.Counter // rejected with their batch, or not sendable (encode_v2.go)
	samplesDropped   prometheus.Counter // dropped by relabeling or unknown series
	samplesPending   prometheus.Gauge
	highestSent      prometheus.Gauge
	shards           prometheus.Gauge
	segmentsDropped  prometheus.Counter // given up by the backlog cap
	segmentsLost     prometheus.Counter // removed before they were read
	samplesSkipped   prometheus.Counter // in segments given up by the cap
	requestsSent     prometheus.Counter
	metadataSent     prometheus.Counter
	metadataFailed   prometheus.Counter
	metadataRetried  prometheus.Counter
	metadataBytes    prometheus.Counter
	walSegment       prometheus.Gauge
	positionSegment  prometheus.Gauge
	positionFailures prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, name string) (*metrics, error) {
	cl := prometheus.Labels{"remote_name": name}
	c := func(sub, n, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "prometheus", Subsystem: sub, Name: n, Help: help, ConstLabels: cl})
	}
	g := func(sub, n, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "prometheus", Subsystem: sub, Name: n, Help: help, ConstLabels: cl})
	}
	m := &metrics{
		samplesSent:      c("remote_storage", "samples_total", "Samples sent and acknowledged by the receiver."),
		samplesFailed:    c("remote_storage", "samples_failed_total", "Samples given up on after a non-retryable error."),
		samplesRetried:   c("remote_storage", "samples_retried_total", "Samples sent again after a retryable error."),
		exemplarsSent:    c("remote_storage", "exemplars_total", "Exemplars sent and acknowledged by the receiver."),
		exemplarsFailed:  c("remote_storage", "exemplars_failed_total", "Exemplars given up on after a non-retryable error, or that the message could not carry."),
		samplesDropped:   c("remote_storage", "samples_dropped_total", "Samples not sent: their series was dropped by relabeling or is unknown."),
		samplesPending:   g("remote_storage", "samples_pending", "Samples read from the WAL and not yet acknowledged."),
		highestSent:      g("remote_storage", "queue_highest_sent_timestamp_seconds", "Highest timestamp acknowledged by the receiver, in seconds."),
		shards:           g("remote_storage", "shards", "Number of shards sending in parallel."),
		segmentsDropped:  c("remote_storage", "wal_segments_dropped_total", "WAL segments given up because the sender fell too far behind."),
		segmentsLost:     c("remote_storage", "wal_segments_lost_total", "WAL segments removed before the sender read them."),
		samplesSkipped:   c("remote_storage", "samples_skipped_total", "Samples in WAL segments given up because the sender fell too far behind."),
		requestsSent:     c("remote_storage", "requests_total", "Write requests sent, retries included."),
		metadataSent:     c("remote_storage", "metadata_total", "Metadata entries sent and acknowledged by the receiver (remote write 1.0)."),
		metadataFailed:   c("remote_storage", "metadata_failed_total", "Metadata entries given up on after a non-retryable error."),
		metadataRetried:  c("remote_storage", "metadata_retried_total", "Metadata entries sent again after a retryable error."),
		metadataBytes:    c("remote_storage", "metadata_bytes_total", "Compressed bytes of the metadata requests acknowledged by the receiver."),
		walSegment:       g("wal_watcher", "current_segment", "WAL segment being read."),
		positionSegment:  g("remote_storage", "acknowledged_segment", "WAL segment of the acknowledged position."),
		positionFailures: c("remote_storage", "position_write_failures_total", "Failed writes of the position file."),
	}
	if reg != nil {
		for _, col := range []prometheus.Collector{m.samplesSent, m.samplesFailed, m.samplesRetried, m.exemplarsSent, m.exemplarsFailed, m.samplesDropped,
			m.samplesPending, m.highestSent, m.shards, m.segmentsDropped, m.segmentsLost, m.samplesSkipped,
			m.requestsSent, m.metadataSent, m.metadataFailed, m.metadataRetried, m.metadataBytes, m.walSegment, m.positionSegment, m.positionFailures} {
			if err := reg.Register(col); err != nil {
				return nil, fmt.Errorf("remote: register metrics: %w", err)
			}
		}
	}
	return m, nil
}
