package tsdb

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
)

// listIterator iterates over fixed float samples (strictly increasing
// times) and, if err is set, fails with it after the last one.
type listIterator struct {
	ts  []int64
	vs  []float64
	i   int // index of the current sample; -1 before the first
	err error
	bad bool // failed
}

func newListIterator(ts []int64, vs []float64, err error) *listIterator {
	return &listIterator{ts: ts, vs: vs, i: -1, err: err}
}

func (it *listIterator) end() chunks.ValueType {
	it.i = len(it.ts)
	it.bad = it.err != nil
	return chunks.ValNone
}

func (it *listIterator) Next() chunks.ValueType {
	if it.i+1 >= len(it.ts) {
		return it.end()
	}
	it.i++
	return chunks.ValFloat
}

func (it *listIterator) Seek(t millis) chunks.ValueType {
	if it.i >= len(it.ts) {
		return chunks.ValNone
	}
	it.i = max(it.i, 0)
	for it.i < len(it.ts) && it.ts[it.i] < t {
		it.i++
	}
	if it.i == len(it.ts) {
		return it.end()
	}
	return chunks.ValFloat
}

func (it *listIterator) At() (int64, float64) { return it.ts[it.i], it.vs[it.i] }
func (it *listIterator) AtT() int64           { return it.ts[it.i] }
func (it *listIterator) AtST() int64          { return 0 }
func (it *listIterator) AtHistogram(*histogram.Histogram) (int64, *histogram.Histogram) {
	panic("float")
}
func (it *listIterator) AtFloatHistogram(*histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	panic("float")
}

func (it *listIterator) Err() error {
	if it.bad {
		return it.err
	}
	return nil
}

// TestMergeIteratorModel checks the merge of random sources, disjoint,
// touching or overlapping in time with copies of each other's samples,
// against a model, under random sequences of Next, Seek and NextFloats,
// and with a reused iterator.
func TestMergeIteratorModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var reuse *mergeIterator
	batchedAll := 0
	for round := range 3000 {
		n := 1 + rng.IntN(5)
		type src struct {
			ts []int64
			vs []float64
		}
		srcs := make([]src, n)
		want := map[int64]float64{} // time → value of the earliest source holding it
		start := int64(rng.IntN(50))
		for i := range srcs {
			// Disjoint (in order), or overlapping the earlier ones.
			if rng.IntN(2) == 0 {
				start = int64(rng.IntN(100))
			}
			tt := start
			for range rng.IntN(30) {
				tt += 1 + int64(rng.IntN(4))
				v := float64(i*1000) + float64(tt)
				srcs[i].ts = append(srcs[i].ts, tt)
				srcs[i].vs = append(srcs[i].vs, v)
				if _, ok := want[tt]; !ok {
					want[tt] = v
				}
			}
			start = tt + 1
		}
		wantTs := make([]int64, 0, len(want))
		for tt := range want {
			wantTs = append(wantTs, tt)
		}
		slices.Sort(wantTs)

		its := make([]chunks.Iterator, n)
		for i, s := range srcs {
			if rng.IntN(2) == 0 {
				// A block's iterator, which the merge calls directly.
				its[i] = newTestBlockIterator(t, s.ts, s.vs, 1+rng.IntN(8))
			} else {
				its[i] = newListIterator(s.ts, s.vs, nil)
			}
		}
		var m *mergeIterator
		if reuse != nil && round%2 == 0 {
			m = reuse
			m.reset(its)
		} else {
			m = newMergeIterator(its)
		}
		reuse = m

		// Walk with Next and Seek; the model position is k (index into wantTs).
		k := -1
		var got []string
		var exp []string
		batched := 0
		for step := 0; ; step++ {
			var vt chunks.ValueType
			if k >= 0 && k < len(wantTs) && rng.IntN(3) == 0 {
				// A batch (see TestFloatBatcherMatchesNext), often bounded
				// where another source is still to come.
				bts, bvs := make([]int64, 1+rng.IntN(10)), make([]float64, 10)
				bound := int64(math.MaxInt64)
				if rng.IntN(2) == 0 {
					bound = wantTs[k] + int64(rng.IntN(20))
				}
				nb := m.NextFloats(bts, bvs, bound)
				for j := range nb {
					require.Less(t, k+1+j, len(wantTs), "round %d: batch past the end", round)
					require.LessOrEqual(t, bts[j], bound, "round %d: batch past its bound", round)
					got = append(got, fmt.Sprint(bts[j], bvs[j]))
					exp = append(exp, fmt.Sprint(wantTs[k+1+j], want[wantTs[k+1+j]]))
				}
				if k += nb; nb > 0 {
					require.Equal(t, wantTs[k], m.AtT(), "round %d: not on the batch's last sample", round)
				}
				batched += nb
				continue
			}
			if rng.IntN(4) == 0 {
				target := int64(rng.IntN(140))
				vt = m.Seek(target)
				if k < 0 || k >= len(wantTs) || wantTs[k] < target {
					k = max(k, 0)
					for k < len(wantTs) && wantTs[k] < target {
						k++
					}
				}
			} else {
				vt = m.Next()
				k++
			}
			if k >= len(wantTs) {
				require.Equal(t, chunks.ValNone, vt, "round %d step %d: past the end", round, step)
				require.Equal(t, chunks.ValNone, m.Next(), "round %d: Next after the end", round)
				break
			}
			require.Equal(t, chunks.ValFloat, vt, "round %d step %d", round, step)
			tt, v := m.At()
			got = append(got, fmt.Sprint(tt, v))
			exp = append(exp, fmt.Sprint(wantTs[k], want[wantTs[k]]))
			require.Equal(t, wantTs[k], m.AtT())
		}
		require.Equal(t, exp, got, "round %d", round)
		require.NoError(t, m.Err())
		batchedAll += batched
	}
	require.Greater(t, batchedAll, 1000, "samples taken in batches")
}

// TestMergeIteratorError: a source failing midway stops the merge with its
// error, after a correct prefix of the merge, and it stays stopped.
func TestMergeIteratorError(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		failing int // source that fails after its samples
	}{{"first source", 0}, {"last source", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			var its []chunks.Iterator
			for i := range 3 {
				var err error
				if i == tc.failing {
					err = boom
				}
				base := int64(i * 10)
				its = append(its, newListIterator([]int64{base + 1, base + 2, base + 3}, []float64{1, 2, 3}, err))
			}
			m := newMergeIterator(its)
			var ts []int64
			for m.Next() != chunks.ValNone {
				ts = append(ts, m.AtT())
			}
			require.ErrorIs(t, m.Err(), boom)
			all := []int64{1, 2, 3, 11, 12, 13, 21, 22, 23}
			require.Equal(t, all[:len(ts)], ts, "a prefix of the merge")
			require.Len(t, ts, (tc.failing+1)*3, "stopped at the failing source's end")
			require.Equal(t, chunks.ValNone, m.Next())
			require.Equal(t, chunks.ValNone, m.Seek(0))
		})
	}
}

// newTestBlockIterator returns a block series' iterator over the float
// samples ts, vs, in XOR chunks of at most per samples.
func newTestBlockIterator(t *testing.T, ts []int64, vs []float64, per int) chunks.Iterator {
	s := &blockSeries{b: &Block{dir: "model"}, mint: math.MinInt64, maxt: math.MaxInt64}
	for i := 0; i < len(ts); i += per {
		j := min(i+per, len(ts))
		c := chunks.NewXORChunk()
		app, err := c.Appender()
		require.NoError(t, err)
		for k := i; k < j; k++ {
			app.Append(ts[k], vs[k])
		}
		s.chunks = append(s.chunks, chunkRef{c: c, minTime: ts[i], maxTime: ts[j-1]})
	}
	return s.Iterator(nil)
}

// listSeries is a series over fixed float samples.
type listSeries struct {
	lset labels.Labels
	ts   []int64
	vs   []float64
}

func (s *listSeries) Labels() labels.Labels { return s.lset }
func (s *listSeries) Iterator(chunks.Iterator) chunks.Iterator {
	return newListIterator(s.ts, s.vs, nil)
}

// TestMergeSeriesSetsModel merges random sets (up to five, each sorted by
// labels, a series in any subset of them with disjoint samples) and checks
// the result against a model: every label set once, in order, with the
// samples of all its sources.
func TestMergeSeriesSetsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	for round := range 500 {
		nsets := 1 + rng.IntN(5)
		sets := make([][]Series, nsets)
		want := map[string][]int64{}
		var names []string
		for k := range 12 {
			name := fmt.Sprintf("s%02d", k)
			for i := range sets {
				if rng.IntN(2) == 0 {
					continue
				}
				// Set i holds times i*100 + 1..n: disjoint from the others'.
				s := &listSeries{lset: labels.FromStrings("n", name)}
				for j := range 1 + rng.IntN(4) {
					s.ts = append(s.ts, int64(i*100+j+1))
					s.vs = append(s.vs, float64(j))
				}
				sets[i] = append(sets[i], s)
				if want[name] == nil {
					names = append(names, name)
				}
				want[name] = append(want[name], s.ts...)
			}
		}
		ss := make([]SeriesSet, nsets)
		for i := range sets {
			ss[i] = &listSeriesSet{ss: sets[i]}
		}
		m := mergeSeriesSets(ss)
		var got []string
		for m.Next() {
			s := m.At()
			name := s.Labels().Get("n")
			got = append(got, name)
			var ts []int64
			it := s.Iterator(nil)
			for it.Next() != chunks.ValNone {
				ts = append(ts, it.AtT())
			}
			require.NoError(t, it.Err())
			require.Equal(t, want[name], ts, "round %d: %s", round, name)
		}
		require.NoError(t, m.Err())
		require.Equal(t, names, got, "round %d", round)
	}
}
