package promstorage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/stretchr/testify/require"

	ichunks "github.com/isotsdb/tsdb/chunks"
)

// fsample is a float sample as Prometheus's chunks.Sample.
type fsample struct {
	t int64
	f float64
}

func (s fsample) T() int64                      { return s.t }
func (s fsample) ST() int64                     { return 0 }
func (s fsample) F() float64                    { return s.f }
func (s fsample) H() *histogram.Histogram       { return nil }
func (s fsample) FH() *histogram.FloatHistogram { return nil }
func (s fsample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s fsample) Copy() chunks.Sample           { return s }

// iterOp is one step of an iterator script: Seek(t) if seek, else Next.
type iterOp struct {
	seek bool
	t    int64
}

func (o iterOp) String() string {
	if o.seek {
		return fmt.Sprintf("Seek(%d)", o.t)
	}
	return "Next"
}

// iterStep is what an iterator reported for one step.
type iterStep struct {
	vt chunkenc.ValueType
	t  int64
	f  float64
}

// runScript applies ops to it and records what it reports.
func runScript(it chunkenc.Iterator, ops []iterOp) []iterStep {
	out := make([]iterStep, len(ops))
	for i, op := range ops {
		var vt chunkenc.ValueType
		if op.seek {
			vt = it.Seek(op.t)
		} else {
			vt = it.Next()
		}
		out[i].vt = vt
		if vt == chunkenc.ValFloat {
			out[i].t, out[i].f = it.At()
		}
	}
	return out
}

func TestIteratorScripts(t *testing.T) {
	// Samples at 10, 20, ..., 100; the selector's range is [25, 75].
	s := newStorage(t)
	ls := labels.FromStrings("__name__", "m")
	var all []sample
	for i := int64(1); i <= 10; i++ {
		all = append(all, sample{i * 10, float64(i)})
	}
	commitSamples(t, s, ls, all...)
	next := iterOp{}
	seek := func(t int64) iterOp { return iterOp{seek: true, t: t} }
	at := func(ts int64) iterStep { return iterStep{chunkenc.ValFloat, ts, float64(ts / 10)} }
	none := iterStep{vt: chunkenc.ValNone}
	cases := []struct {
		name string
		ops  []iterOp
		want []iterStep
		// start, end: the selector's range if not [25, 75]
		start, end int64
	}{
		{"next to the end and past it", []iterOp{next, next, next, next, next, next, next},
			[]iterStep{at(30), at(40), at(50), at(60), at(70), none, none}, 0, 0},
		{"seek before the range starts at its first sample", []iterOp{seek(0), next}, []iterStep{at(30), at(40)}, 0, 0},
		{"seek to an exact time", []iterOp{seek(50), next}, []iterStep{at(50), at(60)}, 0, 0},
		{"seek between samples", []iterOp{seek(41), next}, []iterStep{at(50), at(60)}, 0, 0},
		{"seek to the current sample does not move", []iterOp{seek(45), seek(50), seek(46), next}, []iterStep{at(50), at(50), at(50), at(60)}, 0, 0},
		{"seek never moves backwards", []iterOp{next, next, seek(10), next}, []iterStep{at(30), at(40), at(40), at(50)}, 0, 0},
		{"seek past the range end exhausts", []iterOp{seek(76), next, seek(0)}, []iterStep{none, none, none}, 0, 0},
		{"seek to the last sample in range", []iterOp{seek(70), next, seek(70)}, []iterStep{at(70), none, none}, 0, 0},
		{"range bounds are inclusive", []iterOp{next, seek(60), next, next}, []iterStep{at(30), at(60), at(70), none}, 30, 70},
		{"range of one instant", []iterOp{next, next}, []iterStep{at(40), none}, 40, 40},
		{"seek into a range of one instant", []iterOp{seek(40), next}, []iterStep{at(40), none}, 40, 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := s.Querier(0, 200)
			require.NoError(t, err)
			defer q.Close()
			hints := &storage.SelectHints{Start: 25, End: 75}
			if tc.start != 0 {
				hints.Start, hints.End = tc.start, tc.end
			}
			ss := q.Select(context.Background(), true, hints, labels.MustNewMatcher(labels.MatchEqual, "__name__", "m"))
			require.True(t, ss.Next())
			it := ss.At().Iterator(nil)
			require.Equal(t, tc.want, runScript(it, tc.ops))
			require.NoError(t, it.Err())
			// As in Prometheus, the histogram accessors panic on a float
			// sample.
			if len(tc.want) > 0 && tc.want[0].vt == chunkenc.ValFloat {
				it := ss.At().Iterator(nil)
				require.Equal(t, chunkenc.ValFloat, runScript(it, tc.ops[:1])[0].vt)
				require.Panics(t, func() { it.AtHistogram(nil) })
				require.Panics(t, func() { it.AtFloatHistogram(nil) })
			}
		})
	}
}

// TestIteratorMatchesPrometheus runs random Next/Seek scripts on the
// adapter's iterators and on Prometheus's own list iterator over the same
// samples, clipped the same way, and requires identical answers.
//
// In the layout "blocks" the DB cuts 5-minute blocks, so that most of
// each series is read from blocks and the rest from the head, through the
// merge, and the adapter takes the samples in batches (FloatBatcher).
func TestIteratorMatchesPrometheus(t *testing.T) {
	for _, layout := range []string{"head", "blocks"} {
		t.Run("layout="+layout, func(t *testing.T) { testIteratorMatchesPrometheus(t, layout) })
	}
}

func testIteratorMatchesPrometheus(t *testing.T, layout string) {
	seed := uint64(20261203)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	s := newStorage(t)
	if layout == "blocks" {
		s = newStorageBlocks(t, 5*time.Minute)
	}

	// Series with gaps of varying size, many chunks' worth.
	const nSeries = 8
	var data [nSeries][]sample
	app := s.Appender(context.Background())
	for i := range nSeries {
		ls := labels.FromStrings("__name__", "m", "i", fmt.Sprint(i))
		ts := int64(rng.IntN(1000))
		for range 50 + rng.IntN(400) {
			ts += 1 + int64(rng.IntN(3000))
			smp := sample{ts, rng.NormFloat64()}
			data[i] = append(data[i], smp)
			_, err := app.Append(0, ls, smp.t, smp.f)
			require.NoError(t, err)
		}
	}
	require.NoError(t, app.Commit())
	var maxT int64
	for _, d := range data {
		maxT = max(maxT, d[len(d)-1].t)
	}
	if layout == "blocks" {
		require.NoError(t, s.DB().Compact(context.Background()))
		require.NotEmpty(t, s.DB().Blocks())
	}

	var reuse chunkenc.Iterator
	for round := range 300 {
		i := rng.IntN(nSeries)
		// A time to use as a range bound: often exactly a sample's.
		bound := func(lo, hi int64) int64 {
			if rng.IntN(2) == 0 {
				smp := data[i][rng.IntN(len(data[i]))]
				if smp.t >= lo && smp.t < hi {
					return smp.t
				}
			}
			return lo + rng.Int64N(hi-lo)
		}
		qmint, qmaxt := bound(0, maxT/2), bound(maxT/2, maxT+10)
		var hints *storage.SelectHints
		mint, maxt := qmint, qmaxt
		if rng.IntN(2) == 0 {
			hints = &storage.SelectHints{Start: bound(0, maxT), End: bound(0, maxT+10)}
			mint, maxt = max(mint, hints.Start), min(maxt, hints.End)
		}
		var want []chunks.Sample
		for _, smp := range data[i] {
			if smp.t >= mint && smp.t <= maxt {
				want = append(want, fsample(smp))
			}
		}
		ops := make([]iterOp, 5+rng.IntN(60))
		for j := range ops {
			if rng.IntN(3) == 0 {
				ops[j] = iterOp{seek: true, t: qmint - 100 + rng.Int64N(qmaxt-qmint+200)}
			}
		}

		q, err := s.Querier(qmint, qmaxt)
		require.NoError(t, err)
		ss := q.Select(context.Background(), true, hints, labels.MustNewMatcher(labels.MatchEqual, "i", fmt.Sprint(i)))
		if !ss.Next() {
			require.NoError(t, ss.Err())
			require.Empty(t, want, "round %d: series missing", round)
			require.NoError(t, q.Close())
			continue
		}
		reuse = ss.At().Iterator(reuse) // recycled across rounds
		got := runScript(reuse, ops)
		require.NoError(t, reuse.Err())
		require.False(t, ss.Next())
		require.NoError(t, q.Close())

		exp := runScript(storage.NewListSeriesIterator(chunks.SampleSlice(want)), ops)
		require.Equal(t, exp, got, "round %d: series %d, range [%d, %d], ops %v", round, i, mint, maxt, ops)
	}
}

// TestValueTypesMatchPrometheus pins the one-to-one conversion the
// iterator does from chunks.ValueType to chunkenc.ValueType.
func TestValueTypesMatchPrometheus(t *testing.T) {
	for ours, theirs := range map[ichunks.ValueType]chunkenc.ValueType{
		ichunks.ValNone:           chunkenc.ValNone,
		ichunks.ValFloat:          chunkenc.ValFloat,
		ichunks.ValHistogram:      chunkenc.ValHistogram,
		ichunks.ValFloatHistogram: chunkenc.ValFloatHistogram,
	} {
		require.Equal(t, theirs, chunkenc.ValueType(ours))
		require.Equal(t, theirs.String(), ours.String())
	}
}

// TestIteratorStartTimes: the adapter reports each sample's start time,
// 0 for the floats it takes in batches, over blocks and the head, for a
// series whose stretches of plain floats and floats with start times
// alternate.
func TestIteratorStartTimes(t *testing.T) {
	s := newStorageBlocks(t, 5*time.Minute)
	ls := labels.FromStrings("__name__", "m")
	const n = 600 // 2.5 h at 15 s
	var wantT, wantST []int64
	for i := range n {
		app := s.AppenderV2(context.Background())
		ts, st := int64(i)*15_000, int64(0)
		if i/40%2 == 1 {
			st = ts - 1000
		}
		_, err := app.Append(0, ls, st, ts, float64(i), nil, nil, storage.AOptions{})
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		wantT, wantST = append(wantT, ts), append(wantST, st)
	}
	require.NoError(t, s.DB().Compact(context.Background()))
	require.NotEmpty(t, s.DB().Blocks())
	q, err := s.Querier(0, n*15_000)
	require.NoError(t, err)
	defer q.Close()
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "m"))
	require.True(t, ss.Next())
	var gotT, gotST []int64
	it := ss.At().Iterator(nil)
	for it.Next() != chunkenc.ValNone {
		gotT, gotST = append(gotT, it.AtT()), append(gotST, it.AtST())
	}
	require.NoError(t, it.Err())
	require.Equal(t, wantT, gotT)
	require.Equal(t, wantST, gotST)

	// Seeks past a batch, to samples with and without start times, a few
	// Nexts after each.
	it = ss.At().Iterator(it)
	for target := int64(0); target < n*15_000; target += 7*60_000 + 1 {
		require.Equal(t, chunkenc.ValFloat, it.Seek(target))
		for range 3 {
			i := int(it.AtT() / 15_000)
			require.Equal(t, wantST[i], it.AtST(), "sample %d, after Seek(%d)", i, target)
			require.Equal(t, chunkenc.ValFloat, it.Next())
		}
	}
}
