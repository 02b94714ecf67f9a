package interop

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	ourlabels "github.com/isotsdb/tsdb/labels"
)

// descRecorder is a Registerer that records the shape of every metric
// registered through it: its name, its type's family (from the collector)
// and its label names (constant and variable), vectors without children
// included.
type descRecorder struct {
	prometheus.Registerer
	labels map[string]string // name -> sorted label names, comma-separated
}

var descParts = regexp.MustCompile(`fqName: "([^"]+)".*constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}`)

func (r *descRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		m := descParts.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		var names []string
		for p := range strings.SplitSeq(m[2], ",") {
			if n, _, ok := strings.Cut(p, "="); ok {
				names = append(names, n)
			}
		}
		for v := range strings.SplitSeq(m[3], ",") {
			if v != "" {
				names = append(names, v)
			}
		}
		slices.Sort(names)
		r.labels[m[1]] = strings.Join(names, ",")
	}
	return r.Registerer.Register(c)
}

func (r *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// recordShapes runs a DB on a fresh descRecorder: open opens it and
// appends a sample, and returns its Close. It returns the recorder and
// the type of each metric family gathered before Close.
func recordShapes(t *testing.T, open func(prometheus.Registerer) (func() error, error)) (*descRecorder, map[string]string) {
	t.Helper()
	reg := prometheus.NewRegistry()
	rec := &descRecorder{Registerer: reg, labels: map[string]string{}}
	closeDB, err := open(rec)
	require.NoError(t, err)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	require.NoError(t, closeDB())
	types := map[string]string{}
	for _, mf := range mfs {
		types[mf.GetName()] = mf.GetType().String()
	}
	return rec, types
}

// TestMetricNamesMatchPrometheus opens Prometheus's TSDB and isotsdb with
// MetricsNamespace "prometheus" and an out-of-order window (so that both
// open a WBL and register its metrics), each on a recording registry, and appends
// a float sample to each (Prometheus's samples_appended_total{type} only
// has a child once it counted one; ours carries its type label as a
// constant). It checks: every metric that isotsdb's README says it shares
// with Prometheus is one Prometheus registers; and
// every name both register has the same label names and, where both are
// gathered, the same type.
func TestMetricNamesMatchPrometheus(t *testing.T) {
	ctx := context.Background()
	prom, promTypes := recordShapes(t, func(reg prometheus.Registerer) (func() error, error) {
		po := promtsdb.DefaultOptions()
		po.OutOfOrderTimeWindow = (30 * time.Minute).Milliseconds() // so that it has a WBL, and its metrics
		db, err := promtsdb.Open(t.TempDir(), nil, reg, po, nil)
		if err != nil {
			return nil, err
		}
		app := db.Appender(ctx)
		if _, err := app.Append(0, labels.FromStrings("__name__", "up"), 1000, 1); err != nil {
			return db.Close, err
		}
		return db.Close, app.Commit()
	})
	ours, ourTypes := recordShapes(t, func(reg prometheus.Registerer) (func() error, error) {
		o := tsdb.DefaultOptions()
		o.MetricsNamespace = "prometheus"
		o.OutOfOrderTimeWindow = 30 * time.Minute
		db, err := tsdb.Open(t.TempDir(), nil, reg, o)
		if err != nil {
			return nil, err
		}
		_, err = db.Appender(ctx).Append(0, ourlabels.FromStrings("__name__", "up"), 1000, 1)
		return db.Close, err
	})

	documented := readmeSharedMetrics(t)
	require.NotEmpty(t, documented)
	for ourName, promName := range documented {
		_, ok := prom.labels[promName]
		require.True(t, ok, "%s is mapped to %s, which Prometheus's TSDB does not register", ourName, promName)
		require.Contains(t, ours.labels, promName, "%s is not registered under Prometheus's name", ourName)
	}
	shared := 0
	for name, ls := range ours.labels {
		pls, ok := prom.labels[name]
		if !ok {
			continue
		}
		shared++
		require.Equal(t, pls, ls, "label names of %s", name)
		if pt, ok := promTypes[name]; ok {
			if ot, ok := ourTypes[name]; ok {
				require.Equal(t, pt, ot, "type of %s", name)
			}
		}
	}
	require.Equal(t, len(documented), shared, "names both register")
}

// sharedRow matches a row of the README's metrics table whose second
// column is in bold: a metric isotsdb registers under Prometheus's name
// (with MetricsNamespace "prometheus"). The root package's
// TestMetricsReadme checks the table against what the DB registers.
var sharedRow = regexp.MustCompile("^\\| `(tsdb_[a-z_]+)[^`]*` \\| \\*\\*`(prometheus_tsdb_[a-z_]+)")

// readmeSharedMetrics returns the metrics the README documents as shared
// with Prometheus's TSDB: isotsdb's default name -> Prometheus's name.
// prom/ uses only the root module's public API and documentation, so it
// reads the mapping from the README rather than from the table behind it.
func readmeSharedMetrics(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	shared := map[string]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if m := sharedRow.FindStringSubmatch(line); m != nil {
			shared[m[1]] = m[2]
		}
	}
	return shared
}
