package tsdb

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/metricnames"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// metricsWorkload commits one sample of one series at each of 0, 1h, 2h,
// 3h and 3.5h (five commits, fsynced each) and compacts: the head's first
// 2h range becomes a block, the head is truncated and the WAL
// checkpointed. The head then holds the series with one chunk.
func metricsWorkload(t *testing.T, db *DB) {
	t.Helper()
	lset := labels.FromStrings("__name__", "up", "job", "a")
	for _, ts := range []time.Duration{0, time.Hour, 2 * time.Hour, 3 * time.Hour, 210 * time.Minute} {
		app := db.Appender(context.Background())
		_, err := app.Append(0, lset, ts.Milliseconds(), 1)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(context.Background()))
}

// metricValue is what a metric family says about its only metric: the
// value of a counter or gauge, the sample count of a histogram or
// summary, and the metric's labels.
func metricValue(mf *dto.MetricFamily) (float64, map[string]string) {
	m := mf.GetMetric()[0]
	lbls := map[string]string{}
	for _, lp := range m.GetLabel() {
		lbls[lp.GetName()] = lp.GetValue()
	}
	switch mf.GetType() {
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount()), lbls
	case dto.MetricType_SUMMARY:
		return float64(m.GetSummary().GetSampleCount()), lbls
	}
	return m.GetCounter().GetValue() + m.GetGauge().GetValue(), lbls
}

// TestMetricsNamespace runs the same workload under each namespace on a
// fresh registry and checks the metrics it must move, under the names,
// types and labels the namespace gives them.
func TestMetricsNamespace(t *testing.T) {
	type want struct {
		tsdb, prom string // the name under each namespace
		// promType and promLabels under "prometheus", if they differ.
		promType   dto.MetricType
		promLabels map[string]string
		min, max   float64 // the value (the count, for a histogram)
	}
	counter, gauge := dto.MetricType_COUNTER, dto.MetricType_GAUGE
	wants := []want{
		{"tsdb_head_series", "prometheus_tsdb_head_series", gauge, nil, 1, 1},
		{"tsdb_head_chunks", "prometheus_tsdb_head_chunks", gauge, nil, 1, 1},
		{"tsdb_head_series_created_total", "prometheus_tsdb_head_series_created_total", counter, nil, 1, 1},
		{"tsdb_head_samples_appended_total", "prometheus_tsdb_head_samples_appended_total", counter, map[string]string{"type": "float"}, 5, 5},
		{"tsdb_isolation_high_watermark", "prometheus_tsdb_isolation_high_watermark", gauge, nil, 5, 5},
		{"tsdb_isolation_low_watermark", "prometheus_tsdb_isolation_low_watermark", gauge, nil, 6, 6},
		{"tsdb_isolation_open_reads", "prometheus_tsdb_isolation_open_reads", gauge, nil, 0, 0},
		{"tsdb_compactions_total", "prometheus_tsdb_compactions_total", counter, nil, 1, 1},
		{"tsdb_compactions_failed_total", "prometheus_tsdb_compactions_failed_total", counter, nil, 0, 0},
		{"tsdb_compaction_duration_seconds", "prometheus_tsdb_compaction_duration_seconds", dto.MetricType_HISTOGRAM, nil, 1, 1},
		{"tsdb_reloads_total", "prometheus_tsdb_reloads_total", counter, nil, 2, 2}, // Open and the new block
		{"tsdb_reloads_failures_total", "prometheus_tsdb_reloads_failures_total", counter, nil, 0, 0},
		{"tsdb_blocks_loaded", "prometheus_tsdb_blocks_loaded", gauge, nil, 1, 1},
		{"tsdb_storage_blocks_bytes", "prometheus_tsdb_storage_blocks_bytes", gauge, nil, 1, 1 << 20},
		{"tsdb_head_truncations_total", "prometheus_tsdb_head_truncations_total", counter, nil, 1, 1},
		{"tsdb_head_truncations_failed_total", "prometheus_tsdb_head_truncations_failed_total", counter, nil, 0, 0},
		{"tsdb_checkpoint_creations_total", "prometheus_tsdb_checkpoint_creations_total", counter, nil, 1, 1},
		{"tsdb_checkpoint_deletions_total", "prometheus_tsdb_checkpoint_deletions_total", counter, nil, 1, 1},
		{"tsdb_wal_fsync_duration_seconds", "prometheus_tsdb_wal_fsync_duration_seconds", dto.MetricType_SUMMARY, nil, 5, 100},
		{"tsdb_wal_segment_current", "prometheus_tsdb_wal_segment_current", gauge, nil, 1, 10},
		{"tsdb_wal_truncations_total", "prometheus_tsdb_wal_truncations_total", counter, nil, 1, 1},
		{"tsdb_wal_corruptions_repaired_total", "prometheus_tsdb_wal_corruptions_total", counter, nil, 0, 0},
		{"tsdb_wal_replay_unknown_refs_total", "prometheus_tsdb_wal_replay_unknown_refs_total", counter, map[string]string{"type": "samples"}, 0, 0},
		{"tsdb_wal_replay_duration_seconds", "prometheus_tsdb_data_replay_duration_seconds", gauge, nil, 0, 10},
		{"tsdb_head_open_appenders", "prometheus_tsdb_head_open_appenders", gauge, nil, 0, 0},
	}
	for _, ns := range []string{"", "tsdb", "prometheus"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			o := DefaultOptions()
			o.MetricsNamespace = ns
			o.WALSyncEveryCommit = true
			db, reg := openTestDB(t, o)
			noWakeups(db)
			metricsWorkload(t, db)
			mfs, err := reg.Gather()
			require.NoError(t, err)
			byName := map[string]*dto.MetricFamily{}
			for _, mf := range mfs {
				byName[mf.GetName()] = mf
				require.Equal(t, ns == "prometheus", strings.HasPrefix(mf.GetName(), "prometheus_tsdb_"), mf.GetName())
			}
			for _, w := range wants {
				name, typ, lbls := w.tsdb, w.promType, map[string]string{}
				if ns == "prometheus" {
					name = w.prom
					if w.promLabels != nil {
						lbls = w.promLabels
					}
				} else if typ == dto.MetricType_SUMMARY {
					typ = dto.MetricType_HISTOGRAM
				}
				mf := byName[name]
				require.NotNil(t, mf, "metric %s not registered", name)
				require.Equal(t, typ, mf.GetType(), name)
				v, got := metricValue(mf)
				require.Equal(t, lbls, got, "labels of %s", name)
				require.GreaterOrEqual(t, v, w.min, name)
				require.LessOrEqual(t, v, w.max, name)
			}
		})
	}
}

// TestMetricsNamespaceInvalid: a namespace other than "", "tsdb" and
// "prometheus" fails Open with ErrInvalidOption before anything is
// registered or created.
func TestMetricsNamespaceInvalid(t *testing.T) {
	for _, ns := range []string{"Prometheus", "prometheus_tsdb", "foo", " tsdb"} {
		t.Run(ns, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			reg := prometheus.NewRegistry()
			o := DefaultOptions()
			o.FS, o.MetricsNamespace = fsys, ns
			db, err := Open("data", nil, reg, o)
			require.Nil(t, db)
			require.ErrorIs(t, err, ErrInvalidOption)
			require.ErrorIs(t, err, metricnames.ErrUnknownNamespace)
			require.Contains(t, err.Error(), "MetricsNamespace")
			require.Contains(t, err.Error(), ns)
			mfs, err := reg.Gather()
			require.NoError(t, err)
			require.Empty(t, mfs)
			_, err = fsys.Stat("data")
			require.Error(t, err, "nothing created")
		})
	}
}

// TestMetricsFailuresCounted makes a checkpoint creation, a checkpoint
// deletion and a block load fail and checks the counters Prometheus's
// mixin alerts on move (and the totals with them).
func TestMetricsFailuresCounted(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	reg := prometheus.NewRegistry()
	db, err := Open("data", nil, reg, o)
	require.NoError(t, err)
	noWakeups(db) // only the Compact calls below compact
	value := func(name string) float64 { t.Helper(); return gauge(t, reg, name) }

	// A checkpoint that cannot be created fails the head truncation and
	// the compaction; the next compaction finishes the truncation.
	fail := func(op vfs.Op) func(vfs.Op, string) error {
		return func(o vfs.Op, path string) error {
			if o == op && strings.HasPrefix(filepath.Base(path), "checkpoint.") {
				return syscall.EIO
			}
			return nil
		}
	}
	fsys.SetHook(fail(vfs.OpMkdir))
	err = func() error {
		defer fsys.SetHook(nil)
		lset := labels.FromStrings("__name__", "up")
		for _, ts := range []time.Duration{0, 3*time.Hour + time.Minute} {
			app := db.Appender(context.Background())
			if _, err := app.Append(0, lset, ts.Milliseconds(), 1); err != nil {
				return err
			}
			if err := app.Commit(); err != nil {
				return err
			}
		}
		return db.Compact(context.Background())
	}()
	require.ErrorIs(t, err, syscall.EIO)
	require.Equal(t, 1.0, value("tsdb_compactions_failed_total"))
	require.Equal(t, 1.0, value("tsdb_head_truncations_failed_total"))
	require.Equal(t, 1.0, value("tsdb_checkpoint_creations_total"))
	require.Equal(t, 1.0, value("tsdb_checkpoint_creations_failed_total"))
	require.NoError(t, db.Compact(context.Background()))
	require.Equal(t, 1.0, value("tsdb_head_truncations_failed_total"))
	require.Equal(t, 2.0, value("tsdb_checkpoint_creations_total"))
	require.Equal(t, 1.0, value("tsdb_checkpoint_deletions_total"))
	require.Equal(t, 0.0, value("tsdb_checkpoint_deletions_failed_total"))

	// The next truncation cannot delete the now older checkpoint.
	app := db.Appender(context.Background())
	_, err = app.Append(0, labels.FromStrings("__name__", "up"), (6*time.Hour + 2*time.Minute).Milliseconds(), 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	fsys.SetHook(fail(vfs.OpRemove))
	err = db.Compact(context.Background())
	fsys.SetHook(nil)
	require.ErrorIs(t, err, syscall.EIO)
	require.Equal(t, 2.0, value("tsdb_checkpoint_deletions_total"))
	require.Equal(t, 1.0, value("tsdb_checkpoint_deletions_failed_total"))
	require.Equal(t, 2.0, value("tsdb_head_truncations_failed_total"))
	require.NoError(t, db.Compact(context.Background()))
	require.Equal(t, 1.0, value("tsdb_checkpoint_deletions_failed_total"))
	require.Equal(t, 0.0, value("tsdb_reloads_failures_total"))
	blocks := db.Blocks()
	require.NotEmpty(t, blocks)
	require.NoError(t, db.Close())

	// A damaged block is skipped at Open: a failed reload.
	mustWrite(t, fsys, filepath.Join("data", blocks[0].ULID.String(), metaFilename), []byte("{not json"))
	reg = prometheus.NewRegistry()
	db2, err := Open("data", nil, reg, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db2.Close()) }()
	require.Equal(t, 1.0, value("tsdb_reloads_total"))
	require.Equal(t, 1.0, value("tsdb_reloads_failures_total"))
	require.Equal(t, 1.0, value("tsdb_blocks_corrupt_total"))
	require.Equal(t, float64(len(blocks)-1), value("tsdb_blocks_loaded"))
}
