package tombstones

import (
	"slices"
	"sync"
)

// Reader gives access to the deletion intervals of series, by series
// reference.
type Reader interface {
	// Get returns the intervals of the series ref, nil if it has none. The
	// caller must not modify the returned list.
	Get(ref uint64) (Intervals, error)
	// Iter calls f for every series with intervals, in increasing order of
	// ref, and stops at the first error f returns, returning it.
	Iter(f func(ref uint64, ivs Intervals) error) error
	// Total returns the number of intervals of all series.
	Total() uint64
	// Close releases the Reader's resources.
	Close() error
}

// MemTombstones is an in-memory Reader that intervals can be added to. It
// is safe for concurrent use.
type MemTombstones struct {
	// mu protects m. Lists stored in m are never modified in place (Add and
	// TruncateBefore build new ones), so they can be handed out freely.
	mu sync.RWMutex
	m  map[uint64]Intervals
}

var _ Reader = (*MemTombstones)(nil)

// NewMemTombstones returns an empty MemTombstones.
func NewMemTombstones() *MemTombstones {
	return &MemTombstones{m: make(map[uint64]Intervals)}
}

// AddInterval adds intervals to the series ref, merging them with its
// existing ones. Intervals with Mint > Maxt are ignored.
func (t *MemTombstones) AddInterval(ref uint64, itvs ...Interval) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.m[ref]
	for _, iv := range itvs {
		cur = cur.Add(iv)
	}
	if len(cur) > 0 {
		t.m[ref] = slices.Clip(cur)
	}
}

// Get implements Reader.
func (t *MemTombstones) Get(ref uint64) (Intervals, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.m[ref], nil
}

// Iter implements Reader. f runs without the lock held, on a snapshot
// taken when Iter starts, so it may call back into t.
func (t *MemTombstones) Iter(f func(ref uint64, ivs Intervals) error) error {
	type entry struct {
		ref uint64
		ivs Intervals
	}
	t.mu.RLock()
	entries := make([]entry, 0, len(t.m))
	for ref, ivs := range t.m {
		entries = append(entries, entry{ref, ivs})
	}
	t.mu.RUnlock()
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.ref < b.ref:
			return -1
		case a.ref > b.ref:
			return 1
		}
		return 0
	})
	for _, e := range entries {
		if err := f(e.ref, e.ivs); err != nil {
			return err
		}
	}
	return nil
}

// Total implements Reader.
func (t *MemTombstones) Total() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var n uint64
	for _, ivs := range t.m {
		n += uint64(len(ivs))
	}
	return n
}

// DeleteTombstones removes all intervals of the given series.
func (t *MemTombstones) DeleteTombstones(refs map[uint64]struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for ref := range refs {
		delete(t.m, ref)
	}
}

// TruncateBefore drops the intervals that end before mint; intervals that
// reach mint or later are kept whole.
func (t *MemTombstones) TruncateBefore(mint int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for ref, ivs := range t.m {
		i := 0
		for i < len(ivs) && ivs[i].Maxt < mint {
			i++
		}
		switch {
		case i == len(ivs):
			delete(t.m, ref)
		case i > 0:
			t.m[ref] = slices.Clone(ivs[i:])
		}
	}
}

// Close implements Reader; it does nothing.
func (t *MemTombstones) Close() error { return nil }
