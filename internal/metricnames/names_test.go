package metricnames

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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
			if !errors.Is(err, ErrUnknownNamespace) || !strings.Contains(err.Error(), c.namespace) {
				t.Errorf("Parse(%q) = %v, want an error wrapping ErrUnknownNamespace naming it", c.namespace, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.namespace, err)
		}
		if got, _ := n.Name("tsdb_head_series"); got != c.name {
			t.Errorf("Parse(%q).Name = %q, want %q", c.namespace, got, c.name)
		}
	}
}

// TestName: names not in the table get the prefix, never one of the
// table's Prometheus names; the zero Namer keeps every name.
func TestName(t *testing.T) {
	p := Namer{prometheus: true}
	taken := map[string]bool{}
	for _, v := range samePrometheus {
		if taken[v.name] {
			t.Errorf("two metrics map to %s", v.name)
		}
		taken[v.name] = true
	}
	for _, ours := range []string{"tsdb_isolation_open_reads", "tsdb_wal_bytes_written_total"} {
		got, labels := p.Name(ours)
		if got != "prometheus_"+ours || labels != nil || taken[got] {
			t.Errorf("Name(%s) = %s %v", ours, got, labels)
		}
	}
	for ours := range samePrometheus {
		if got, labels := (Namer{}).Name(ours); got != ours || labels != nil {
			t.Errorf("default Name(%s) = %s %v", ours, got, labels)
		}
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
		if err != nil || len(mfs) != 1 {
			t.Fatalf("gather: %v %v", mfs, err)
		}
		if got := mfs[0].GetType(); got != c.want {
			t.Errorf("%v %s: type %v, want %v", c.n, c.name, got, c.want)
		}
	}
}
