package chunks

import (
	"math"
	"sync"
	"testing"
)

// TestXORSnapshotWhileAppending appends to a chunk from one goroutine while
// others iterate snapshots taken under the same lock as the appends (run
// with -race): each snapshot yields exactly the samples appended before it.
func TestXORSnapshotWhileAppending(t *testing.T) {
	c := NewXORChunk()
	app, err := c.XORAppender()
	if err != nil {
		t.Fatal(err)
	}
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
				for it.Next() {
					ts, v := it.At()
					if ts != int64(i)*1000 || math.Float64bits(v) != math.Float64bits(value(i)) {
						t.Errorf("sample %d: got (%d, %v)", i, ts, v)
						return
					}
					i++
				}
				if it.Err() != nil || i != s.NumSamples() {
					t.Errorf("read %d of %d samples, err %v", i, s.NumSamples(), it.Err())
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
	if zero.Iterator(nil).Next() {
		t.Fatal("zero snapshot has samples")
	}
}
