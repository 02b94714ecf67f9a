package chunks

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIteratorSpaceNextFloats: NextFloats in runs of every size hands out
// what NextFloat does, sample for sample, stops at the chunk's end (or at
// a corruption, which Err then reports) and, after a full run, leaves
// the iterator on the last sample it stored; on the benchmark series, truncated and with bit
// flips.
func TestIteratorSpaceNextFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	check := func(name string, c *XORChunk) {
		t.Helper()
		var ref IteratorSpace
		c.Iterator(ref.Reuse())
		var wts []int64
		var wvs []float64
		for {
			tt, v, ok := ref.NextFloat()
			if !ok {
				break
			}
			wts, wvs = append(wts, tt), append(wvs, v)
		}
		for _, k := range []int{1, 2, 7, 32, 200} {
			var sp IteratorSpace
			it := c.Iterator(sp.Reuse())
			ts, vs := make([]int64, k), make([]float64, k)
			got := 0
			for {
				n := sp.NextFloats(ts, vs)
				require.LessOrEqual(t, got+n, len(wts), "%s, runs of %d: too many samples", name, k)
				for j := range n {
					require.Equal(t, wts[got+j], ts[j], "%s, runs of %d: time %d", name, k, got+j)
					require.Equal(t, math.Float64bits(wvs[got+j]), math.Float64bits(vs[j]), "%s, runs of %d: value %d", name, k, got+j)
				}
				got += n
				if n == k {
					tt, v := it.At()
					require.Equal(t, wts[got-1], tt, "%s, runs of %d: on the last sample stored", name, k)
					require.Equal(t, math.Float64bits(wvs[got-1]), math.Float64bits(v), name)
				}
				if n < k {
					break
				}
			}
			require.Equal(t, len(wts), got, "%s, runs of %d: stopped early", name, k)
			if err := it.Err(); err != nil || ref.Reuse().Err() != nil {
				require.EqualError(t, err, ref.Reuse().Err().Error(), name)
			}
		}
	}
	for name, ss := range benchSeries() {
		b := encode(t, ss).Bytes()
		check(name, encode(t, ss))
		for _, n := range []int{len(b) / 3, len(b) / 2, len(b) - 2} {
			c, err := FromData(EncXOR, b[:n])
			require.NoError(t, err)
			check(name+" truncated", c.(*XORChunk))
		}
		for range 50 {
			bad := append([]byte(nil), b...)
			bad[rng.IntN(len(bad))] ^= 1 << rng.IntN(8)
			c, err := FromData(EncXOR, bad)
			require.NoError(t, err)
			check(name+" flipped", c.(*XORChunk))
		}
	}
}

// TestXORSeekMatchesNext: Seek, which skips runs of samples fused
// (skipRun), lands where a loop of Next does, on the benchmark series,
// truncated and with bit flips, with the same error.
func TestXORSeekMatchesNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	check := func(name string, c *XORChunk) {
		t.Helper()
		var all []int64
		ref := c.Iterator(nil)
		for ref.Next() != ValNone {
			all = append(all, ref.AtT())
		}
		for range 20 {
			target := int64(rng.Int64N(1 << 62))
			if len(all) > 0 {
				target = all[rng.IntN(len(all))] + int64(rng.IntN(3)) - 1
			}
			want := c.Iterator(nil)
			wvt := want.Next()
			for wvt != ValNone && want.AtT() < target {
				wvt = want.Next()
			}
			got := c.Iterator(nil)
			require.Equal(t, wvt, got.Seek(target), "%s: Seek(%d)", name, target)
			if wvt != ValNone {
				wt, wv := want.At()
				gt, gv := got.At()
				require.Equal(t, wt, gt, "%s: Seek(%d)", name, target)
				require.Equal(t, math.Float64bits(wv), math.Float64bits(gv), "%s: Seek(%d)", name, target)
			} else if werr := want.Err(); werr != nil {
				require.EqualError(t, got.Err(), werr.Error(), name)
			}
		}
	}
	for name, ss := range benchSeries() {
		b := encode(t, ss).Bytes()
		check(name, encode(t, ss))
		for _, n := range []int{len(b) / 3, len(b) / 2, len(b) - 2} {
			c, err := FromData(EncXOR, b[:n])
			require.NoError(t, err)
			check(name+" truncated", c.(*XORChunk))
		}
		for range 50 {
			bad := append([]byte(nil), b...)
			bad[rng.IntN(len(bad))] ^= 1 << rng.IntN(8)
			c, err := FromData(EncXOR, bad)
			require.NoError(t, err)
			check(name+" flipped", c.(*XORChunk))
		}
	}
}
