package interop

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/stretchr/testify/require"

	ourlabels "github.com/isotsdb/tsdb/labels"
)

// metricName is the label holding the metric name.
const metricName = prommodel.MetricNameLabel

// seriesFile holds real label sets (see testdata/README.md at the root of
// the repository), one JSON object per line.
var seriesFile = filepath.Join("..", "..", "testdata", "20kseries.json")

// loadLabelSets returns n label sets from seriesFile: lines offset,
// offset+every, offset+2*every, ...
func loadLabelSets(t testing.TB, n, every, offset int) []labels.Labels {
	t.Helper()
	f, err := os.Open(seriesFile)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var out []labels.Labels
	for line := 0; sc.Scan() && len(out) < n; line++ {
		if line < offset || (line-offset)%every != 0 {
			continue
		}
		var m map[string]string
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %d", line+1)
		out = append(out, labels.FromMap(m))
	}
	require.NoError(t, sc.Err())
	require.Len(t, out, n, "%s has too few lines", seriesFile)
	return out
}

// mix is splitmix64 of a and b: a stateless source of varied bits, so that
// a value can be computed again from its series and step.
func mix(a, b uint64) uint64 {
	z := a*0x9e3779b97f4a7c15 + b + 0x632be59bd9b4e5b5
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// specialValues are values whose exact bits a reader must preserve.
var specialValues = [...]float64{
	math.NaN(),
	math.Float64frombits(value.StaleNaN),
	math.Inf(1),
	math.Inf(-1),
	math.Copysign(0, -1),
	0,
	math.MaxFloat64,
	-math.MaxFloat64,
	math.SmallestNonzeroFloat64,
	1e-300,
	1,
	-1,
}

// floatValue is series i's value at step k. Series fall into five kinds
// by i%5: counters, noisy gauges, constants, short fractions, and a mix of
// special values and arbitrary bit patterns (NaN payloads included).
func floatValue(i, k int) float64 {
	h := mix(uint64(i), uint64(k))
	switch i % 5 {
	case 0:
		return float64(k) * float64(i%13+1)
	case 1:
		return (float64(h>>11)/(1<<53) - 0.5) * 1e4
	case 2:
		return 1
	case 3:
		return float64(h%1000) / 8
	default:
		if h%3 == 0 {
			return math.Float64frombits(mix(h, 1))
		}
		return specialValues[h%uint64(len(specialValues))]
	}
}

// sampleTime is series i's timestamp at step k: steps apart, with a
// per-series offset below one step so series are not aligned (series 0
// has none, so it has samples on block boundaries).
func sampleTime(base, step int64, i, k int) int64 {
	return base + int64(k)*step + (int64(i)*7919)%step
}

// selector is a named set of matchers a test queries with.
type selector struct {
	name string
	ms   []*labels.Matcher
}

// selectorsFor builds the selectors the tests compare readers on, from
// the label sets written: all series, the most common metric, a regexp,
// a negative matcher, and (if the data allows) an empty-value matcher.
func selectorsFor(sets []labels.Labels) []selector {
	counts := map[string]int{}
	for _, ls := range sets {
		counts[ls.Get(metricName)]++
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	top := names[0]
	out := []selector{
		{"all", []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, ".+")}},
		{"metric=" + top, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, metricName, top)}},
		{"regexp", []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, "(a|c|e|interop_).*|[xyz].+s")}},
		{"negative", []*labels.Matcher{labels.MustNewMatcher(labels.MatchNotEqual, metricName, top)}},
	}
	// A label some but not all series of the top metric have: ="" selects
	// those without it.
	has := map[string]int{}
	for _, ls := range sets {
		if ls.Get(metricName) == top {
			ls.Range(func(l labels.Label) { has[l.Name]++ })
		}
	}
	var partial []string
	for n, c := range has {
		if c < counts[top] {
			partial = append(partial, n)
		}
	}
	if len(partial) > 0 {
		slices.Sort(partial)
		out = append(out, selector{"empty-value", []*labels.Matcher{
			labels.MustNewMatcher(labels.MatchEqual, metricName, top),
			labels.MustNewMatcher(labels.MatchEqual, partial[0], ""),
		}})
	}
	out = append(out, selector{"negative-regexp", []*labels.Matcher{
		labels.MustNewMatcher(labels.MatchRegexp, metricName, ".+"),
		labels.MustNewMatcher(labels.MatchNotRegexp, metricName, "[a-m].*"),
	}})
	return out
}

// toOurLabels converts a Prometheus label set to isotsdb's.
func toOurLabels(ls labels.Labels) ourlabels.Labels {
	b := ourlabels.NewScratchBuilder(ls.Len())
	ls.Range(func(l labels.Label) { b.Add(l.Name, l.Value) })
	return b.Labels()
}

// fromOurLabels converts an isotsdb label set to Prometheus's. It keeps
// the order it is given, so unsorted labels show up as a mismatch.
func fromOurLabels(ls ourlabels.Labels) labels.Labels {
	b := labels.NewScratchBuilder(ls.Len())
	ls.Range(func(l ourlabels.Label) { b.Add(l.Name, l.Value) })
	return b.Labels()
}

// toOurMatchers converts Prometheus matchers to isotsdb's.
func toOurMatchers(t testing.TB, ms []*labels.Matcher) []*ourlabels.Matcher {
	t.Helper()
	out := make([]*ourlabels.Matcher, len(ms))
	for i, m := range ms {
		var typ ourlabels.MatchType
		switch m.Type {
		case labels.MatchEqual:
			typ = ourlabels.MatchEqual
		case labels.MatchNotEqual:
			typ = ourlabels.MatchNotEqual
		case labels.MatchRegexp:
			typ = ourlabels.MatchRegexp
		case labels.MatchNotRegexp:
			typ = ourlabels.MatchNotRegexp
		default:
			require.Failf(t, "unknown matcher type", "%v", m.Type)
		}
		om, err := ourlabels.NewMatcher(typ, m.Name, m.Value)
		require.NoError(t, err)
		out[i] = om
	}
	return out
}
