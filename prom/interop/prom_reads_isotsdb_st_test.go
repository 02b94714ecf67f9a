package interop

import (
	"context"
	"fmt"
	"math"
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
	ourlabels "github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// The start-time workload: three series, a float, an integer histogram and
// a float histogram one, 7 h of samples a minute apart, with no start time
// for the first hour and then one reset every 30 samples.
const (
	stBase  = int64(1_700_000_000_000)
	stStep  = int64(60_000)
	stSteps = 420
)

// stSample is one sample of the start-time workload: the float v, or h, or
// fh.
type stSample struct {
	st, t int64
	v     float64
	h     *histogram.Histogram
	fh    *histogram.FloatHistogram
}

// line describes s by value, the form both directions compare.
func (s stSample) line() string {
	switch {
	case s.h != nil:
		return fmt.Sprintf("%d st=%d H %d %#x", s.t, s.st, s.h.Count, math.Float64bits(s.h.Sum))
	case s.fh != nil:
		return fmt.Sprintf("%d st=%d FH %#x %#x", s.t, s.st, math.Float64bits(s.fh.Count), math.Float64bits(s.fh.Sum))
	}
	return fmt.Sprintf("%d st=%d F %#x", s.t, s.st, math.Float64bits(s.v))
}

// writeSTWorkload calls add for every sample of the workload, one commit
// (begin, then add for each series, then commit) per minute, and returns
// the samples' lines by series.
func writeSTWorkload(t *testing.T, seed uint64, begin func(), add func(ls labels.Labels, s stSample) error, commit func() error) map[string][]string {
	t.Helper()
	gen := histogramtest.NewGen(seed, false, false)
	gen.ResetPct, gen.SchemaPct, gen.StalePct = 0, 0, 0
	want := map[string][]string{}
	for k := range stSteps {
		s := stSample{t: stBase + int64(k)*stStep}
		if k >= 60 {
			s.st = stBase + int64(k/30*30)*stStep - 1
		}
		_, h := gen.Next()
		begin()
		for _, name := range []string{"st_float", "st_hist", "st_float_hist"} {
			ls := labels.FromStrings(metricName, name)
			s := s
			switch name {
			case "st_float":
				s.v = float64(k)
			case "st_hist":
				s.h = h
			default:
				s.fh = h.ToFloat()
			}
			require.NoError(t, add(ls, s))
			want[ls.String()] = append(want[ls.String()], s.line())
		}
		require.NoError(t, commit())
	}
	return want
}

// TestPrometheusReadsStartTimes: isotsdb stores the start-time workload
// and compacts it into blocks, in the XOR2, HistogramST and
// FloatHistogramST encodings; Prometheus's OpenDBReadOnly returns every
// sample of the blocks with the start time and value written.
func TestPrometheusReadsStartTimes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := isotsdbOptions(false)
	opts.MinBlockDuration = 2 * time.Hour
	db, err := tsdb.Open(dir, nil, nil, opts)
	require.NoError(t, err)
	var app tsdb.Appender
	all := writeSTWorkload(t, 41,
		func() { app = db.Appender(ctx) },
		func(ls labels.Labels, s stSample) error {
			_, err := app.AppendST(0, toOurLabels(ls), s.st, s.t, s.v, s.h, s.fh)
			return err
		},
		func() error { return app.Commit() })
	require.NoError(t, db.Compact(ctx))
	blocks := db.Blocks()
	require.NotEmpty(t, blocks)
	end := lastBlockEnd(blocks)
	require.NoError(t, db.Close())

	pdb, err := promtsdb.OpenDBReadOnly(dir, "", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pdb.Close()) }()
	q, err := pdb.Querier(math.MinInt64, end-1)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	got := map[string][]string{}
	ss := q.Select(ctx, true, nil, labels.MustNewMatcher(labels.MatchRegexp, metricName, "st_.*"))
	var it chunkenc.Iterator
	for ss.Next() {
		k := ss.At().Labels().String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			s := stSample{st: it.AtST()}
			switch vt {
			case chunkenc.ValFloat:
				s.t, s.v = it.At()
			case chunkenc.ValHistogram:
				ts, ph := it.AtHistogram(nil)
				s.t, s.h = ts, promstorage.FromPromHistogram(ph)
			default:
				ts, pfh := it.AtFloatHistogram(nil)
				s.t, s.fh = ts, promstorage.FromPromFloatHistogram(pfh)
			}
			got[k] = append(got[k], s.line())
		}
		require.NoError(t, it.Err())
	}
	require.NoError(t, ss.Err())
	requireSameSTLines(t, "Prometheus reading isotsdb's blocks", inRange(all, math.MinInt64, end-1), got)
}

// TestIsotsdbReadsStartTimes: Prometheus, with start-timestamp storage on
// (XOR2 and the histogram ST encodings), stores the start-time workload
// and compacts its head into blocks; isotsdb returns every sample of the
// blocks with the start time and value written.
func TestIsotsdbReadsStartTimes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := promtsdb.DefaultOptions()
	opts.FloatChunkEncoding = chunkenc.EncXOR2
	opts.EnableSTStorage = true
	opts.EnableHistogramSTEncoding = true
	pdb, err := promtsdb.Open(dir, nil, nil, opts, nil)
	require.NoError(t, err)
	pdb.DisableCompactions()
	var app storage.AppenderV2
	all := writeSTWorkload(t, 43,
		func() { app = pdb.AppenderV2(ctx) },
		func(ls labels.Labels, s stSample) error {
			_, err := app.Append(0, ls, s.st, s.t, s.v, promstorage.ToPromHistogram(s.h), promstorage.ToPromFloatHistogram(s.fh), storage.AOptions{})
			return err
		},
		func() error { return app.Commit() })
	require.NoError(t, pdb.Compact(ctx))
	var end int64
	for _, b := range pdb.Blocks() {
		end = max(end, b.Meta().MaxTime)
	}
	require.Positive(t, end, "Prometheus wrote blocks")
	require.NoError(t, pdb.Close())

	ours, err := tsdb.OpenReadOnly(dir, nil, isotsdbReaderOptions())
	require.NoError(t, err)
	defer func() { require.NoError(t, ours.Close()) }()
	q, err := ours.Querier(math.MinInt64, end-1)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	got := map[string][]string{}
	ss := q.Select(ctx, ourlabels.MustNewMatcher(ourlabels.MatchRegexp, metricName, "st_.*"))
	var it chunks.Iterator
	for ss.Next() {
		k := ss.At().Labels().String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			s := stSample{t: it.AtT(), st: it.AtST()}
			switch vt {
			case chunks.ValFloat:
				_, s.v = it.At()
			case chunks.ValHistogram:
				_, s.h = it.AtHistogram(nil)
			default:
				_, s.fh = it.AtFloatHistogram(nil)
			}
			got[k] = append(got[k], s.line())
		}
		require.NoError(t, it.Err())
	}
	require.NoError(t, ss.Err())
	requireSameSTLines(t, "isotsdb reading Prometheus's blocks", inRange(all, math.MinInt64, end-1), got)
}

// requireSameSTLines compares the workload's lines in blocks with what a
// reader returned: the three series, each sample's time, start time and
// value.
func requireSameSTLines(t *testing.T, what string, want, got map[string][]string) {
	t.Helper()
	require.Len(t, got, 3, what)
	for k, w := range want {
		require.NotEmpty(t, w, "%s: %s has no sample in blocks: the check would be vacuous", what, k)
		require.Equal(t, w, got[k], "%s: %s", what, k)
	}
	t.Logf("%s: 3 series, %d samples each, identical", what, len(want[`{__name__="st_float"}`]))
}
