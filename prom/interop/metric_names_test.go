package interop

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/internal/metricnames"
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

// types gathers reg after one float sample was committed and compacted
// away, and returns each metric family's type by name.
func types(t *testing.T, reg *prometheus.Registry) map[string]string {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]string{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf.GetType().String()
	}
	return out
}

// TestMetricNamesMatchPrometheus opens Prometheus's TSDB and isotsdb with
// MetricsNamespace "prometheus", each on a recording registry, commits a
// float sample to each, and checks: every metric that isotsdb claims to
// share with Prometheus (internal/metricnames) is one Prometheus
// registers; and every name both register has the same label names and,
// where both are gathered, the same type.
func TestMetricNamesMatchPrometheus(t *testing.T) {
	ctx := context.Background()
	promReg := prometheus.NewRegistry()
	prom := &descRecorder{Registerer: promReg, labels: map[string]string{}}
	pdb, err := promtsdb.Open(t.TempDir(), nil, prom, promtsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	papp := pdb.Appender(ctx)
	_, err = papp.Append(0, labels.FromStrings("__name__", "up"), 1000, 1)
	require.NoError(t, err)
	require.NoError(t, papp.Commit())
	promTypes := types(t, promReg)
	require.NoError(t, pdb.Close())

	ourReg := prometheus.NewRegistry()
	ours := &descRecorder{Registerer: ourReg, labels: map[string]string{}}
	o := tsdb.DefaultOptions()
	o.MetricsNamespace = "prometheus"
	db, err := tsdb.Open(t.TempDir(), nil, ours, o)
	require.NoError(t, err)
	app := db.Appender(ctx)
	_, err = app.Append(0, ourlabels.FromStrings("__name__", "up"), 1000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	ourTypes := types(t, ourReg)
	require.NoError(t, db.Close())

	for ourName, promName := range metricnames.PrometheusNames() {
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
	require.Equal(t, len(metricnames.PrometheusNames()), shared, "names both register")
}
