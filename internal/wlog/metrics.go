package wlog

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/internal/metricnames"
)

// metrics are a WL's metrics. They are created even without a Registerer
// (then simply never collected), so the code updating them needs no nil
// checks.
type metrics struct {
	fsyncDuration       metricnames.Duration
	pageFlushes         prometheus.Counter
	completedPages      prometheus.Counter
	writesFailed        prometheus.Counter
	truncations         prometheus.Counter
	truncationsFailed   prometheus.Counter
	corruptionsRepaired prometheus.Counter
	currentSegment      prometheus.Gauge
	bytesWritten        prometheus.Counter

	reg        prometheus.Registerer // nil: nothing registered
	registered []prometheus.Collector
}

func newMetrics(reg prometheus.Registerer, n metricnames.Namer, prefix, what string) (*metrics, error) {
	m := &metrics{
		fsyncDuration: n.Duration(prometheus.HistogramOpts{
			Name: prefix + "fsync_duration_seconds",
			Help: "Duration of fsync calls on " + what + " segments.",
			// 100µs (a fast SSD) to about 6.5s (a saturated disk).
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 9),
		}),
		pageFlushes: prometheus.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: prefix + "page_flushes_total",
			Help: "Writes of (parts of) pages to " + what + " segments.",
		})),
		completedPages: prometheus.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: prefix + "completed_pages_total",
			Help: upper(what) + " pages written in full.",
		})),
		writesFailed: prometheus.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: prefix + "writes_failed_total",
			Help: upper(what) + " writes, syncs or segment creations that failed.",
		})),
		truncations: prometheus.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: prefix + "truncations_total",
			Help: upper(what) + " truncations attempted.",
		})),
		truncationsFailed: prometheus.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: prefix + "truncations_failed_total",
			Help: upper(what) + " truncations that failed.",
		})),
		corruptionsRepaired: prometheus.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: prefix + "corruptions_repaired_total",
			Help: upper(what) + " corruptions repaired by truncating the log.",
		})),
		currentSegment: prometheus.NewGauge(n.Gauge(prometheus.GaugeOpts{
			Name: prefix + "segment_current",
			Help: "Index of the " + what + " segment being written.",
		})),
		bytesWritten: prometheus.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: prefix + "bytes_written_total",
			Help: "Bytes written to " + what + " segments, headers and padding included.",
		})),
	}
	if reg == nil {
		return m, nil
	}
	m.reg = reg
	for _, c := range []prometheus.Collector{
		m.fsyncDuration, m.pageFlushes, m.completedPages, m.writesFailed, m.truncations,
		m.truncationsFailed, m.corruptionsRepaired, m.currentSegment, m.bytesWritten,
	} {
		if err := reg.Register(c); err != nil {
			m.unregister()
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("wlog: register metrics (is another WL using this registerer?): %w", err)
			}
			return nil, fmt.Errorf("wlog: register metrics: %w", err)
		}
		m.registered = append(m.registered, c)
	}
	return m, nil
}

// unregister removes the metrics from the Registerer so that a WL reopened
// on the same Registerer can register them again.
func (m *metrics) unregister() {
	for _, c := range m.registered {
		m.reg.Unregister(c)
	}
	m.registered = nil
}

// upper returns s with its first letter in upper case (s is ASCII).
func upper(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
