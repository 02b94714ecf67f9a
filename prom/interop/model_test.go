package interop

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
)

// sample is one float sample. v holds the value's bits, so that NaNs
// (Prometheus's stale marker and any other payload) compare exactly.
type sample struct {
	t int64
	v uint64
}

func (s sample) String() string {
	return fmt.Sprintf("(t=%d v=%#016x %g)", s.t, s.v, math.Float64frombits(s.v))
}

// series is a label set and its samples in time order.
type series struct {
	lset    labels.Labels
	samples []sample
}

// model is what a test wrote, minus what it deleted: the answer every
// reader must give. It is not safe for concurrent use.
type model struct {
	byKey map[string]*series
}

func newModel() *model { return &model{byKey: map[string]*series{}} }

// add records a float sample of lset. Samples of a series must come in
// increasing time order.
func (m *model) add(lset labels.Labels, t int64, v float64) {
	k := lset.String()
	s := m.byKey[k]
	if s == nil {
		s = &series{lset: lset}
		m.byKey[k] = s
	}
	s.samples = append(s.samples, sample{t: t, v: math.Float64bits(v)})
}

// deleteRange removes the samples in [mint, maxt] of the series matching
// all of ms, as a Delete does.
func (m *model) deleteRange(mint, maxt int64, ms []*labels.Matcher) {
	for _, s := range m.byKey {
		if !matchAll(s.lset, ms) {
			continue
		}
		s.samples = slices.DeleteFunc(s.samples, func(x sample) bool { return x.t >= mint && x.t <= maxt })
	}
}

// selectRange returns the series matching all of ms (every series if ms is
// empty) that have samples in [mint, maxt], with those samples only,
// sorted by labels as a querier returns them.
func (m *model) selectRange(mint, maxt int64, ms []*labels.Matcher) []series {
	var out []series
	for _, s := range m.byKey {
		if !matchAll(s.lset, ms) {
			continue
		}
		i, _ := slices.BinarySearchFunc(s.samples, mint, func(x sample, t int64) int { return cmp.Compare(x.t, t) })
		j, found := slices.BinarySearchFunc(s.samples, maxt, func(x sample, t int64) int { return cmp.Compare(x.t, t) })
		if found {
			j++
		}
		if i < j {
			out = append(out, series{lset: s.lset, samples: s.samples[i:j]})
		}
	}
	slices.SortFunc(out, func(a, b series) int { return labels.Compare(a.lset, b.lset) })
	return out
}

// minMax returns the first and last sample time of the model.
func (m *model) minMax() (mint, maxt int64) {
	mint, maxt = math.MaxInt64, math.MinInt64
	for _, s := range m.byKey {
		if len(s.samples) > 0 {
			mint = min(mint, s.samples[0].t)
			maxt = max(maxt, s.samples[len(s.samples)-1].t)
		}
	}
	return mint, maxt
}

func matchAll(lset labels.Labels, ms []*labels.Matcher) bool {
	for _, m := range ms {
		if !m.Matches(lset.Get(m.Name)) {
			return false
		}
	}
	return true
}

// dropEmpty removes series without samples, which a querier may return
// for a series whose chunks overlap the range but whose samples in it are
// all deleted; PromQL ignores them. It returns how many it removed.
func dropEmpty(ss []series) ([]series, int) {
	n := len(ss)
	ss = slices.DeleteFunc(ss, func(s series) bool { return len(s.samples) == 0 })
	return ss, n - len(ss)
}

// diffSeries describes the first difference between want and got, or
// returns "" if they are equal: same series in the same order, same
// samples, same value bits.
func diffSeries(wantName string, want []series, gotName string, got []series) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(want):
			return fmt.Sprintf("%s has %d series, %s has %d; first extra in %s: %s (%d samples)",
				wantName, len(want), gotName, len(got), gotName, got[i].lset, len(got[i].samples))
		case i >= len(got):
			return fmt.Sprintf("%s has %d series, %s has %d; first missing from %s: %s (%d samples)",
				wantName, len(want), gotName, len(got), gotName, want[i].lset, len(want[i].samples))
		}
		w, g := want[i], got[i]
		if !labels.Equal(w.lset, g.lset) {
			return fmt.Sprintf("series #%d: %s has %s, %s has %s", i, wantName, w.lset, gotName, g.lset)
		}
		if d := diffSamples(w.samples, g.samples); d != "" {
			return fmt.Sprintf("series #%d %s: %s", i, w.lset, strings.NewReplacer("WANT", wantName, "GOT", gotName).Replace(d))
		}
	}
	return ""
}

func diffSamples(want, got []sample) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(want):
			return fmt.Sprintf("WANT has %d samples, GOT has %d; first extra: %s", len(want), len(got), got[i])
		case i >= len(got):
			return fmt.Sprintf("WANT has %d samples, GOT has %d; first missing: %s", len(want), len(got), want[i])
		case want[i] != got[i]:
			return fmt.Sprintf("sample #%d: WANT %s, GOT %s", i, want[i], got[i])
		}
	}
	return ""
}
