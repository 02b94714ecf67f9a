package tsdb

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/tombstones"
)

// blockModelSample is a sample of the block iterator model: its time, type and
// (for a float) value.
type blockModelSample struct {
	t  int64
	vt chunks.ValueType
	v  float64
}

// randomBlockSeries returns a blockSeries of random consecutive chunks,
// XOR (decoded whole by the iterator) or integer histogram (read through
// the chunk iterator), with random range and deleted intervals, and the
// samples it must yield in order.
func randomBlockSeries(t *testing.T, rng *rand.Rand) (*blockSeries, []blockModelSample) {
	s := &blockSeries{b: &Block{dir: "model"}}
	var all []blockModelSample
	tt := int64(rng.IntN(20))
	for range rng.IntN(6) {
		n := 1 + rng.IntN(40)
		ref := chunkRef{minTime: tt + 1}
		if rng.IntN(4) == 0 {
			c := chunks.NewHistogramChunk()
			app, err := c.Appender()
			require.NoError(t, err)
			for range n {
				tt += 1 + int64(rng.IntN(3))
				_, nc, _, err := app.AppendHistogram(tt, testHistogram(1))
				require.NoError(t, err)
				require.True(t, nc == nil || nc == c, "no new chunk for the same histogram")
				all = append(all, blockModelSample{t: tt, vt: chunks.ValHistogram})
			}
			ref.c = c
		} else {
			c := chunks.NewXORChunk()
			app, err := c.Appender()
			require.NoError(t, err)
			for range n {
				tt += 1 + int64(rng.IntN(3))
				v := float64(rng.IntN(5)) + float64(tt)/8
				app.Append(tt, v)
				all = append(all, blockModelSample{t: tt, vt: chunks.ValFloat, v: v})
			}
			ref.c = c
		}
		ref.minTime, ref.maxTime = all[len(all)-n].t, tt
		s.chunks = append(s.chunks, ref)
	}
	s.mint, s.maxt = int64(rng.IntN(60)), int64(rng.IntN(400))
	for range rng.IntN(4) {
		a := int64(rng.IntN(300))
		s.deleted = s.deleted.Add(tombstones.Interval{Mint: a, Maxt: a + int64(rng.IntN(20))})
	}
	var want []blockModelSample
	for _, x := range all {
		if x.t >= s.mint && x.t <= s.maxt && !s.deleted.Contains(x.t) {
			want = append(want, x)
		}
	}
	return s, want
}

// TestBlockIteratorModel walks random block series with random Next and
// Seek calls, on fresh and reused iterators, and compares every position
// with the model's.
func TestBlockIteratorModel(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	var reuse chunks.Iterator
	for round := range 3000 {
		s, want := randomBlockSeries(t, rng)
		it := s.Iterator(reuse)
		if round%2 == 0 {
			reuse = it
		}
		k := -1 // the model's position in want
		for step := 0; ; step++ {
			var vt chunks.ValueType
			if rng.IntN(4) == 0 {
				target := int64(rng.IntN(450))
				vt = it.Seek(target)
				if k < 0 || k >= len(want) || want[k].t < target {
					k = max(k, 0)
					for k < len(want) && want[k].t < target {
						k++
					}
				}
			} else {
				vt = it.Next()
				k = min(k+1, len(want))
			}
			where := fmt.Sprintf("seed %d round %d step %d", seed, round, step)
			if k >= len(want) {
				require.Equal(t, chunks.ValNone, vt, where+": past the end")
				require.Equal(t, chunks.ValNone, it.Next(), where+": Next after the end")
				break
			}
			w := want[k]
			require.Equal(t, w.vt, vt, where)
			require.Equal(t, w.t, it.AtT(), where)
			switch vt {
			case chunks.ValFloat:
				gt, gv := it.At()
				require.Equal(t, w.t, gt, where)
				require.Equal(t, w.v, gv, where)
				require.Zero(t, it.AtST(), where)
				require.Panics(t, func() { it.AtHistogram(nil) }, where)
			case chunks.ValHistogram:
				gt, h := it.AtHistogram(nil)
				require.Equal(t, w.t, gt, where)
				require.NotNil(t, h, where)
				require.Panics(t, func() { it.At() }, where)
			}
		}
		require.NoError(t, it.Err())
	}
}

// TestBlockIteratorCorruptChunk: a decoded chunk that ends in corruption
// yields the samples before it, then stops with a corruption error.
func TestBlockIteratorCorruptChunk(t *testing.T) {
	c := chunks.NewXORChunk()
	app, err := c.Appender()
	require.NoError(t, err)
	for i := range 50 {
		app.Append(int64(i+1)*15000, float64(i)*1.37)
	}
	b := c.Bytes()
	cut, err := chunks.FromData(chunks.EncXOR, b[:len(b)/2])
	require.NoError(t, err)
	s := &blockSeries{b: &Block{dir: "model"}, chunks: []chunkRef{{c: cut, minTime: 15000, maxTime: 50 * 15000}}, maxt: 1 << 62}
	it := s.Iterator(nil)
	n := 0
	for it.Next() == chunks.ValFloat {
		tt, _ := it.At()
		require.Equal(t, int64(n+1)*15000, tt)
		n++
	}
	require.Positive(t, n)
	require.Less(t, n, 50)
	require.ErrorIs(t, it.Err(), ErrCorrupt)
	require.Equal(t, chunks.ValNone, it.Next())
	require.Equal(t, chunks.ValNone, it.Seek(0))
}
