package tsdb

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
)

// TestHeadIteratorWalkModel walks head series with random sequences of
// Next and Seek over random ranges, some series with deleted intervals
// and some with samples committed after the querier was created (hidden
// from it), and compares every sample with a model. Chunks of 5 samples
// make most ranges start and end inside a chunk, where the iterator skips
// the chunk's leading samples with the chunk iterator's Seek.
func TestHeadIteratorWalkModel(t *testing.T) {
	o := DefaultOptions()
	o.SamplesPerChunk = 5
	db, _ := openTestDB(t, o)
	rng := rand.New(rand.NewPCG(17, 19))
	const nSeries = 8
	model := make([][]sample, nSeries)
	lset := func(i int) labels.Labels { return labels.FromStrings(labels.MetricName, "w", "s", fmt.Sprint(i)) }
	write := func(from, to int64) {
		app := db.Appender(ctx)
		for i := range nSeries {
			for ts := from; ts < to; ts += 1 + int64(rng.IntN(3)) {
				v := float64(rng.IntN(1000))
				_, err := app.Append(0, lset(i), ts, v)
				require.NoError(t, err)
				model[i] = append(model[i], sample{ts, v})
			}
		}
		require.NoError(t, app.Commit())
	}
	for k := range 40 {
		write(int64(k*10), int64(k*10+10))
	}
	// Deletions in half of the series.
	deleted := make([][2]int64, nSeries)
	for i := 0; i < nSeries; i += 2 {
		lo := int64(rng.IntN(400))
		deleted[i] = [2]int64{lo, lo + int64(rng.IntN(40))}
		require.NoError(t, db.Delete(ctx, deleted[i][0], deleted[i][1], labels.MustNewMatcher(labels.MatchEqual, "s", fmt.Sprint(i))))
	}
	visible := func(i int, s sample) bool {
		return i%2 != 0 || s.T < deleted[i][0] || s.T > deleted[i][1]
	}
	written := int64(400) // samples before this were committed
	for round := range 300 {
		mint := int64(rng.IntN(int(written)+20)) - 10
		maxt := mint + int64(rng.IntN(200))
		q, err := db.Querier(mint, maxt)
		require.NoError(t, err)
		before := written
		if round%3 == 0 {
			write(written, written+5) // committed after q: hidden from it
			written += 10
		}
		ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "w"))
		for ss.Next() {
			var i int
			_, err := fmt.Sscan(ss.At().Labels().Get("s"), &i)
			require.NoError(t, err)
			var want []sample
			for _, s := range model[i] {
				if s.T >= mint && s.T <= maxt && s.T < before && visible(i, s) {
					want = append(want, s)
				}
			}
			it := ss.At().Iterator(nil)
			k := -1 // position in want
			for step := 0; ; step++ {
				var vt chunks.ValueType
				if rng.IntN(3) == 0 {
					target := mint + int64(rng.IntN(int(maxt-mint)+20)) - 10
					vt = it.Seek(target)
					if k < 0 || k >= len(want) || want[k].T < target {
						k = max(k, 0)
						for k < len(want) && want[k].T < target {
							k++
						}
					}
				} else {
					vt = it.Next()
					k++
				}
				if k >= len(want) {
					require.Equal(t, chunks.ValNone, vt, "round %d series %d step %d: past the end", round, i, step)
					break
				}
				require.Equal(t, chunks.ValFloat, vt, "round %d series %d step %d [%d,%d]: want %v", round, i, step, mint, maxt, want[k])
				ts, v := it.At()
				require.Equal(t, want[k], sample{ts, v}, "round %d series %d step %d [%d,%d]", round, i, step, mint, maxt)
			}
			require.NoError(t, it.Err())
		}
		require.NoError(t, ss.Err())
		require.NoError(t, q.Close())
	}
}
