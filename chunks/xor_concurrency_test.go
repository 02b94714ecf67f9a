package chunks

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// concSample is sample i of the concurrency test's series: a jittered 15 s
// scrape whose value alternates between constant runs and changes, so all
// value encodings occur.
func concSample(i int) (int64, float64) {
	t := int64(i)*15000 + int64((i*7919)%201) - 100
	switch h := (i * 2654435761) % 97; {
	case h < 40:
		return t, float64(i / 10) // constant runs
	case h < 45:
		return t, math.Float64frombits(staleNaN)
	default:
		return t, float64(h) * 0.25
	}
}

// TestXORConcurrentAppendIterate runs the head's access pattern under the
// race detector: one goroutine appends 100k samples, cutting a new chunk
// every 120 (and compacting the old one), all under a mutex; readers create
// iterators under the mutex, then iterate without it while appends go on.
// Each iterator must yield exactly the samples appended before its creation.
func TestXORConcurrentAppendIterate(t *testing.T) {
	const (
		total     = 100_000
		perChunk  = 120
		readers   = 3
		minChecks = 100 // per reader, so readers overlap appends
	)
	var (
		mu     sync.Mutex // protects chunks, app, n
		chunks []*XORChunk
		app    Appender
		n      int // samples appended
	)
	var done atomic.Bool
	var wg sync.WaitGroup

	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := range total {
			mu.Lock()
			if i%perChunk == 0 {
				if len(chunks) > 0 {
					chunks[len(chunks)-1].Compact()
				}
				c := NewXORChunk()
				a, err := c.Appender()
				if !assert.NoError(t, err) {
					mu.Unlock()
					return
				}
				chunks, app = append(chunks, c), a
			}
			ts, v := concSample(i)
			app.Append(ts, v)
			n++
			mu.Unlock()
		}
	}()

	var checks atomic.Int64
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 42))
			var it Iterator
			for local := 0; !done.Load() || local < minChecks; {
				mu.Lock()
				if len(chunks) == 0 {
					mu.Unlock()
					continue
				}
				k := len(chunks) - 1 // mostly the open chunk
				if rng.IntN(4) == 0 {
					k = rng.IntN(len(chunks))
				}
				want := min(perChunk, n-k*perChunk)
				it = chunks[k].Iterator(it)
				mu.Unlock()

				got := 0
				for it.Next() != ValNone {
					ts, v := it.At()
					wt, wv := concSample(k*perChunk + got)
					if ts != wt || math.Float64bits(v) != math.Float64bits(wv) {
						t.Errorf("chunk %d sample %d: got (%d, %g), want (%d, %g)", k, got, ts, v, wt, wv)
						return
					}
					got++
				}
				if !assert.NoError(t, it.Err(), "chunk %d", k) ||
					!assert.Equal(t, want, got, "chunk %d: samples iterated vs appended before the iterator was created", k) {
					return
				}
				checks.Add(1)
				local++
			}
		}()
	}
	wg.Wait()
	require.GreaterOrEqual(t, checks.Load(), int64(readers*minChecks), "checks ran")
	// Finally, everything is there.
	for k, c := range chunks {
		it := c.Iterator(nil)
		j := 0
		for it.Next() != ValNone {
			ts, v := it.At()
			wt, wv := concSample(k*perChunk + j)
			require.True(t, ts == wt && math.Float64bits(v) == math.Float64bits(wv),
				"final chunk %d sample %d mismatch", k, j)
			j++
		}
		require.NoError(t, it.Err(), "final chunk %d", k)
		require.Equal(t, min(perChunk, total-k*perChunk), j, "final chunk %d: samples", k)
	}
}
