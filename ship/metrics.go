package ship

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the shipper's counters; they are registered on the
// Registerer of Options, or on none.
type metrics struct {
	uploads       prometheus.Counter
	failures      prometheus.Counter
	lastUpload    prometheus.Gauge
	bytesUploaded prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		uploads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_shipper_uploads_total",
			Help: "Blocks uploaded to object storage.",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_shipper_upload_failures_total",
			Help: "Block uploads that failed (after retries); the block is tried again at the next sync.",
		}),
		lastUpload: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tsdb_shipper_last_successful_upload_timestamp_seconds",
			Help: "Unix time of the last block uploaded in full.",
		}),
		bytesUploaded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_shipper_uploaded_bytes_total",
			Help: "Bytes of block files uploaded, meta.json included.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.uploads, m.failures, m.lastUpload, m.bytesUploaded} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("ship: register metrics: %w", err)
		}
	}
	return m, nil
}
