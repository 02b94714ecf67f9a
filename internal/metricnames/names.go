// Package metricnames decides the names under which the DB registers its
// metrics: its own (tsdb_...) or, for dashboards and alerts written for
// Prometheus, Prometheus's (prometheus_tsdb_...). It holds the one table
// that maps the two; every metric of the root package and of package wlog
// is named through a Namer.
package metricnames

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// The namespaces a Namer can be made for.
const (
	// Default keeps the DB's own names (tsdb_...).
	Default = "tsdb"
	// Prometheus gives each metric whose meaning is the same in
	// Prometheus's TSDB Prometheus's name, type and labels, and every
	// other metric its own name under the prometheus_ prefix.
	Prometheus = "prometheus"
)

// ErrUnknownNamespace: Parse was given a namespace other than Default,
// Prometheus or "".
var ErrUnknownNamespace = errors.New("unknown metrics namespace")

// A Namer names metrics for one namespace. The zero Namer is Default's.
// It is a small immutable value, safe to copy and to use concurrently.
type Namer struct {
	prometheus bool
}

// Parse returns the Namer of namespace; "" means Default. Any other value
// than Default or Prometheus gives an error wrapping ErrUnknownNamespace.
func Parse(namespace string) (Namer, error) {
	switch namespace {
	case "", Default:
		return Namer{}, nil
	case Prometheus:
		return Namer{prometheus: true}, nil
	}
	return Namer{}, fmt.Errorf("%w %q (want %q or %q)", ErrUnknownNamespace, namespace, Default, Prometheus)
}

// promMetric is the metric of Prometheus's TSDB (v0.316.0) that has the
// same meaning, type and unit as one of ours.
type promMetric struct {
	name string
	// labels are constant labels that Prometheus's metric carries and ours
	// has no use for, e.g. type="float" where Prometheus also counts native
	// histograms.
	labels prometheus.Labels
	// objectives, if set, make the metric a summary with these quantiles
	// under the Prometheus namespace: Prometheus's is a summary, ours a
	// histogram.
	objectives map[float64]float64
}

// samePrometheus maps our default names to Prometheus's metric of the same
// meaning. Metrics not listed have no counterpart there (or one with
// another meaning, type or labels) and are named "prometheus_" + their
// default name; no such name is one that Prometheus's TSDB registers
// (prom/interop checks that every name both register agrees in type and
// labels). The README's "Metrics" table documents this map; a test keeps
// the two in step.
var samePrometheus = map[string]promMetric{
	// Head.
	"tsdb_head_series":                 {name: "prometheus_tsdb_head_series"},
	"tsdb_head_chunks":                 {name: "prometheus_tsdb_head_chunks"},
	"tsdb_head_series_created_total":   {name: "prometheus_tsdb_head_series_created_total"},
	"tsdb_head_samples_appended_total": {name: "prometheus_tsdb_head_samples_appended_total", labels: prometheus.Labels{"type": "float"}},
	"tsdb_isolation_low_watermark":     {name: "prometheus_tsdb_isolation_low_watermark"},
	"tsdb_isolation_high_watermark":    {name: "prometheus_tsdb_isolation_high_watermark"},
	// Exemplars.
	"tsdb_exemplar_exemplars_appended_total":         {name: "prometheus_tsdb_exemplar_exemplars_appended_total"},
	"tsdb_exemplar_exemplars_in_storage":             {name: "prometheus_tsdb_exemplar_exemplars_in_storage"},
	"tsdb_exemplar_series_with_exemplars_in_storage": {name: "prometheus_tsdb_exemplar_series_with_exemplars_in_storage"},
	"tsdb_exemplar_last_exemplars_timestamp_seconds": {name: "prometheus_tsdb_exemplar_last_exemplars_timestamp_seconds"},
	"tsdb_exemplar_max_exemplars":                    {name: "prometheus_tsdb_exemplar_max_exemplars"},
	"tsdb_exemplar_out_of_order_exemplars_total":     {name: "prometheus_tsdb_exemplar_out_of_order_exemplars_total"},
	// Head truncation and WAL checkpoints.
	"tsdb_head_truncations_total":            {name: "prometheus_tsdb_head_truncations_total"},
	"tsdb_head_truncations_failed_total":     {name: "prometheus_tsdb_head_truncations_failed_total"},
	"tsdb_checkpoint_creations_total":        {name: "prometheus_tsdb_checkpoint_creations_total"},
	"tsdb_checkpoint_creations_failed_total": {name: "prometheus_tsdb_checkpoint_creations_failed_total"},
	"tsdb_checkpoint_deletions_total":        {name: "prometheus_tsdb_checkpoint_deletions_total"},
	"tsdb_checkpoint_deletions_failed_total": {name: "prometheus_tsdb_checkpoint_deletions_failed_total"},
	"tsdb_wal_replay_duration_seconds":       {name: "prometheus_tsdb_data_replay_duration_seconds"},
	"tsdb_wal_replay_unknown_refs_total":     {name: "prometheus_tsdb_wal_replay_unknown_refs_total", labels: prometheus.Labels{"type": "samples"}},
	"tsdb_wal_corruptions_repaired_total":    {name: "prometheus_tsdb_wal_corruptions_total"},
	"tsdb_snapshot_replay_error_total":       {name: "prometheus_tsdb_snapshot_replay_error_total"},
	"tsdb_compactions_total":                 {name: "prometheus_tsdb_compactions_total"},
	"tsdb_compactions_failed_total":          {name: "prometheus_tsdb_compactions_failed_total"},
	"tsdb_compaction_duration_seconds":       {name: "prometheus_tsdb_compaction_duration_seconds"},
	"tsdb_reloads_total":                     {name: "prometheus_tsdb_reloads_total"},
	"tsdb_reloads_failures_total":            {name: "prometheus_tsdb_reloads_failures_total"},
	"tsdb_blocks_loaded":                     {name: "prometheus_tsdb_blocks_loaded"},
	"tsdb_storage_blocks_bytes":              {name: "prometheus_tsdb_storage_blocks_bytes"},
	"tsdb_wal_segment_current":               {name: "prometheus_tsdb_wal_segment_current"},
	"tsdb_wal_page_flushes_total":            {name: "prometheus_tsdb_wal_page_flushes_total"},
	"tsdb_wal_completed_pages_total":         {name: "prometheus_tsdb_wal_completed_pages_total"},
	"tsdb_wal_writes_failed_total":           {name: "prometheus_tsdb_wal_writes_failed_total"},
	"tsdb_wal_truncations_total":             {name: "prometheus_tsdb_wal_truncations_total"},
	"tsdb_wal_truncations_failed_total":      {name: "prometheus_tsdb_wal_truncations_failed_total"},
	"tsdb_wal_fsync_duration_seconds":        {name: "prometheus_tsdb_wal_fsync_duration_seconds", objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}},
	// The WBL, the log of late samples (registered only while the DB has
	// one, as in Prometheus).
	"tsdb_wbl_segment_current":           {name: "prometheus_tsdb_out_of_order_wbl_segment_current"},
	"tsdb_wbl_page_flushes_total":        {name: "prometheus_tsdb_out_of_order_wbl_page_flushes_total"},
	"tsdb_wbl_completed_pages_total":     {name: "prometheus_tsdb_out_of_order_wbl_completed_pages_total"},
	"tsdb_wbl_writes_failed_total":       {name: "prometheus_tsdb_out_of_order_wbl_writes_failed_total"},
	"tsdb_wbl_truncations_total":         {name: "prometheus_tsdb_out_of_order_wbl_truncations_total"},
	"tsdb_wbl_truncations_failed_total":  {name: "prometheus_tsdb_out_of_order_wbl_truncations_failed_total"},
	"tsdb_wbl_fsync_duration_seconds":    {name: "prometheus_tsdb_out_of_order_wbl_fsync_duration_seconds", objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}},
	"tsdb_wbl_replay_unknown_refs_total": {name: "prometheus_tsdb_wbl_replay_unknown_refs_total", labels: prometheus.Labels{"type": "samples"}},
}

// Name returns the name and the constant labels under which the metric
// whose default name is name is registered.
func (n Namer) Name(name string) (string, prometheus.Labels) {
	if !n.prometheus {
		return name, nil
	}
	if p, ok := samePrometheus[name]; ok {
		return p.name, p.labels
	}
	return "prometheus_" + name, nil
}

// Counter returns o named for n (o.Name is the default name).
func (n Namer) Counter(o prometheus.CounterOpts) prometheus.CounterOpts {
	return prometheus.CounterOpts(n.opts(prometheus.Opts(o)))
}

// Gauge returns o named for n (o.Name is the default name).
func (n Namer) Gauge(o prometheus.GaugeOpts) prometheus.GaugeOpts {
	return prometheus.GaugeOpts(n.opts(prometheus.Opts(o)))
}

func (n Namer) opts(o prometheus.Opts) prometheus.Opts {
	o.Name, o.ConstLabels = n.Name(o.Name)
	return o
}

// Duration is a histogram or a summary of durations.
type Duration interface {
	prometheus.Observer
	prometheus.Collector
}

// Duration returns a new, unregistered histogram made from o, named for n
// (o.Name is the default name); or a summary of the same name and help
// under the Prometheus namespace where Prometheus's metric is a summary.
func (n Namer) Duration(o prometheus.HistogramOpts) Duration {
	name, labels := n.Name(o.Name)
	if p := samePrometheus[o.Name]; n.prometheus && p.objectives != nil {
		return prometheus.NewSummary(prometheus.SummaryOpts{
			Name: name, Help: o.Help, ConstLabels: labels, Objectives: p.objectives,
		})
	}
	o.Name, o.ConstLabels = name, labels
	return prometheus.NewHistogram(o)
}

// PrometheusNames returns the default names of the metrics that are
// registered under Prometheus's own name, type and labels in the
// Prometheus namespace, mapped to that name. For tests and documentation.
func PrometheusNames() map[string]string {
	m := make(map[string]string, len(samePrometheus))
	for k, v := range samePrometheus {
		m[k] = v.name
	}
	return m
}
