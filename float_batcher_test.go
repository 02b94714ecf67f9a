package tsdb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// batchedSample is a sample as an iterator reports it.
type batchedSample struct {
	vt    chunks.ValueType
	t, st int64
	v     float64
}

// TestFloatBatcherMatchesNext: the query iterators' NextFloats, mixed at
// random with Next and Seek, hand out the samples Next does, in order,
// only floats without start time up to the bound asked for, leave the
// iterator on the last one, and do not move when they return 0; over the
// head (XOR chunks read in place, XOR2 chunks with start times, histograms
// between floats, deletions), the blocks and the merge of both. The
// batches must take most samples of a plain series, so that the test does
// not pass by batching nothing.
func TestFloatBatcherMatchesNext(t *testing.T) {
	const hour = int64(3600_000)
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	plain := func(app Appender, l labels.Labels, i int, ts int64) error {
		_, err := app.Append(0, l, ts, float64(i))
		return err
	}
	series := []struct {
		name   string
		append func(app Appender, l labels.Labels, i int, ts int64) error
	}{
		{"plain", plain},
		{"deleted", plain},
		{"start_times", func(app Appender, l labels.Labels, i int, ts int64) error {
			_, err := app.AppendST(0, l, ts-1000-int64(i%7), ts, float64(i)*1.5, nil, nil)
			return err
		}},
		{"mixed", func(app Appender, l labels.Labels, i int, ts int64) error {
			var err error
			switch i / 50 % 3 {
			case 0:
				_, err = app.Append(0, l, ts, float64(i))
			case 1:
				_, err = app.AppendHistogram(0, l, ts, crashHistogram(i), nil)
			default:
				_, err = app.AppendST(0, l, ts-500, ts, -float64(i), nil, nil)
			}
			return err
		}},
	}
	// Five hours at 15 s: two 2 h blocks and the head.
	for i := 0; i < 5*3600/15; i++ {
		app := db.Appender(ctx)
		for _, s := range series {
			require.NoError(t, s.append(app, labels.FromStrings("s", s.name), i, int64(i)*15_000))
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())
	// Deleted: a stretch of a block and one of the head.
	del := labels.MustNewMatcher(labels.MatchEqual, "s", "deleted")
	require.NoError(t, db.Delete(ctx, 30*60_000, 40*60_000, del))
	require.NoError(t, db.Delete(ctx, 4*hour+10*60_000, 4*hour+12*60_000, del))

	rng := rand.New(rand.NewPCG(7, 7))
	for _, r := range []struct {
		name       string
		mint, maxt int64
	}{
		{"block", 10 * 60_000, hour},        // one block
		{"head", 4*hour + 60_000, 5 * hour}, // the head
		{"all", math.MinInt64, math.MaxInt64},
	} {
		for _, s := range series {
			t.Run(fmt.Sprintf("%s/%s", r.name, s.name), func(t *testing.T) {
				q, err := db.Querier(r.mint, r.maxt)
				require.NoError(t, err)
				defer q.Close()
				read := func() chunks.Iterator {
					ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, "s", s.name))
					require.True(t, ss.Next())
					return ss.At().Iterator(nil)
				}
				at := func(it chunks.Iterator, vt chunks.ValueType) batchedSample {
					smp := batchedSample{vt: vt, t: it.AtT(), st: it.AtST()}
					if vt == chunks.ValFloat {
						_, smp.v = it.At()
					}
					return smp
				}
				var all []batchedSample
				it := read()
				for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
					all = append(all, at(it, vt))
				}
				require.NoError(t, it.Err())
				require.NotEmpty(t, all)

				for round := range 20 {
					it := read()
					fb, ok := it.(chunks.FloatBatcher)
					require.True(t, ok, "%T is no chunks.FloatBatcher", it)
					p, batched := -1, 0 // position in all
					ts, vs := make([]int64, 64), make([]float64, 64)
					for p < len(all) {
						switch op := rng.IntN(8); {
						case op < 5:
							// A batch, bounded by a time at, just before
							// or after a sample's, or none.
							k := 1 + rng.IntN(len(ts))
							maxt := int64(math.MaxInt64)
							if rng.IntN(3) == 0 {
								maxt = all[min(p+1+rng.IntN(80), len(all)-1)].t + int64(rng.IntN(3)) - 1
							}
							var before batchedSample
							if p >= 0 {
								before = at(it, all[p].vt)
							}
							n := fb.NextFloats(ts[:k], vs, maxt)
							most := 0
							for p+1+most < len(all) && most < k {
								w := all[p+1+most]
								if w.vt != chunks.ValFloat || w.st != 0 || w.t > maxt {
									break
								}
								most++
							}
							require.LessOrEqual(t, n, most, "round %d: batch of %d up to %d after sample %d", round, k, maxt, p)
							for j := range n {
								require.Equal(t, all[p+1+j], batchedSample{vt: chunks.ValFloat, t: ts[j], v: vs[j]}, "round %d: batch sample %d", round, j)
							}
							p += n
							batched += n
							if n == 0 {
								if p >= 0 {
									require.Equal(t, before, at(it, all[p].vt), "round %d: an empty batch moved the iterator", round)
								}
							} else {
								require.Equal(t, all[p], at(it, chunks.ValFloat), "round %d: not on the batch's last sample", round)
							}
						case op < 7 || p < 0:
							// Next (the first move, if not a batch).
							p++
							vt := it.Next()
							if p == len(all) {
								require.Equal(t, chunks.ValNone, vt)
								break
							}
							require.Equal(t, all[p], at(it, vt), "round %d: Next to sample %d", round, p)
						default:
							// Seek a little ahead, sometimes to the current
							// sample or before it.
							target := all[p].t - 15_000 + rng.Int64N(5*60_000)
							vt := it.Seek(target)
							for p < len(all) && all[p].t < target {
								p++
							}
							if p == len(all) {
								require.Equal(t, chunks.ValNone, vt)
								break
							}
							require.Equal(t, all[p], at(it, vt), "round %d: Seek(%d)", round, target)
						}
					}
					require.NoError(t, it.Err())
					if s.name == "plain" {
						require.Greater(t, batched, len(all)/4, "round %d: few samples came in batches", round)
					}
				}
			})
		}
	}
}
