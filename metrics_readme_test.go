package tsdb

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/metricnames"
	"github.com/isotsdb/tsdb/vfs"
)

// mixinMetrics are the metrics of Prometheus's TSDB that the alerts and
// dashboards of Prometheus's monitoring mixin (v0.316.0,
// documentation/prometheus-mixin) use and that isotsdb provides under
// MetricsNamespace "prometheus". The README marks the same rows *mixin*.
var mixinMetrics = []string{
	"prometheus_tsdb_compactions_failed_total",
	"prometheus_tsdb_head_chunks",
	"prometheus_tsdb_head_samples_appended_total",
	"prometheus_tsdb_head_series",
	"prometheus_tsdb_reloads_failures_total",
	"prometheus_tsdb_wal_segment_current",
}

// nameRecorder is a Registerer that records the name of every metric
// registered through it, vectors without children included (which Gather
// leaves out).
type nameRecorder struct {
	prometheus.Registerer
	names map[string]bool
}

var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *nameRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := descName.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
		}
	}
	return r.Registerer.Register(c)
}

func (r *nameRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// registeredNames opens a DB with the namespace and returns the names of
// every metric it registers. The out-of-order window is on, so that the
// DB has a WBL and registers its metrics too.
func registeredNames(t *testing.T, namespace string) []string {
	t.Helper()
	rec := &nameRecorder{Registerer: prometheus.NewRegistry(), names: map[string]bool{}}
	o := DefaultOptions()
	o.FS, o.MetricsNamespace = vfs.NewMemFS(), namespace
	o.OutOfOrderTimeWindow = time.Hour
	db, err := Open("data", nil, rec, o)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	var names []string
	for n := range rec.names {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// readmeMetric is a row of the README's metrics table.
type readmeMetric struct {
	name, promName string
	promLabels     string // {...} after promName, "" if none
	same           bool   // promName in bold: Prometheus's metric
	mixin          bool
}

var readmeRow = regexp.MustCompile("^\\| `(tsdb_[a-z_]+)(?:\\{[a-z,]+\\})?` \\| (\\*\\*)?`(prometheus_tsdb_[a-z_]+)(\\{[^}]*\\})?`(\\*\\*)? \\|.*\\|(.*)\\|$")

// readmeMetrics parses the table of the README's "Metrics" section.
func readmeMetrics(t *testing.T) []readmeMetric {
	t.Helper()
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Metrics\n")
	require.True(t, ok, "README has no Metrics section")
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []readmeMetric
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "| `tsdb_") {
			continue
		}
		m := readmeRow.FindStringSubmatch(line)
		require.NotNil(t, m, "README metrics row not understood: %s", line)
		require.Equal(t, m[2] != "", m[5] != "", "unbalanced bold: %s", line)
		labels := m[4]
		if !strings.Contains(labels, "=") {
			labels = "" // variable labels only
		}
		rows = append(rows, readmeMetric{
			name: m[1], promName: m[3], promLabels: labels, same: m[2] != "",
			mixin: strings.Contains(m[6], "*mixin*"),
		})
	}
	require.NotEmpty(t, rows)
	return rows
}

// TestMetricsReadme: the README's table lists exactly the metrics the DB
// registers, under both namespaces, with the names and constant labels
// internal/metricnames gives them; bold marks exactly the metrics mapped to
// Prometheus's; and the rows marked *mixin* are mixinMetrics, each
// registered under "prometheus".
func TestMetricsReadme(t *testing.T) {
	rows := readmeMetrics(t)
	n, err := metricnames.Parse(metricnames.Prometheus)
	require.NoError(t, err)
	same := metricnames.PrometheusNames()
	var names, promNames, mixin []string
	for _, r := range rows {
		names = append(names, r.name)
		promNames = append(promNames, r.promName)
		if r.mixin {
			mixin = append(mixin, r.promName)
		}
		name, labels := n.Name(r.name)
		require.Equal(t, r.promName, name, "README row of %s", r.name)
		require.LessOrEqual(t, len(labels), 1, "the README table shows one constant label at most")
		var want string
		for k, v := range labels {
			want = "{" + k + `="` + v + `"}`
		}
		require.Equal(t, want, r.promLabels, "README row of %s: constant labels", r.name)
		_, isSame := same[r.name]
		require.Equal(t, isSame, r.same, "README row of %s: bold iff it is Prometheus's metric", r.name)
	}
	slices.Sort(names)
	slices.Sort(promNames)
	slices.Sort(mixin)
	require.Equal(t, registeredNames(t, ""), names, "README table vs metrics registered by default")
	prom := registeredNames(t, metricnames.Prometheus)
	require.Equal(t, prom, promNames, `README table vs metrics registered under "prometheus"`)
	require.Equal(t, mixinMetrics, mixin, "README's mixin rows")
	for _, m := range mixinMetrics {
		require.Contains(t, prom, m)
	}
	require.Len(t, same, len(slices.DeleteFunc(slices.Clone(rows), func(r readmeMetric) bool { return !r.same })),
		"internal/metricnames maps a metric the DB does not register")
}
