package chunks

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// iterateUntil reads c through its Iterator up to the first sample after
// maxt: the reference AppendSamples must match.
func iterateUntil(c Chunk, maxt int64) ([]int64, []float64, error) {
	var ts []int64
	var vs []float64
	it := c.Iterator(nil)
	for it.Next() == ValFloat {
		t, v := it.At()
		if t > maxt {
			return ts, vs, nil
		}
		ts = append(ts, t)
		vs = append(vs, v)
	}
	return ts, vs, it.Err()
}

// TestXORAppendSamples checks AppendSamples against the Iterator on the
// benchmark series, on every truncation of them and on random bit flips,
// with and without a maxt inside the chunk: the same samples, bit for
// bit, and the same error; and that it appends to what the slices hold.
func TestXORAppendSamples(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	check := func(name string, c *XORChunk) {
		t.Helper()
		maxt := int64(math.MaxInt64)
		if all, _, _ := iterateUntil(c, maxt); len(all) > 0 && rng.IntN(2) == 0 {
			// At, just before or just after a sample's time.
			maxt = all[rng.IntN(len(all))] + int64(rng.IntN(3)) - 1
		}
		wts, wvs, werr := iterateUntil(c, maxt)
		pre := []int64{-1}
		ts, vs, err := c.AppendSamples(pre, []float64{-1}, maxt)
		require.Equal(t, int64(-1), ts[0], name)
		require.Equal(t, len(wts)+1, len(ts), name)
		for i, wt := range wts {
			require.Equal(t, wt, ts[i+1], "%s: time %d", name, i)
		}
		for i, v := range wvs {
			require.Equal(t, math.Float64bits(v), math.Float64bits(vs[i+1]), "%s: value %d", name, i)
		}
		if werr == nil {
			require.NoError(t, err, name)
		} else {
			require.EqualError(t, err, werr.Error(), name)
			requireCorrupt(t, err)
		}
	}
	for name, ss := range benchSeries() {
		b := encode(t, ss).Bytes()
		for n := range len(b) + 1 {
			c, err := FromData(EncXOR, b[:n])
			if err != nil {
				continue // shorter than the header
			}
			check(name, c.(*XORChunk))
		}
		for range 200 {
			bad := append([]byte(nil), b...)
			bad[rng.IntN(len(bad))] ^= 1 << rng.IntN(8)
			c, err := FromData(EncXOR, bad)
			require.NoError(t, err)
			check(name+" flipped", c.(*XORChunk))
		}
	}
	check("empty", NewXORChunk())
}

// BenchmarkXORAppendSamples is BenchmarkXORIterate through AppendSamples.
func BenchmarkXORAppendSamples(b *testing.B) {
	for name, ss := range benchSeries() {
		c := encode(b, ss)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.Bytes())))
			var ts []int64
			var vs []float64
			for b.Loop() {
				var err error
				ts, vs, err = c.AppendSamples(ts[:0], vs[:0], math.MaxInt64)
				if err != nil {
					b.Fatal(err)
				}
			}
			require.Equal(b, ss[len(ss)-1].T, ts[len(ts)-1], "last time")
			b.ReportMetric(float64(b.N)*float64(len(ss))/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
