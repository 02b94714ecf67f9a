package tombstones

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIntervalsAdd(t *testing.T) {
	cases := []struct {
		in   Intervals
		add  Interval
		want Intervals
	}{
		{nil, Interval{1, 2}, Intervals{{1, 2}}},
		{Intervals{{1, 2}}, Interval{4, 5}, Intervals{{1, 2}, {4, 5}}},
		{Intervals{{1, 2}}, Interval{3, 5}, Intervals{{1, 5}}}, // adjacent
		{Intervals{{4, 5}}, Interval{1, 2}, Intervals{{1, 2}, {4, 5}}},
		{Intervals{{1, 2}, {5, 6}, {9, 10}}, Interval{2, 9}, Intervals{{1, 10}}},
		{Intervals{{1, 2}, {9, 10}}, Interval{5, 6}, Intervals{{1, 2}, {5, 6}, {9, 10}}},
		{Intervals{{1, 2}}, Interval{3, 2}, Intervals{{1, 2}}}, // empty: ignored
		{Intervals{{0, 1}}, Interval{math.MinInt64, -5}, Intervals{{math.MinInt64, -5}, {0, 1}}},
		{Intervals{{0, 1}}, Interval{5, math.MaxInt64}, Intervals{{0, 1}, {5, math.MaxInt64}}},
		{Intervals{{math.MinInt64, 0}}, Interval{1, math.MaxInt64}, Intervals{{math.MinInt64, math.MaxInt64}}},
	}
	for _, c := range cases {
		in := append(Intervals(nil), c.in...)
		got := in.Add(c.add)
		mustEqual(t, c.want, got, c.in, " + ", c.add)
		mustEqual(t, c.in, in, "receiver modified")
	}
}

// TestIntervalsAgainstModel adds random intervals and compares Contains
// with a set of deleted timestamps.
func TestIntervalsAgainstModel(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	for round := range 200 {
		var ivs Intervals
		deleted := map[int64]bool{}
		for range 1 + rng.IntN(8) {
			a := rng.Int64N(100)
			b := a + rng.Int64N(10) - 2
			ivs = ivs.Add(Interval{a, b})
			for x := a; x <= b; x++ {
				deleted[x] = true
			}
		}
		for i := 1; i < len(ivs); i++ {
			require.Greater(t, ivs[i].Mint, ivs[i-1].Maxt+1, "seed %d round %d: not disjoint %v", seed, round, ivs)
		}
		for x := int64(-5); x < 115; x++ {
			require.Equal(t, deleted[x], ivs.Contains(x), "seed %d round %d: Contains(%d) in %v", seed, round, x, ivs)
		}
	}
}
