package metricnames

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	cases := []struct {
		namespace string
		ok        bool
		name      string // what tsdb_head_series becomes
	}{
		{"", true, "tsdb_head_series"},
		{Default, true, "tsdb_head_series"},
		{Prometheus, true, "prometheus_tsdb_head_series"},
		{"Prometheus", false, ""},
		{"prometheus_", false, ""},
		{"other", false, ""},
	}
	for _, c := range cases {
		n, err := Parse(c.namespace)
		if !c.ok {
			require.ErrorIs(t, err, ErrUnknownNamespace, "Parse(%q)", c.namespace)
			require.ErrorContains(t, err, c.namespace, "Parse(%q) must name the namespace", c.namespace)
			continue
		}
		require.NoError(t, err, "Parse(%q)", c.namespace)
		got, _ := n.Name("tsdb_head_series")
		require.Equal(t, c.name, got, "Parse(%q).Name", c.namespace)
	}
}

// TestName: names not in the table get the prefix, never one of the
// table's Prometheus names; the zero Namer keeps every name.
func TestName(t *testing.T) {
	p := Namer{prometheus: true}
	taken := map[string]bool{}
	for _, v := range samePrometheus {
		require.False(t, taken[v.name], "two metrics map to %s", v.name)
		taken[v.name] = true
	}
	for _, ours := range []string{"tsdb_isolation_open_reads", "tsdb_wal_bytes_written_total"} {
		got, labels := p.Name(ours)
		require.Equal(t, "prometheus_"+ours, got, "Name(%s)", ours)
		require.Nil(t, labels, "Name(%s)", ours)
		require.False(t, taken[got], "Name(%s) = %s is taken", ours, got)
	}
	for ours := range samePrometheus {
		got, labels := (Namer{}).Name(ours)
		require.Equal(t, ours, got, "default Name(%s)", ours)
		require.Nil(t, labels, "default Name(%s)", ours)
	}
}

// TestDuration: the fsync duration is a summary only under Prometheus's
// names; other durations stay histograms.
func TestDuration(t *testing.T) {
	cases := []struct {
		n    Namer
		name string
		want dto.MetricType
	}{
		{Namer{}, "tsdb_wal_fsync_duration_seconds", dto.MetricType_HISTOGRAM},
		{Namer{prometheus: true}, "tsdb_wal_fsync_duration_seconds", dto.MetricType_SUMMARY},
		{Namer{prometheus: true}, "tsdb_compaction_duration_seconds", dto.MetricType_HISTOGRAM},
	}
	for _, c := range cases {
		reg := prometheus.NewRegistry()
		d := c.n.Duration(prometheus.HistogramOpts{Name: c.name, Help: "h", Buckets: []float64{1}})
		reg.MustRegister(d)
		d.Observe(0.5)
		mfs, err := reg.Gather()
		require.NoError(t, err, "gather")
		require.Len(t, mfs, 1, "gather")
		require.Equal(t, c.want, mfs[0].GetType(), "%v %s: type", c.n, c.name)
	}
}
