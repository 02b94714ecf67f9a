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
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	ourlabels "github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// TestPrometheusReadsStartTimes: isotsdb stores floats, integer and float
// histograms with start times (none at first, then one reset every 30
// samples) and compacts them into blocks, in the XOR2, HistogramST and
// FloatHistogramST encodings; Prometheus's OpenDBReadOnly returns every
// sample of the blocks with the start time and value written.
func TestPrometheusReadsStartTimes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := isotsdbOptions(false)
	opts.MinBlockDuration = 2 * time.Hour
	db, err := tsdb.Open(dir, nil, nil, opts)
	require.NoError(t, err)
	const (
		base  = int64(1_700_000_000_000)
		step  = int64(60_000)
		steps = 420 // 7h: blocks to 6h, the rest in the head
	)
	names := []string{"st_float", "st_hist", "st_float_hist"}
	gen := histogramtest.NewGen(41, false, false)
	gen.ResetPct, gen.SchemaPct, gen.StalePct = 0, 0, 0
	want := map[string][]string{}
	for k := range steps {
		ts := base + int64(k)*step
		var st int64
		if k >= 60 {
			st = base + int64(k/30*30)*step - 1
		}
		_, h := gen.Next()
		app := db.Appender(ctx)
		for _, name := range names {
			ls := labels.FromStrings(metricName, name)
			var line string
			switch name {
			case "st_float":
				_, err = app.AppendST(0, toOurLabels(ls), st, ts, float64(k), nil, nil)
				line = fmt.Sprintf("%d st=%d F %#x", ts, st, math.Float64bits(float64(k)))
			case "st_hist":
				_, err = app.AppendST(0, toOurLabels(ls), st, ts, 0, h, nil)
				line = fmt.Sprintf("%d st=%d H %d %#x", ts, st, h.Count, math.Float64bits(h.Sum))
			default:
				fh := h.ToFloat()
				_, err = app.AppendST(0, toOurLabels(ls), st, ts, 0, nil, fh)
				line = fmt.Sprintf("%d st=%d FH %#x %#x", ts, st, math.Float64bits(fh.Count), math.Float64bits(fh.Sum))
			}
			require.NoError(t, err)
			want[ls.String()] = append(want[ls.String()], line)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	blocks := db.Blocks()
	require.NotEmpty(t, blocks)
	headStart := lastBlockEnd(blocks)
	require.NoError(t, db.Close())

	pdb, err := promtsdb.OpenDBReadOnly(dir, "", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pdb.Close()) }()
	q, err := pdb.Querier(math.MinInt64, headStart-1)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	got := map[string][]string{}
	ss := q.Select(ctx, true, nil, labels.MustNewMatcher(labels.MatchRegexp, metricName, "st_.*"))
	var it chunkenc.Iterator
	for ss.Next() {
		k := ss.At().Labels().String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			ps := atSample(vt, it)
			got[k] = append(got[k], fmt.Sprintf("%d st=%d %s", ps.t, it.AtST(), ps.line()[len(fmt.Sprint(ps.t))+1:]))
		}
		require.NoError(t, it.Err())
	}
	require.NoError(t, ss.Err())
	wantBlocks := map[string][]string{}
	for k, lines := range want {
		for _, l := range lines {
			var ts int64
			fmt.Sscan(l, &ts)
			if ts < headStart {
				wantBlocks[k] = append(wantBlocks[k], l)
			}
		}
	}
	require.Len(t, got, len(names))
	t.Logf("%d series, %d samples each from blocks (to %d)", len(got), len(got[`{__name__="st_float"}`]), headStart)
	for k, w := range wantBlocks {
		require.Equal(t, w, got[k], "%s: Prometheus's samples from isotsdb's blocks", k)
	}
}

// TestIsotsdbReadsStartTimes: Prometheus, with start-timestamp storage on
// (XOR2 and the histogram ST encodings), stores floats, integer and float
// histograms with start times and compacts its head into blocks; isotsdb
// returns every sample of the blocks with the start time and value
// written, as Prometheus's own querier does.
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
	const (
		base  = int64(1_700_000_000_000)
		step  = int64(60_000)
		steps = 420
	)
	names := []string{"st_float", "st_hist", "st_float_hist"}
	gen := histogramtest.NewGen(43, false, false)
	gen.ResetPct, gen.SchemaPct, gen.StalePct = 0, 0, 0
	want := map[string][]string{}
	for k := range steps {
		ts := base + int64(k)*step
		var st int64
		if k >= 60 {
			st = base + int64(k/30*30)*step - 1
		}
		_, h := gen.Next()
		app := pdb.AppenderV2(ctx)
		for _, name := range names {
			ls := labels.FromStrings(metricName, name)
			var line string
			switch name {
			case "st_float":
				_, err = app.Append(0, ls, st, ts, float64(k), nil, nil, storage.AOptions{})
				line = fmt.Sprintf("%d st=%d F %#x", ts, st, math.Float64bits(float64(k)))
			case "st_hist":
				_, err = app.Append(0, ls, st, ts, 0, promstorage.ToPromHistogram(h), nil, storage.AOptions{})
				line = fmt.Sprintf("%d st=%d H %d %#x", ts, st, h.Count, math.Float64bits(h.Sum))
			default:
				fh := h.ToFloat()
				_, err = app.Append(0, ls, st, ts, 0, nil, promstorage.ToPromFloatHistogram(fh), storage.AOptions{})
				line = fmt.Sprintf("%d st=%d FH %#x %#x", ts, st, math.Float64bits(fh.Count), math.Float64bits(fh.Sum))
			}
			require.NoError(t, err)
			want[ls.String()] = append(want[ls.String()], line)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, pdb.Compact(ctx))
	var blockEnd int64
	for _, b := range pdb.Blocks() {
		blockEnd = max(blockEnd, b.Meta().MaxTime)
	}
	require.Positive(t, blockEnd, "Prometheus wrote blocks")
	require.NoError(t, pdb.Close())

	wantBlocks := map[string][]string{}
	for k, lines := range want {
		for _, l := range lines {
			var ts int64
			_, err := fmt.Sscan(l, &ts)
			require.NoError(t, err)
			if ts < blockEnd {
				wantBlocks[k] = append(wantBlocks[k], l)
			}
		}
	}
	ours, err := tsdb.OpenReadOnly(dir, nil, isotsdbReaderOptions())
	require.NoError(t, err)
	defer func() { require.NoError(t, ours.Close()) }()
	q, err := ours.Querier(math.MinInt64, blockEnd-1)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	got := map[string][]string{}
	ss := q.Select(ctx, ourlabels.MustNewMatcher(ourlabels.MatchRegexp, metricName, "st_.*"))
	var it chunks.Iterator
	for ss.Next() {
		k := ss.At().Labels().String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			ts, st := it.AtT(), it.AtST()
			var line string
			switch vt {
			case chunks.ValFloat:
				_, v := it.At()
				line = fmt.Sprintf("%d st=%d F %#x", ts, st, math.Float64bits(v))
			case chunks.ValHistogram:
				_, h := it.AtHistogram(nil)
				line = fmt.Sprintf("%d st=%d H %d %#x", ts, st, h.Count, math.Float64bits(h.Sum))
			default:
				_, fh := it.AtFloatHistogram(nil)
				line = fmt.Sprintf("%d st=%d FH %#x %#x", ts, st, math.Float64bits(fh.Count), math.Float64bits(fh.Sum))
			}
			got[k] = append(got[k], line)
		}
		require.NoError(t, it.Err())
	}
	require.NoError(t, ss.Err())
	require.Len(t, got, len(names))
	t.Logf("%d series, %d samples each from Prometheus's blocks (to %d)", len(got), len(got[`{__name__="st_float"}`]), blockEnd)
	for k, w := range wantBlocks {
		require.Equal(t, w, got[k], "%s: isotsdb's samples from Prometheus's blocks", k)
	}
}
