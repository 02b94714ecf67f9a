package interop

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	phistogram "github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// histSeriesKinds are the kinds of series the histogram interop workload
// writes, by series number modulo their count.
var histSeriesKinds = [...]string{"float", "int", "float_hist", "custom", "custom_float", "gauge", "mixed"}

// histWorkloadGen is the generator of series i of the histogram workload:
// nil for float series. Its sequences change layout, schema and custom
// bounds, reset, and go stale now and then.
func histWorkloadGen(i int) *histogramtest.Gen {
	switch histSeriesKinds[i%len(histSeriesKinds)] {
	case "float":
		return nil
	case "custom", "custom_float":
		return histogramtest.NewGen(uint64(i), true, false)
	case "gauge":
		return histogramtest.NewGen(uint64(i), false, true)
	default:
		return histogramtest.NewGen(uint64(i), false, false)
	}
}

// writeIsotsdbHistograms writes nSeries series of every kind with
// isotsdb's Appender, one commit per step: steps of them, then an explicit
// Compact (several blocks, compacted further), then moreSteps left in the
// WAL only. It returns, per series (labels String), the time, Count and
// Sum bits of every histogram written and the time and bits of every
// float, as "t kind count sum" lines: what a reader must find, layout
// changes and counter reset hints aside.
func writeIsotsdbHistograms(t *testing.T, dir string, opts *tsdb.Options, nSeries int, base, step int64, steps, moreSteps int) map[string][]string {
	t.Helper()
	ctx := context.Background()
	db, err := tsdb.Open(dir, nil, nil, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()

	sets := make([]labels.Labels, nSeries)
	gens := make([]*histogramtest.Gen, nSeries)
	refs := make([]tsdb.SeriesRef, nSeries)
	for i := range sets {
		kind := histSeriesKinds[i%len(histSeriesKinds)]
		sets[i] = labels.FromStrings(metricName, "interop_"+kind, "i", fmt.Sprint(i))
		gens[i] = histWorkloadGen(i)
	}
	want := map[string][]string{}
	scrape := func(k int) {
		app := db.Appender(ctx)
		for i, ls := range sets {
			ts := sampleTime(base, step, i, k)
			kind := histSeriesKinds[i%len(histSeriesKinds)]
			var (
				ref  tsdb.SeriesRef
				err  error
				line string
			)
			if gens[i] == nil || (kind == "mixed" && k%60 < 20) {
				v := floatValue(i, k)
				if kind == "mixed" && value.IsStaleNaN(v) {
					// Prometheus's head turns a float stale marker that
					// follows a histogram into a histogram stale marker, at
					// append and at WAL replay; isotsdb stores it as a float.
					v = float64(k)
				}
				ref, err = app.Append(refs[i], toOurLabels(ls), ts, v)
				line = fmt.Sprintf("%d F %#x", ts, math.Float64bits(v))
			} else {
				_, h := gens[i].Next()
				var fh *histogram.FloatHistogram
				if kind == "float_hist" || kind == "custom_float" || (kind == "mixed" && k%60 >= 40) {
					fh, h = h.ToFloat(), nil
				}
				if h != nil {
					line = fmt.Sprintf("%d H %d %#x", ts, h.Count, math.Float64bits(h.Sum))
				} else {
					line = fmt.Sprintf("%d FH %#x %#x", ts, math.Float64bits(fh.Count), math.Float64bits(fh.Sum))
				}
				ref, err = app.AppendHistogram(refs[i], toOurLabels(ls), ts, h, fh)
			}
			require.NoError(t, err, "append %s at %d", ls, ts)
			refs[i] = ref
			want[ls.String()] = append(want[ls.String()], line)
		}
		require.NoError(t, app.Commit())
	}
	for k := range steps {
		scrape(k)
	}
	require.NoError(t, db.Compact(ctx))
	for k := steps; k < steps+moreSteps; k++ {
		scrape(k)
	}
	return want
}

// psample is a sample of any type as Prometheus returns it.
type psample struct {
	vt chunkenc.ValueType
	t  int64
	f  float64
	h  *phistogram.Histogram
	fh *phistogram.FloatHistogram
}

// atSample returns the sample of type vt it is at.
func atSample(vt chunkenc.ValueType, it chunkenc.Iterator) psample {
	s := psample{vt: vt}
	switch vt {
	case chunkenc.ValFloat:
		s.t, s.f = it.At()
	case chunkenc.ValHistogram:
		s.t, s.h = it.AtHistogram(nil)
	case chunkenc.ValFloatHistogram:
		s.t, s.fh = it.AtFloatHistogram(nil)
	}
	return s
}

// exact describes the sample exactly: every field, floats by their bits
// too.
func (s psample) exact() string {
	switch s.vt {
	case chunkenc.ValFloat:
		return fmt.Sprintf("%d F %#x", s.t, math.Float64bits(s.f))
	case chunkenc.ValHistogram:
		return fmt.Sprintf("%d H %+v sum=%#x", s.t, *s.h, math.Float64bits(s.h.Sum))
	case chunkenc.ValFloatHistogram:
		fh := s.fh
		return fmt.Sprintf("%d FH %+v sum=%#x count=%#x zero=%#x", s.t, *fh,
			math.Float64bits(fh.Sum), math.Float64bits(fh.Count), math.Float64bits(fh.ZeroCount))
	}
	return fmt.Sprintf("value type %v", s.vt)
}

// line is the sample's line in writeIsotsdbHistograms' model.
func (s psample) line() string {
	switch s.vt {
	case chunkenc.ValFloat:
		return fmt.Sprintf("%d F %#x", s.t, math.Float64bits(s.f))
	case chunkenc.ValHistogram:
		return fmt.Sprintf("%d H %d %#x", s.t, s.h.Count, math.Float64bits(s.h.Sum))
	case chunkenc.ValFloatHistogram:
		return fmt.Sprintf("%d FH %#x %#x", s.t, math.Float64bits(s.fh.Count), math.Float64bits(s.fh.Sum))
	}
	return fmt.Sprintf("value type %v", s.vt)
}

// readExact reads every series of q, per labels String: the exact samples
// and the model lines.
func readExact(t *testing.T, q storage.Querier) (exact, lines map[string][]string) {
	t.Helper()
	exact, lines = map[string][]string{}, map[string][]string{}
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, metricName, ".+"))
	var it chunkenc.Iterator
	for ss.Next() {
		k := ss.At().Labels().String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			ps := atSample(vt, it)
			exact[k] = append(exact[k], ps.exact())
			lines[k] = append(lines[k], ps.line())
		}
		require.NoError(t, it.Err(), k)
	}
	require.NoError(t, ss.Err())
	return exact, lines
}

// isotsdbAsProm reads every series of db in [mint, maxt] with isotsdb's own
// Querier, converting histograms with promstorage.ToPromHistogram and
// ToPromFloatHistogram, into readExact's form.
func isotsdbAsProm(t *testing.T, db *tsdb.DB, mint, maxt int64) (exact, lines map[string][]string) {
	t.Helper()
	q, err := db.Querier(mint, maxt)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	exact, lines = map[string][]string{}, map[string][]string{}
	ss := q.Select(context.Background(), toOurMatchers(t, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, ".+")})...)
	var it chunks.Iterator
	for ss.Next() {
		k := fromOurLabels(ss.At().Labels()).String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			ps := psample{vt: chunkenc.ValueType(vt)}
			switch vt {
			case chunks.ValFloat:
				ps.t, ps.f = it.At()
			case chunks.ValHistogram:
				var h *histogram.Histogram
				ps.t, h = it.AtHistogram(nil)
				ps.h = promstorage.ToPromHistogram(h)
			case chunks.ValFloatHistogram:
				var fh *histogram.FloatHistogram
				ps.t, fh = it.AtFloatHistogram(nil)
				ps.fh = promstorage.ToPromFloatHistogram(fh)
			default:
				require.Failf(t, "unexpected value type", "%s: %v", k, vt)
			}
			exact[k] = append(exact[k], ps.exact())
			lines[k] = append(lines[k], ps.line())
		}
		require.NoError(t, it.Err(), k)
	}
	require.NoError(t, ss.Err())
	return exact, lines
}

// requireSameLines requires want and got to hold the same series with the
// same lines, reporting the first difference only. If forgotten is not nil,
// a line of got may differ from want's in one way: its counter reset hint
// is unknown where want's is a counter reset or not one. Prometheus's
// querier forgets the hint of the first sample it returns from each block
// or head of a series (its merge of their iterators cannot tell whether
// they are consecutive); *forgotten counts those samples.
func requireSameLines(t *testing.T, what string, wantName string, want map[string][]string, gotName string, got map[string][]string, forgotten *int) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		require.True(t, ok, "%s: series %s of %s missing from %s", what, k, wantName, gotName)
		for i := range min(len(w), len(g)) {
			if forgotten != nil && w[i] != g[i] && hintForgotten(w[i], g[i]) {
				*forgotten++
				continue
			}
			require.Equal(t, w[i], g[i], "%s: series %s, sample %d of %d: %s, then %s", what, k, i, len(w), wantName, gotName)
		}
		require.Len(t, g, len(w), "%s: series %s: %s has %d samples, %s %d", what, k, wantName, len(w), gotName, len(g))
	}
	for k := range got {
		_, ok := want[k]
		require.True(t, ok, "%s: series %s of %s not in %s", what, k, gotName, wantName)
	}
}

// hintForgotten reports whether the sample description got is want with
// its counter reset or not-a-reset hint turned unknown.
func hintForgotten(want, got string) bool {
	for _, hint := range []string{"CounterResetHint:1 ", "CounterResetHint:2 "} {
		if strings.Replace(want, hint, "CounterResetHint:0 ", 1) == got {
			return true
		}
	}
	return false
}

// inRange keeps the model lines (each starting with its time) in [mint,
// maxt], and the series left with any.
func inRange(m map[string][]string, mint, maxt int64) map[string][]string {
	out := map[string][]string{}
	for k, ls := range m {
		for _, l := range ls {
			var ts int64
			_, err := fmt.Sscan(l, &ts)
			if err == nil && ts >= mint && ts <= maxt {
				out[k] = append(out[k], l)
			}
		}
	}
	return out
}

// testPrometheusReadsIsotsdbHistograms writes floats and integer, float,
// custom-bucket and gauge histograms (and series that change type) with
// isotsdb, some compacted into blocks and some left in the WAL, and checks
// that Prometheus's OpenDBReadOnly returns exactly isotsdb's samples,
// bucket for bucket and hint for hint (isotsdb's converted with the
// ToProm conversions), and what was written.
func testPrometheusReadsIsotsdbHistograms(t *testing.T, mx *matrix, snappy bool) {
	variant := "histograms, wal=none"
	if snappy {
		variant = "histograms, wal=snappy"
	}
	dir := t.TempDir()
	const (
		base      = int64(1_700_000_000_000)
		step      = int64(60_000)
		steps     = 480
		moreSteps = 8
		nSeries   = 70
	)
	// Prometheus's read-only head cuts chunks for its default block range
	// (2h); with another range its head chunks, replayed from the same WAL,
	// would end elsewhere, and recoded histogram chunks, whose layout is the
	// union of their samples', would return other (equivalent) layouts.
	opts := isotsdbOptions(snappy)
	opts.MinBlockDuration = 2 * time.Hour
	var written map[string][]string
	if !mx.check(t, directionPromReadsUs, variant, "isotsdb writes (8h, 70 series of 7 kinds)", func(t *testing.T) {
		written = writeIsotsdbHistograms(t, dir, opts, nSeries, base, step, steps, moreSteps)
	}) {
		return
	}

	logger, logs := newLogCapture(slog.LevelWarn)
	ours, err := tsdb.OpenReadOnly(dir, logger, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, ours.Close()) }()
	blocks := ours.Blocks()
	require.GreaterOrEqual(t, len(blocks), 3, "blocks")
	headStart := lastBlockEnd(blocks)
	var histSamples uint64
	for _, b := range blocks {
		histSamples += b.Stats.NumHistogramSamples
	}
	require.Positive(t, histSamples, "no histogram sample in blocks")

	for _, r := range []timeRange{
		{"blocks", math.MinInt64, headStart - 1},
		{"WAL", headStart, math.MaxInt64},
		{"blocks→WAL", base + 50*60_000, headStart + 2*60_000},
		{"all", math.MinInt64, math.MaxInt64},
	} {
		mx.check(t, directionPromReadsUs, variant, r.name+": query", func(t *testing.T) {
			pdb, err := promtsdb.OpenDBReadOnly(dir, "", logger)
			require.NoError(t, err)
			defer func() { require.NoError(t, pdb.Close()) }()
			q, err := pdb.Querier(r.mint, r.maxt)
			require.NoError(t, err)
			defer func() { require.NoError(t, q.Close()) }()

			want := inRange(written, r.mint, r.maxt)
			require.NotEmpty(t, want, "%s selects nothing: the check would be vacuous", r.name)
			oursExact, oursLines := isotsdbAsProm(t, ours, r.mint, r.maxt)
			requireSameLines(t, r.name, "written", want, "isotsdb", oursLines, nil)
			promExact, promLines := readExact(t, q)
			requireSameLines(t, r.name, "written", want, "Prometheus", promLines, nil)
			forgotten := 0
			requireSameLines(t, r.name, "isotsdb", oursExact, "Prometheus", promExact, &forgotten)
			t.Logf("%s: %d series identical; %d histogram samples whose counter reset hint Prometheus's block merge forgot", r.name, len(want), forgotten)
			logs.requireQuiet(t, "isotsdb or Prometheus")
		})
	}
}
