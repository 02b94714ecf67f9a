package chunks

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestXORSnapshotWhileAppending appends to a chunk from one goroutine while
// others iterate snapshots taken under the same lock as the appends (run
// with -race): each snapshot yields exactly the samples appended before it.
func TestXORSnapshotWhileAppending(t *testing.T) {
	c := NewXORChunk()
	app, err := c.XORAppender()
	require.NoError(t, err)
	var mu sync.Mutex
	value := func(i int) float64 { return math.Sin(float64(i)) * float64(i%7) }
	const n = 2000
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				mu.Lock()
				s := c.Snapshot()
				mu.Unlock()
				it := s.Iterator(nil)
				i := 0
				for it.Next() != ValNone {
					ts, v := it.At()
					if ts != int64(i)*1000 || math.Float64bits(v) != math.Float64bits(value(i)) {
						t.Errorf("sample %d: got (%d, %v)", i, ts, v)
						return
					}
					i++
				}
				if !assert.NoError(t, it.Err(), "after %d samples", i) ||
					!assert.Equal(t, s.NumSamples(), i, "samples read") {
					return
				}
			}
		}()
	}
	for i := range n {
		mu.Lock()
		app.Append(int64(i)*1000, value(i))
		mu.Unlock()
	}
	wg.Wait()
	var zero XORSnapshot
	require.False(t, zero.Iterator(nil).Next() != ValNone, "zero snapshot has samples")
}
