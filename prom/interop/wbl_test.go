package interop

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
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

// Late (out-of-order) samples across the two programs: each writes floats
// and native histograms with late samples within its head's range, through
// its WAL and WBL, and the other opens the directory and must return
// exactly the samples the writer returns.

const (
	directionPromReadsUsLate = "Prometheus reads isotsdb (late samples)"
	directionUsReadsPromLate = "isotsdb reads Prometheus (late samples)"
	lateWindow               = 30 * time.Minute
	lateBase                 = int64(1_700_006_400_000) // a multiple of 2h
	lateStep                 = int64(60_000)
)

// lateKinds are the kinds of series of the late workload, by series number
// modulo their count.
var lateKinds = [...]string{"float", "int", "float_hist", "custom"}

// lateWorkload is one series' samples: at step k an in-order sample at
// lateBase + k*lateStep, and every third step (from the 12th on), for
// even series, a late one ten and a half steps back, between two in-order
// samples and within the window.
type lateWorkload struct {
	nSeries int
	sets    []labels.Labels
	gens    []*histogramtest.Gen
	// back is how many steps a late sample lies behind its step's
	// in-order one (plus half a step); window is the out-of-order window.
	back   int
	window time.Duration
	// behind counts (set by writeIsotsdbLate) the late samples written
	// behind the head's range: older than the end of the blocks.
	behind int
}

func newLateWorkload(nSeries int) *lateWorkload {
	w := &lateWorkload{nSeries: nSeries, back: 10, window: lateWindow}
	for i := range nSeries {
		kind := lateKinds[i%len(lateKinds)]
		w.sets = append(w.sets, labels.FromStrings(metricName, "interop_late_"+kind, "i", fmt.Sprint(i)))
		switch kind {
		case "float":
			w.gens = append(w.gens, nil)
		case "custom":
			w.gens = append(w.gens, histogramtest.NewGen(uint64(i), true, false))
		default:
			w.gens = append(w.gens, histogramtest.NewGen(uint64(i), false, false))
		}
	}
	return w
}

// lateSample is a sample of the workload: a float, or a histogram h (as a
// float histogram if float).
type lateSample struct {
	t     int64
	v     float64
	h     *histogram.Histogram
	float bool
}

// samples returns the samples of step k for series i: the in-order one,
// then the late one if any.
func (w *lateWorkload) samples(i, k int) []lateSample {
	times := []int64{lateBase + int64(k)*lateStep}
	if i%2 == 0 && k >= w.back+2 && k%3 == 0 {
		times = append(times, lateBase+int64(k-w.back)*lateStep-lateStep/2)
	}
	out := make([]lateSample, len(times))
	for j, ts := range times {
		s := lateSample{t: ts}
		if g := w.gens[i]; g != nil {
			_, s.h = g.Next()
			s.float = lateKinds[i%len(lateKinds)] == "float_hist"
		} else {
			s.v = float64(i*100_000 + k*10 + j)
		}
		out[j] = s
	}
	return out
}

// writeIsotsdbLate writes steps steps of w with isotsdb (window 30m,
// Prometheus's 2h blocks); with compactAt > 0 it compacts the head after
// that many steps. It returns what isotsdb itself reads back, in the exact
// form of readExact.
func writeIsotsdbLate(t *testing.T, dir string, w *lateWorkload, steps, compactAt int) map[string][]string {
	t.Helper()
	ctx := context.Background()
	o := tsdb.DefaultOptions()
	o.MinBlockDuration = 2 * time.Hour
	o.OutOfOrderTimeWindow = w.window
	o.WALSegmentSize = 64 << 10
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	refs := make([]tsdb.SeriesRef, w.nSeries)
	blocksEnd := int64(math.MinInt64)
	for k := range steps {
		app := db.Appender(ctx)
		for i, ls := range w.sets {
			for _, s := range w.samples(i, k) {
				if s.t < blocksEnd {
					w.behind++
				}
				var err error
				switch {
				case s.h == nil:
					refs[i], err = app.Append(refs[i], toOurLabels(ls), s.t, s.v)
				case s.float:
					refs[i], err = app.AppendHistogram(refs[i], toOurLabels(ls), s.t, nil, s.h.ToFloat())
				default:
					refs[i], err = app.AppendHistogram(refs[i], toOurLabels(ls), s.t, s.h, nil)
				}
				require.NoError(t, err, "append %s at %d", ls, s.t)
			}
		}
		require.NoError(t, app.Commit())
		if k+1 == compactAt {
			require.NoError(t, db.Compact(ctx))
			require.NotEmpty(t, db.Blocks(), "the compaction wrote a block")
			for _, b := range db.Blocks() {
				blocksEnd = max(blocksEnd, b.MaxTime)
			}
		}
	}
	return isotsdbCanon(t, db)
}

// wblSegments returns the number of segment files in dir/wbl.
func wblSegments(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "wbl"))
	require.NoError(t, err, "the writer left a WBL")
	n := 0
	for _, e := range ents {
		if !e.IsDir() {
			n++
		}
	}
	return n
}

// canon describes s by value: its time and type, a float by its bits, a
// histogram by its schema, zero threshold, the bits of its count and sum
// and its non-empty buckets (Prometheus's notation). Bucket layouts
// (empty buckets a chunk's recoding adds) and counter reset hints (which
// out-of-order chunks do not keep) are left out: they are not the data.
func canon(s psample) string {
	switch s.vt {
	case chunkenc.ValFloat:
		return fmt.Sprintf("%d F %#x", s.t, math.Float64bits(s.f))
	case chunkenc.ValHistogram:
		h := s.h
		return fmt.Sprintf("%d H s%d z%g count=%d sum=%#x %s %v", s.t, h.Schema, h.ZeroThreshold, h.Count, math.Float64bits(h.Sum), h, h.CustomValues)
	case chunkenc.ValFloatHistogram:
		fh := s.fh
		return fmt.Sprintf("%d FH s%d z%g count=%#x sum=%#x %s %v", s.t, fh.Schema, fh.ZeroThreshold, math.Float64bits(fh.Count), math.Float64bits(fh.Sum), fh, fh.CustomValues)
	}
	return fmt.Sprintf("value type %v", s.vt)
}

// readCanon reads every series of q: the canon of each sample, per labels
// String.
func readCanon(t *testing.T, q storage.Querier) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, metricName, ".+"))
	var it chunkenc.Iterator
	for ss.Next() {
		k := ss.At().Labels().String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			out[k] = append(out[k], canon(atSample(vt, it)))
		}
		require.NoError(t, it.Err(), k)
	}
	require.NoError(t, ss.Err())
	return out
}

// isotsdbCanon is readCanon for isotsdb's own Querier, its histograms
// converted with promstorage.
func isotsdbCanon(t *testing.T, db *tsdb.DB) map[string][]string {
	t.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	out := map[string][]string{}
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
			default:
				var fh *histogram.FloatHistogram
				ps.t, fh = it.AtFloatHistogram(nil)
				ps.fh = promstorage.ToPromFloatHistogram(fh)
			}
			out[k] = append(out[k], canon(ps))
		}
		require.NoError(t, it.Err(), k)
	}
	require.NoError(t, ss.Err())
	return out
}

// requireSameExact requires want and got to hold the same series with the
// same samples (by canon).
func requireSameExact(t *testing.T, what, wantName string, want map[string][]string, gotName string, got map[string][]string) {
	t.Helper()
	requireSameLines(t, what, wantName, want, gotName, got, nil)
	n := 0
	for _, s := range want {
		n += len(s)
	}
	require.Positive(t, n)
	t.Logf("%s: %d series, %d samples identical", what, len(want), n)
}

// TestInteropWBL runs the late-sample checks and logs their matrix.
func TestInteropWBL(t *testing.T) {
	mx := &matrix{}
	t.Cleanup(func() { t.Logf("late-sample interop matrix:\n%s", mx) })
	for _, tc := range []struct {
		variant   string
		compactAt int
		back      int
		window    time.Duration
	}{
		{"head only", 0, 10, lateWindow},
		{"after a head compaction", 240, 10, lateWindow},
		// Late samples 125 minutes back: after the compaction some fall
		// behind the head's range, into the block's.
		{"behind the head's range (window 3h)", 240, 125, 3 * time.Hour},
	} {
		t.Run("prometheus-reads-isotsdb/"+tc.variant, func(t *testing.T) {
			w := newLateWorkload(16)
			w.back, w.window = tc.back, tc.window
			testPrometheusReadsIsotsdbLate(t, mx, tc.variant, w, tc.compactAt)
			if tc.back > 60 {
				require.Positive(t, w.behind, "late samples behind the head's range were written")
			}
		})
	}
	t.Run("isotsdb-reads-prometheus", func(t *testing.T) {
		testIsotsdbReadsPrometheusLate(t, mx)
	})
}

// testPrometheusReadsIsotsdbLate: isotsdb writes 100 minutes (or, with
// compactAt, 5 hours and compacts after compactAt steps) of floats and
// histograms with late samples; Prometheus's DB, opened read-write with
// an out-of-order window, replays the WAL and the WBL and returns every
// sample isotsdb returns.
func testPrometheusReadsIsotsdbLate(t *testing.T, mx *matrix, variant string, w *lateWorkload, compactAt int) {
	dir := t.TempDir()
	steps := 100
	if compactAt > 0 {
		steps = 300
	}
	var want map[string][]string
	if !mx.check(t, directionPromReadsUsLate, variant, fmt.Sprintf("isotsdb writes (window %v)", w.window), func(t *testing.T) {
		want = writeIsotsdbLate(t, dir, w, steps, compactAt)
		require.Positive(t, wblSegments(t, dir))
	}) {
		return
	}
	mx.check(t, directionPromReadsUsLate, variant, "Prometheus opens (WAL+WBL) and queries", func(t *testing.T) {
		logger, logs := newLogCapture(slog.LevelWarn)
		opts := promtsdb.DefaultOptions()
		opts.OutOfOrderTimeWindow = w.window.Milliseconds()
		opts.NoLockfile = true // isotsdb's lock file stays on disk after Close
		pdb, err := promtsdb.Open(dir, logger, nil, opts, nil)
		require.NoError(t, err)
		defer func() { require.NoError(t, pdb.Close()) }()
		pdb.DisableCompactions()
		q, err := pdb.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		defer func() { require.NoError(t, q.Close()) }()
		got := readCanon(t, q)
		requireSameExact(t, "all", "isotsdb", want, "Prometheus", got)
		logs.requireQuiet(t, "Prometheus")
	})
}

// writePrometheusLate writes steps steps of w with Prometheus's DB (window
// 30m, no compaction) and returns what Prometheus reads back.
func writePrometheusLate(t *testing.T, dir string, w *lateWorkload, steps int) map[string][]string {
	t.Helper()
	ctx := context.Background()
	logger, logs := newLogCapture(slog.LevelWarn)
	opts := promtsdb.DefaultOptions()
	opts.OutOfOrderTimeWindow = lateWindow.Milliseconds()
	opts.WALSegmentSize = 64 << 10
	db, err := promtsdb.Open(dir, logger, nil, opts, nil)
	require.NoError(t, err)
	db.DisableCompactions()
	refs := make([]storage.SeriesRef, w.nSeries)
	for k := range steps {
		app := db.Appender(ctx)
		for i, ls := range w.sets {
			for _, s := range w.samples(i, k) {
				var err error
				switch {
				case s.h == nil:
					refs[i], err = app.Append(refs[i], ls, s.t, s.v)
				case s.float:
					refs[i], err = app.AppendHistogram(refs[i], ls, s.t, nil, promstorage.ToPromFloatHistogram(s.h.ToFloat()))
				default:
					refs[i], err = app.AppendHistogram(refs[i], ls, s.t, promstorage.ToPromHistogram(s.h), nil)
				}
				require.NoError(t, err, "append %s at %d", ls, s.t)
			}
		}
		require.NoError(t, app.Commit())
	}
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	exact := readCanon(t, q)
	require.NoError(t, q.Close())
	require.NoError(t, db.Close())
	logs.requireQuiet(t, "Prometheus (writing)")
	return exact
}

// testIsotsdbReadsPrometheusLate: Prometheus writes 100 minutes of floats
// and histograms with late samples through its WAL and WBL; isotsdb opens
// the directory with its window off and on and returns every sample
// Prometheus returned.
func testIsotsdbReadsPrometheusLate(t *testing.T, mx *matrix) {
	dir := t.TempDir()
	w := newLateWorkload(16)
	var want map[string][]string
	if !mx.check(t, directionUsReadsPromLate, "head only", "Prometheus writes (window 30m)", func(t *testing.T) {
		want = writePrometheusLate(t, dir, w, 100)
		require.Positive(t, wblSegments(t, dir))
	}) {
		return
	}
	for _, window := range []time.Duration{0, lateWindow} {
		mx.check(t, directionUsReadsPromLate, "head only", fmt.Sprintf("isotsdb opens (window %v) and queries", window), func(t *testing.T) {
			o := isotsdbReaderOptions()
			o.OutOfOrderTimeWindow = window
			logger, logs := newLogCapture(slog.LevelWarn)
			db, err := tsdb.Open(dir, logger, nil, o)
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			got := isotsdbCanon(t, db)
			requireSameExact(t, "all", "Prometheus", want, "isotsdb", got)
			logs.requireQuiet(t, "isotsdb")
		})
	}
}
