package chunks

import (
	"math"
	"slices"
)

// AppendSamples decodes the chunk's samples up to time maxt, appending the
// times to ts and the values to vs, and returns the extended slices. It
// yields what the chunk's Iterator would up to the first sample after maxt,
// which it does not append and after which it stops: a reader of a time
// range takes a chunk in one call and saves the interface calls a sample
// costs through Iterator, without decoding past the range. If the chunk is
// corrupt, the samples before the corruption are appended and the error is
// the one Iterator.Err would return. Like Iterator, it must not run
// concurrently with Append.
func (c *XORChunk) AppendSamples(ts []int64, vs []float64, maxt int64) ([]int64, []float64, error) {
	var it xorIterator
	it.reset(c.w.buf)
	// The header's count is not trusted for the allocation: every sample
	// after the first takes at least 2 bits.
	n := min(int(it.total), 4*len(c.w.buf)+1)
	ts, vs = slices.Grow(ts, n), slices.Grow(vs, n)
	for it.Next() == ValFloat && it.t <= maxt {
		ts = append(ts, it.t)
		vs = append(vs, math.Float64frombits(it.vbits))
		// Runs of common samples fused (nextRun), into the room the
		// slices have; each other sample through Next.
		k := len(ts)
		room := min(cap(ts), cap(vs)) - k
		r := it.nextRun(ts[k:k+room], vs[k:k+room])
		ts, vs = ts[:k+r], vs[:k+r]
		for j, t := range ts[k:] {
			if t > maxt {
				// The first sample after maxt, where Next stops.
				return ts[:k+j], vs[:k+j], nil
			}
		}
	}
	return ts, vs, it.err
}
