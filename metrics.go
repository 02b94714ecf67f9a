package tsdb

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Reasons a sample is rejected, the values of the reason label of
// tsdb_head_samples_rejected_total.
const (
	reasonOutOfOrder  = "out_of_order"
	reasonDuplicate   = "duplicate"
	reasonOutOfBounds = "out_of_bounds"
	reasonInvalid     = "invalid"
)

// headMetrics are the head's metrics. Gauges that mirror state are
// functions evaluated at scrape time, so the hot path only touches counters.
type headMetrics struct {
	samplesAppended prometheus.Counter
	seriesCreated   prometheus.Counter
	openAppenders   prometheus.Gauge
	rejected        *prometheus.CounterVec
	// Rejections found at commit time, when another commit wrote the series
	// first (counted under the same reasons).
	outOfOrder, duplicate, outOfBounds, invalid prometheus.Counter
}

func newHeadMetrics(h *Head, reg prometheus.Registerer) *headMetrics {
	f := promauto.With(reg)
	m := &headMetrics{
		samplesAppended: f.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_head_samples_appended_total",
			Help: "Samples committed to the head.",
		}),
		seriesCreated: f.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_head_series_created_total",
			Help: "Series created in the head.",
		}),
		openAppenders: f.NewGauge(prometheus.GaugeOpts{
			Name: "tsdb_head_open_appenders",
			Help: "Appenders created and not yet committed or rolled back.",
		}),
		rejected: f.NewCounterVec(prometheus.CounterOpts{
			Name: "tsdb_head_samples_rejected_total",
			Help: "Samples rejected, by reason.",
		}, []string{"reason"}),
	}
	m.outOfOrder = m.rejected.WithLabelValues(reasonOutOfOrder)
	m.duplicate = m.rejected.WithLabelValues(reasonDuplicate)
	m.outOfBounds = m.rejected.WithLabelValues(reasonOutOfBounds)
	m.invalid = m.rejected.WithLabelValues(reasonInvalid)

	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tsdb_head_series",
		Help: "Series in the head.",
	}, func() float64 { return float64(h.NumSeries()) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tsdb_isolation_low_watermark",
		Help: "Lowest write ID that an open or future read may not see; every lower ID is visible to all.",
	}, func() float64 { return float64(h.iso.lowWatermark()) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tsdb_isolation_high_watermark",
		Help: "Highest write ID handed out.",
	}, func() float64 { return float64(h.iso.highWatermark()) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tsdb_isolation_open_reads",
		Help: "Read snapshots (Queriers) open.",
	}, func() float64 { r, _ := h.iso.stats(); return float64(r) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tsdb_isolation_commits_in_flight",
		Help: "Commits applying their samples to the head right now.",
	}, func() float64 { _, w := h.iso.stats(); return float64(w) })
	return m
}
