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
	// reasonTooFarInFuture: later than the wall clock plus MaxFutureSkew.
	reasonTooFarInFuture = "too_far_in_future"
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
	tooFarInFuture                              prometheus.Counter
}

func newHeadMetrics(h *head, reg prometheus.Registerer) *headMetrics {
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
			Help: "Appenders holding buffered samples, neither committed nor rolled back (nor released by the garbage collector after a leak).",
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
	m.tooFarInFuture = m.rejected.WithLabelValues(reasonTooFarInFuture)

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

// dbMetrics are the DB's metrics about blocks, compaction and retention.
type dbMetrics struct {
	compactions        prometheus.Counter
	compactionsFailed  prometheus.Counter
	compactionDuration prometheus.Histogram
	headTruncations    prometheus.Counter
	corruptBlocks      prometheus.Counter
	retentionDeletions prometheus.Counter
	retentionBytes     prometheus.Counter
}

func newDBMetrics(db *DB, reg prometheus.Registerer) *dbMetrics {
	f := promauto.With(reg)
	m := &dbMetrics{
		compactions: f.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_compactions_total",
			Help: "Blocks written by compaction (of the head or of blocks).",
		}),
		compactionsFailed: f.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_compactions_failed_total",
			Help: "Compactions that failed.",
		}),
		compactionDuration: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "tsdb_compaction_duration_seconds",
			Help:    "Time taken to write a block.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 8),
		}),
		headTruncations: f.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_head_truncations_total",
			Help: "Head truncations after a range went into a block.",
		}),
		corruptBlocks: f.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_blocks_corrupt_total",
			Help: "Blocks that could not be opened and were skipped.",
		}),
		retentionDeletions: f.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_retention_deletions_total",
			Help: "Blocks deleted by retention.",
		}),
		retentionBytes: f.NewCounter(prometheus.CounterOpts{
			Name: "tsdb_retention_size_deletions_total",
			Help: "Blocks deleted because the data exceeded MaxBytes.",
		}),
	}
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tsdb_blocks_loaded",
		Help: "Blocks the DB serves.",
	}, func() float64 { return float64(len(db.Blocks())) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tsdb_storage_blocks_bytes",
		Help: "Bytes of the blocks on disk.",
	}, func() float64 {
		var n int64
		for _, s := range db.blockSizes() {
			n += s
		}
		return float64(n)
	})
	return m
}
