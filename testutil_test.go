package tsdb

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// sample is one (t, v) pair as tests compare them.
type sample struct {
	T int64
	V float64
}

// openTestDB opens a DB on an in-memory filesystem and closes it at the end
// of the test. opts may be nil. It returns the DB and the registry its
// metrics went to.
func openTestDB(t testing.TB, opts *Options) (*DB, *prometheus.Registry) {
	t.Helper()
	o := DefaultOptions()
	if opts != nil {
		o = opts
	}
	if o.FS == nil {
		o.FS = vfs.NewMemFS()
	}
	reg := prometheus.NewRegistry()
	db, err := Open("data", nil, reg, o)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, db.Close())
		// Nothing runs on a closed head: all of its invariants hold.
		require.NoError(t, db.head.checkInvariants(true), "invariants of the closed head")
		// Every test DB must pass the offline consistency checker.
		rep, err := check.Dir(o.FS, "data")
		require.NoError(t, err)
		require.NoError(t, rep.Err(), "consistency check of the test DB")
	})
	return db, reg
}

// querySamples returns every sample q returns for ms, by series string.
// A histogram sample is returned as a float that identifies its type and
// count (see read below), which is all the tests need to tell them apart.
func querySamples(t testing.TB, q Querier, ms ...*labels.Matcher) map[string][]sample {
	t.Helper()
	if len(ms) == 0 {
		ms = []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")}
	}
	out := map[string][]sample{}
	ss := q.Select(context.Background(), ms...)
	var prev labels.Labels
	first := true
	read := func(it chunks.Iterator) []sample {
		var got []sample
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			ts, v := it.AtT(), 0.0
			switch vt {
			case chunks.ValFloat:
				_, v = it.At()
			case chunks.ValHistogram:
				_, h := it.AtHistogram(nil)
				v = -float64(h.Count) // histograms read as their negated count
			default:
				_, fh := it.AtFloatHistogram(nil)
				v = -fh.Count - 0.5 // float histograms as their negated count minus ½
			}
			got = append(got, sample{ts, v})
		}
		require.NoError(t, it.Err())
		return got
	}
	// Iterators are recycled from series to series, as PromQL does; every
	// third series is read a second time with a fresh iterator, which must
	// see the same samples.
	var it chunks.Iterator
	for n := 0; ss.Next(); n++ {
		s := ss.At()
		if !first {
			require.Negative(t, labels.Compare(prev, s.Labels()), "series not sorted")
		}
		first, prev = false, s.Labels()
		it = s.Iterator(it)
		got := read(it)
		if n%3 == 0 {
			requireSameSamples(t, map[string][]sample{"": got}, map[string][]sample{"": read(s.Iterator(nil))})
		}
		if len(got) > 0 {
			out[s.Labels().String()] = got
		}
	}
	require.NoError(t, ss.Err())
	return out
}

// gauge reads a gauge's value from reg.
func gauge(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			switch mf.GetType() {
			case dto.MetricType_GAUGE:
				return m.GetGauge().GetValue()
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue()
			}
		}
	}
	require.Failf(t, "metric not found", "%s", name)
	return 0
}

// gaugeWithLabel reads the value of the counter or gauge name whose label
// has the given value; 0 if there is none.
func gaugeWithLabel(t testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					return m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

// slogTo returns a logger writing text to w.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}

// requireSameSamples compares two query results bit by bit (NaN included).
func requireSameSamples(t testing.TB, want, got map[string][]sample) {
	t.Helper()
	require.Equal(t, len(want), len(got), "number of series")
	for key, w := range want {
		g, ok := got[key]
		require.True(t, ok, "series %s missing", key)
		require.Equal(t, len(w), len(g), "samples of %s", key)
		for i := range w {
			if w[i].T != g[i].T || math.Float64bits(w[i].V) != math.Float64bits(g[i].V) {
				t.Fatalf("%s sample %d: got %v, want %v", key, i, g[i], w[i])
			}
		}
	}
}
