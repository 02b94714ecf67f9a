package tsdb

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

func TestRefTable(t *testing.T) {
	var rt refTable
	mk := func(ref SeriesRef) *memSeries { return newMemSeries(ref, labels.FromStrings("a", "b")) }

	require.Nil(t, rt.get(1), "empty table")
	series := map[SeriesRef]*memSeries{}
	for _, ref := range []SeriesRef{1, 2, refPageSize - 1, refPageSize, 5*refPageSize + 3, maxDenseRef, maxDenseRef + 7} {
		s := mk(ref)
		rt.set(s)
		series[ref] = s
	}
	for ref, s := range series {
		require.Same(t, s, rt.get(ref), "ref %d", ref)
	}
	require.Nil(t, rt.get(3))
	require.Nil(t, rt.get(4*refPageSize), "ref in a page never created")
	require.Nil(t, rt.get(1<<40), "ref past the directory")

	visited := map[SeriesRef]bool{}
	rt.each(func(s *memSeries) { visited[s.ref] = true })
	require.Len(t, visited, len(series))

	// Deleting every series of the first page frees it only once all its
	// refs have been handed out.
	rt.delete(series[1], refPageSize-1)
	rt.delete(series[2], refPageSize-1)
	require.NotNil(t, (*rt.dir.Load())[0], "page holds ref %d still", refPageSize-1)
	rt.delete(series[refPageSize-1], refPageSize-2)
	require.NotNil(t, (*rt.dir.Load())[0], "ref %d not handed out yet: the page must stay", refPageSize-1)
	s := mk(refPageSize - 2)
	rt.set(s)
	rt.delete(s, 10*refPageSize)
	require.Nil(t, (*rt.dir.Load())[0], "empty page whose refs are all handed out is freed")
	require.Nil(t, rt.get(1))
	require.Same(t, series[refPageSize], rt.get(refPageSize), "other pages unaffected")

	// Deleting a series that is not the one stored is a no-op.
	rt.delete(mk(refPageSize), 10*refPageSize)
	require.Same(t, series[refPageSize], rt.get(refPageSize))

	rt.delete(series[maxDenseRef], 0)
	require.Nil(t, rt.get(maxDenseRef))
	require.Same(t, series[maxDenseRef+7], rt.get(maxDenseRef+7))
}

// TestRefTableConcurrent sets, gets and deletes from many goroutines (run
// it with -race): every series set is found until it is deleted.
func TestRefTableConcurrent(t *testing.T) {
	var rt refTable
	const workers, per = 4, 5000
	var wg sync.WaitGroup
	var next sync.Mutex
	last := SeriesRef(0)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []*memSeries
			for i := range per {
				next.Lock()
				last++
				ref := last
				next.Unlock()
				s := newMemSeries(ref, labels.EmptyLabels())
				rt.set(s)
				mine = append(mine, s)
				if got := rt.get(ref); got != s {
					t.Errorf("ref %d: got %p, want %p", ref, got, s)
					return
				}
				if i%3 == 0 {
					d := mine[len(mine)/2]
					next.Lock()
					l := last
					next.Unlock()
					rt.delete(d, l)
					if rt.get(d.ref) != nil {
						t.Errorf("ref %d found after delete", d.ref)
						return
					}
					mine = append(mine[:len(mine)/2], mine[len(mine)/2+1:]...)
				}
			}
			for _, s := range mine {
				if rt.get(s.ref) != s {
					t.Errorf("ref %d lost", s.ref)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRefTableDirectorySize checks that the directory grows with the
// highest ref, not with the number of pages created.
func TestRefTableDirectorySize(t *testing.T) {
	var rt refTable
	const pages = 100
	for ref := SeriesRef(1); ref <= pages*refPageSize; ref++ {
		rt.set(newMemSeries(ref, labels.EmptyLabels()))
	}
	n := len(*rt.dir.Load())
	require.GreaterOrEqual(t, n, pages+1)
	require.LessOrEqual(t, n, 2*(pages+1), "directory of %d entries for %d pages", n, pages+1)
}
