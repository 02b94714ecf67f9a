package tsdb

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/isotsdb/tsdb/internal/metricnames"
)

// The DB's metrics (those of package wlog aside) are all registered here,
// each under its default name passed through the DB's metricnames.Namer
// (Options.MetricsNamespace): the README's "Metrics" section lists them.

// Reasons a sample is rejected, the values of the reason label of
// tsdb_head_samples_rejected_total.
const (
	reasonOutOfOrder  = "out_of_order"
	reasonDuplicate   = "duplicate"
	reasonOutOfBounds = "out_of_bounds"
	reasonInvalid     = "invalid"
	// reasonTooFarInFuture: later than the wall clock plus MaxFutureSkew.
	reasonTooFarInFuture = "too_far_in_future"
	// reasonTooOld: older than the head's newest sample minus
	// Options.OutOfOrderTimeWindow.
	reasonTooOld = "too_old"
)

// headMetrics are the head's metrics. Gauges that mirror state are
// functions evaluated at scrape time, so the hot path only touches counters.
type headMetrics struct {
	samplesAppended prometheus.Counter
	seriesCreated   prometheus.Counter
	openAppenders   prometheus.Gauge
	// chunks is the number of chunks in the head: raised when a series
	// cuts a chunk, lowered when truncation drops chunks.
	chunks   prometheus.Gauge
	rejected *prometheus.CounterVec
	// Rejections found at commit time, when another commit wrote the series
	// first (counted under the same reasons).
	outOfOrder, duplicate, outOfBounds, invalid prometheus.Counter
	tooFarInFuture, tooOld                      prometheus.Counter
	// lateAppended counts the late samples committed (head_late.go).
	lateAppended prometheus.Counter
	// chunksMapped counts the closed chunks written to the head chunk
	// files (head_mmap.go).
	chunksMapped prometheus.Counter
}

func newHeadMetrics(h *head, reg prometheus.Registerer, n metricnames.Namer) *headMetrics {
	f := promauto.With(reg)
	m := &headMetrics{
		samplesAppended: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_head_samples_appended_total",
			Help: "Samples committed to the head.",
		})),
		seriesCreated: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_head_series_created_total",
			Help: "Series created in the head.",
		})),
		openAppenders: f.NewGauge(n.Gauge(prometheus.GaugeOpts{
			Name: "tsdb_head_open_appenders",
			Help: "Appenders holding buffered samples, neither committed nor rolled back (nor released by the garbage collector after a leak).",
		})),
		chunks: f.NewGauge(n.Gauge(prometheus.GaugeOpts{
			Name: "tsdb_head_chunks",
			Help: "Chunks in the head.",
		})),
		lateAppended: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_head_late_samples_appended_total",
			Help: "Late samples (older than their series' newest, accepted by Options.OutOfOrderTimeWindow) committed to the head; also counted in tsdb_head_samples_appended_total.",
		})),
		chunksMapped: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_head_chunks_mapped_total",
			Help: "Closed head chunks written to the head chunk files (chunks_head/) and read from their mappings since.",
		})),
		rejected: f.NewCounterVec(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_head_samples_rejected_total",
			Help: "Samples rejected, by reason.",
		}), []string{"reason"}),
	}
	m.outOfOrder = m.rejected.WithLabelValues(reasonOutOfOrder)
	m.duplicate = m.rejected.WithLabelValues(reasonDuplicate)
	m.outOfBounds = m.rejected.WithLabelValues(reasonOutOfBounds)
	m.invalid = m.rejected.WithLabelValues(reasonInvalid)
	m.tooFarInFuture = m.rejected.WithLabelValues(reasonTooFarInFuture)
	m.tooOld = m.rejected.WithLabelValues(reasonTooOld)

	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_head_series",
		Help: "Series in the head.",
	}), func() float64 { return float64(h.NumSeries()) })
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_isolation_low_watermark",
		Help: "Lowest write ID that an open or future read may not see; every lower ID is visible to all.",
	}), func() float64 { return float64(h.iso.lowWatermark()) })
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_isolation_high_watermark",
		Help: "Highest write ID handed out.",
	}), func() float64 { return float64(h.iso.highWatermark()) })
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_isolation_open_reads",
		Help: "Read snapshots (Queriers) open.",
	}), func() float64 { r, _ := h.iso.stats(); return float64(r) })
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_isolation_commits_in_flight",
		Help: "Commits applying their samples to the head right now.",
	}), func() float64 { _, w := h.iso.stats(); return float64(w) })
	return m
}

// newExemplarMetrics registers the metrics of the head's exemplar storage
// (exemplar_storage.go), Prometheus's prometheus_tsdb_exemplar_... ones:
// the counters it updates, returned, and gauges read from h.exemplars at
// scrape time.
func newExemplarMetrics(h *head, reg prometheus.Registerer, n metricnames.Namer) *exemplarMetrics {
	f := promauto.With(reg)
	m := &exemplarMetrics{
		appended: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_exemplar_exemplars_appended_total",
			Help: "Exemplars stored (committed or replayed).",
		})),
		outOfOrder: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_exemplar_out_of_order_exemplars_total",
			Help: "Exemplars rejected as older than their series' newest, by AppendExemplar or at Commit.",
		})),
	}
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_exemplar_exemplars_in_storage",
		Help: "Exemplars held in the exemplar ring.",
	}), func() float64 { e, _, _ := h.exemplars.stats(); return float64(e) })
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_exemplar_series_with_exemplars_in_storage",
		Help: "Series with exemplars in the exemplar ring.",
	}), func() float64 { _, s, _ := h.exemplars.stats(); return float64(s) })
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_exemplar_last_exemplars_timestamp_seconds",
		Help: "Time of the oldest exemplar in the exemplar ring (0 if none): how far back the ring reaches.",
	}), func() float64 { _, _, t := h.exemplars.stats(); return exemplarTimeSeconds(t) })
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_exemplar_max_exemplars",
		Help: "Exemplars the exemplar ring can hold (MaxExemplars).",
	}), func() float64 { return float64(h.exemplars.size.Load()) })
	return m
}

// attempts counts the attempts at an operation and those that failed.
type attempts struct {
	total, failed prometheus.Counter
}

// newAttempts registers the counters <name>_total and <name>_<failed>_total.
func newAttempts(f promauto.Factory, n metricnames.Namer, name, failed, help string) attempts {
	return attempts{
		total: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: name + "_total",
			Help: help + " attempted.",
		})),
		failed: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: name + "_" + failed + "_total",
			Help: help + " that failed.",
		})),
	}
}

// count counts one attempt, and a failure if it failed.
func (a attempts) count(failed bool) {
	a.total.Inc()
	if failed {
		a.failed.Inc()
	}
}

// dbMetrics are the DB's metrics about blocks, compaction and retention.
type dbMetrics struct {
	compactions           prometheus.Counter
	compactionsFailed     prometheus.Counter
	compactionDuration    prometheus.Observer
	headTruncations       prometheus.Counter
	headTruncationsFailed prometheus.Counter
	// reloads: loading block data from disk, that is Open loading the
	// blocks (failed if any block is skipped as corrupt) and opening each
	// block that compaction or CleanTombstones wrote.
	reloads             attempts
	checkpointCreations attempts
	checkpointDeletions attempts
	corruptBlocks       prometheus.Counter
	retentionDeletions  prometheus.Counter
	retentionBytes      prometheus.Counter
}

func newDBMetrics(db *DB, reg prometheus.Registerer) *dbMetrics {
	n := db.metricNames
	f := promauto.With(reg)
	compactionDuration := n.Duration(prometheus.HistogramOpts{
		Name:    "tsdb_compaction_duration_seconds",
		Help:    "Time taken to write a block.",
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 8),
	})
	if reg != nil {
		reg.MustRegister(compactionDuration)
	}
	m := &dbMetrics{
		compactions: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_compactions_total",
			Help: "Blocks written by compaction (of the head or of blocks).",
		})),
		compactionsFailed: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_compactions_failed_total",
			Help: "Compactions that failed.",
		})),
		compactionDuration: compactionDuration,
		headTruncations: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_head_truncations_total",
			Help: "Head truncations after a range went into a block.",
		})),
		headTruncationsFailed: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_head_truncations_failed_total",
			Help: "Head truncations that failed (checkpointing or truncating the WAL); they are retried by the next compaction.",
		})),
		reloads:             newAttempts(f, n, "tsdb_reloads", "failures", "Loads of block data from disk (at Open, and of each block written)"),
		checkpointCreations: newAttempts(f, n, "tsdb_checkpoint_creations", "failed", "WAL checkpoint creations"),
		checkpointDeletions: newAttempts(f, n, "tsdb_checkpoint_deletions", "failed", "Deletions of old WAL checkpoints"),
		corruptBlocks: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_blocks_corrupt_total",
			Help: "Blocks that could not be opened and were skipped.",
		})),
		retentionDeletions: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_retention_deletions_total",
			Help: "Blocks deleted by retention.",
		})),
		retentionBytes: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_retention_size_deletions_total",
			Help: "Blocks deleted because the data exceeded MaxBytes.",
		})),
	}
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_blocks_loaded",
		Help: "Blocks the DB serves.",
	}), func() float64 { return float64(len(db.Blocks())) })
	f.NewGaugeFunc(n.Gauge(prometheus.GaugeOpts{
		Name: "tsdb_storage_blocks_bytes",
		Help: "Bytes of the blocks on disk.",
	}), func() float64 {
		var n int64
		for _, s := range db.blockSizes() {
			n += s
		}
		return float64(n)
	})
	return m
}

// walMetrics are the DB's metrics about the WAL beyond those of package
// wlog.
type walMetrics struct {
	replayDuration prometheus.Gauge
	recordsSkipped *prometheus.CounterVec
	unknownRefs    prometheus.Counter
	wblUnknownRefs prometheus.Counter
	// snapshotLoads counts the Opens that restored the head from a chunk
	// snapshot; snapshotErrors the snapshots found and not used.
	snapshotLoads  prometheus.Counter
	snapshotErrors prometheus.Counter
}

func newWALMetrics(reg prometheus.Registerer, n metricnames.Namer) *walMetrics {
	f := promauto.With(reg)
	return &walMetrics{
		replayDuration: f.NewGauge(n.Gauge(prometheus.GaugeOpts{
			Name: "tsdb_wal_replay_duration_seconds",
			Help: "Time the last WAL replay took.",
		})),
		recordsSkipped: f.NewCounterVec(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_wal_records_skipped_total",
			Help: "WAL records skipped on replay because this version does not use them, by record type.",
		}), []string{"type"}),
		unknownRefs: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_wal_replay_unknown_refs_total",
			Help: "Samples skipped on replay because no series record defined their series.",
		})),
		wblUnknownRefs: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_wbl_replay_unknown_refs_total",
			Help: "Samples of WBL records written by Prometheus skipped on replay because no series record defined their series.",
		})),
		snapshotLoads: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_chunk_snapshot_loads_total",
			Help: "Opens that restored the head from a chunk snapshot instead of replaying the WAL.",
		})),
		snapshotErrors: f.NewCounter(n.Counter(prometheus.CounterOpts{
			Name: "tsdb_snapshot_replay_error_total",
			Help: "Chunk snapshots found at Open and not used (damaged, stale or not matching the head chunk files): the WAL was replayed instead.",
		})),
	}
}
