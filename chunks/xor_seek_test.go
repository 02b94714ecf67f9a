package chunks

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestXORSeekPoints checks that a snapshot with seek points (SnapshotFrom)
// reads exactly what a plain snapshot reads: random chunks, snapshots after
// every append, Seek to random times (before, at, between and after
// samples, below mint too), then Next to the end. It also checks that the
// points are used: a Seek past one resumes there.
func TestXORSeekPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	used := 0
	for round := range 200 {
		c := NewXORChunk()
		a, err := c.XORAppender()
		require.NoError(t, err)
		var ts []int64
		ts0 := rng.Int64N(1e6) - 5e5
		v := rng.Float64()
		total := 100 + rng.IntN(200)
		for n := range total {
			switch {
			case round%5 == 0 && n%7 == 3:
				ts0 += 1 << 33 // a delta too large for a point
			case round%3 == 0:
				ts0 += 1 + rng.Int64N(30000)
			default:
				ts0 += 15000 + rng.Int64N(3) - 1
			}
			switch k := rng.IntN(4); {
			case round%7 == 0 && n < 40:
				// No value change yet: no window (noLeading) at the first point.
			case k == 0:
				v = rng.NormFloat64() * 1e6
			case k == 1:
				v += 1
			case k == 2:
				v = math.Float64frombits(rng.Uint64())
			}
			a.Append(ts0, v)
			ts = append(ts, ts0)
			if rng.IntN(6) != 0 && n != total-1 {
				continue
			}
			for range 4 {
				mint := ts[rng.IntN(len(ts))] + rng.Int64N(3) - 1
				if rng.IntN(8) == 0 {
					mint = ts[len(ts)-1] + 1000
				}
				seek := mint + rng.Int64N(60000) - 10000
				plain, from := c.Snapshot(), c.SnapshotFrom(a, mint)
				want, got := plain.Iterator(nil), from.Iterator(nil)
				wvt, gvt := want.Seek(seek), got.Seek(seek)
				require.Equal(t, wvt, gvt)
				if from.from.samples() != 0 && from.from.t < seek {
					used++
				}
				for wvt != ValNone {
					wt, wv := want.At()
					gt, gv := got.At()
					require.Equal(t, wt, gt)
					require.Equal(t, math.Float64bits(wv), math.Float64bits(gv))
					wvt, gvt = want.Next(), got.Next()
					require.Equal(t, wvt, gvt)
				}
				require.NoError(t, got.Err())
			}
		}
	}
	require.Greater(t, used, 1000, "seeks resumed at a point")
}

// TestXORSeekPointOtherChunk checks that SnapshotFrom ignores an appender
// of another chunk, and that points cost nothing until a read.
func TestXORSeekPointOtherChunk(t *testing.T) {
	c1, c2 := NewXORChunk(), NewXORChunk()
	a1, err := c1.XORAppender()
	require.NoError(t, err)
	a2, err := c2.XORAppender()
	require.NoError(t, err)
	for i := range 100 {
		a1.Append(int64(i)*1000, float64(i))
		a2.Append(int64(i)*10, float64(-i))
	}
	s := c2.SnapshotFrom(a1, 90_000)
	require.Zero(t, s.from.samples())
	require.Nil(t, a1.seek, "an appender whose chunk was never read keeps no points")
	c1.SnapshotFrom(a1, 0)
	require.NotNil(t, a1.seek, "the first read of its chunk makes room for them")
	it := s.Iterator(nil)
	require.Equal(t, ValFloat, it.Seek(500))
	tt, v := it.At()
	require.Equal(t, int64(500), tt)
	require.Equal(t, -50.0, v)
}

// TestXORSeekPointsFill checks that the points a chunk's first read fills
// by decoding are the ones its appender records: chunks built twice, one
// read after its first sample (every point recorded by Append), the other
// first read after a random number of samples (the points up to there
// filled, the rest recorded).
func TestXORSeekPointsFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	filled := 0
	for round := range 300 {
		rec, fill := NewXORChunk(), NewXORChunk()
		ra, err := rec.XORAppender()
		require.NoError(t, err)
		fa, err := fill.XORAppender()
		require.NoError(t, err)
		total := 1 + rng.IntN(MaxSamples/16)
		if round%2 == 0 {
			total = 90 + rng.IntN(40)
		}
		firstRead := rng.IntN(total + 1)
		ts, v := rng.Int64N(1e9), rng.Float64()
		for n := range total {
			switch {
			case round%5 == 0 && n == 40:
				ts += 1 << 33 // no point while this delta is the last one
			case round%3 == 0:
				ts += 1 + rng.Int64N(30000)
			default:
				ts += 15000
			}
			if rng.IntN(3) == 0 {
				v = rng.NormFloat64()
			}
			ra.Append(ts, v)
			fa.Append(ts, v)
			if n == 0 {
				rec.SnapshotFrom(ra, 0)
			}
			if n+1 == firstRead {
				fill.SnapshotFrom(fa, 0)
			}
		}
		if fa.seek == nil {
			continue
		}
		require.Equal(t, *ra.seek, *fa.seek, "round %d: %d samples, first read after %d", round, total, firstRead)
		if firstRead >= seekEvery {
			filled++
		}
	}
	require.Greater(t, filled, 50, "chunks whose points were filled")
}
