package lockorder

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestRanks(t *testing.T) {
	rs := Ranks()
	require.Len(t, rs, int(numRanks)-1)
	seen := map[string]bool{}
	for i, r := range rs {
		require.Equal(t, Rank(i+1), r, "ranks are consecutive, from 1")
		name := r.String()
		require.NotEmpty(t, rankNames[r], "rank %d has no name", r)
		require.False(t, seen[name], "two ranks named %s", name)
		seen[name] = true
	}
	require.Equal(t, "lockorder.Rank(0)", Rank(0).String())
}

// The wrappers cost no memory: a struct that embeds them keeps its size
// and padding (seriesStripe is padded to a cache line).
func TestNoExtraSize(t *testing.T) {
	require.Equal(t, unsafe.Sizeof(sync.Mutex{}), unsafe.Sizeof(Mutex[Series]{}))
	require.Equal(t, unsafe.Sizeof(sync.RWMutex{}), unsafe.Sizeof(RWMutex[Stripe]{}))
}

// In either build the wrappers are locks.
func TestMutualExclusion(t *testing.T) {
	// Each counter is guarded by its own lock: one counter under both
	// would race between a holder of mu and a holder of rw.
	var mu Mutex[Series]
	var rw RWMutex[DB]
	n, m := 0, 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				mu.Lock()
				n++
				mu.Unlock()
				rw.Lock()
				m++
				rw.Unlock()
				rw.RLock()
				_ = m
				rw.RUnlock()
			}
		})
	}
	wg.Wait()
	require.Equal(t, 4000, n)
	require.Equal(t, 4000, m)
}
