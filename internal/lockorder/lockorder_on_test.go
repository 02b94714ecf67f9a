//go:build invariants

package lockorder

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInOrder(t *testing.T) {
	var cmtx Mutex[Compaction]
	var db RWMutex[DB]
	var s Mutex[Series]
	var iso Mutex[Isolation]
	cmtx.Lock()
	db.RLock()
	s.Lock()
	iso.Lock()
	require.Equal(t, []Rank{RankCompaction, RankDB, RankSeries, RankIsolation}, HeldRanks())
	// Release in any order.
	s.Unlock()
	require.Equal(t, []Rank{RankCompaction, RankDB, RankIsolation}, HeldRanks())
	cmtx.Unlock()
	iso.Unlock()
	db.RUnlock()
	require.Empty(t, HeldRanks())
	// Skipping classes is fine.
	s.Lock()
	require.Equal(t, []Rank{RankSeries}, HeldRanks())
	s.Unlock()
	db.Lock()
	require.Equal(t, []Rank{RankDB}, HeldRanks())
	db.Unlock()
}

func TestWrongOrderPanics(t *testing.T) {
	var db RWMutex[DB]
	var s Mutex[Series]
	s.Lock()
	require.PanicsWithValue(t,
		"lockorder: DB.mu (rank 2) taken while holding memSeries.mu (rank 11) (held: memSeries.mu): the order is "+orderString(),
		func() { db.RLock() })
	// The panic came before the lock was taken: nothing to undo but s.
	require.Equal(t, []Rank{RankSeries}, HeldRanks())
	s.Unlock()
	require.Empty(t, HeldRanks())
}

func TestWrongOrderPanicsForEveryPair(t *testing.T) {
	for _, hi := range Ranks() {
		for _, lo := range Ranks() {
			if lo > hi {
				continue
			}
			Acquired(hi)
			require.Panics(t, func() { Acquired(lo) }, "%s after %s", lo, hi)
			Released(hi)
		}
	}
	require.Empty(t, HeldRanks())
}

func TestReentryPanics(t *testing.T) {
	var a, b Mutex[Series]
	a.Lock()
	require.PanicsWithValue(t,
		"lockorder: memSeries.mu taken while holding memSeries.mu already (held: memSeries.mu): a lock class is never re-entered",
		func() { b.Lock() })
	a.Unlock()
}

func TestRecursiveReadLockPanics(t *testing.T) {
	var db RWMutex[DB]
	db.RLock()
	require.Panics(t, func() { db.RLock() })
	db.RUnlock()
	require.Empty(t, HeldRanks())
}

func TestCompactionLockHooks(t *testing.T) {
	Acquired(RankCompaction)
	var db RWMutex[DB]
	db.Lock()
	require.Equal(t, []Rank{RankCompaction, RankDB}, HeldRanks())
	db.Unlock()
	Released(RankCompaction)
	db.Lock()
	require.Panics(t, func() { Acquired(RankCompaction) })
	db.Unlock()
}

func TestUnlockNotHeldPanics(t *testing.T) {
	var s Mutex[Series]
	s.Lock()
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		s.Unlock()
	}()
	require.Equal(t,
		"lockorder: memSeries.mu released by a goroutine that does not hold it (a lock must be released by the goroutine that took it)",
		<-done)
	s.Unlock()
}

// Held locks are per goroutine: another goroutine starts with none.
func TestPerGoroutine(t *testing.T) {
	var s Mutex[Series]
	s.Lock()
	done := make(chan []Rank)
	go func() {
		var db RWMutex[DB]
		db.Lock()
		done <- HeldRanks()
		db.Unlock()
	}()
	require.Equal(t, []Rank{RankDB}, <-done)
	s.Unlock()
}
