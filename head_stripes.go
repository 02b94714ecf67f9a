package tsdb

import (
	"slices"

	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/labels"
)

// stripeSeries is the head's series map: series by ref in a lock-free
// table (head_refs.go) and by label hash in stripes with a lock each, so
// that creating and looking up series by labels rarely contend. A new
// series is inserted by hash first, then by ref; removal goes the other
// way round, the two never under one lock.
type stripeSeries struct {
	refs    refTable
	mask    uint64
	stripes []seriesStripe
}

// seriesStripe is one stripe. Its lock protects its maps, which are nil
// until the stripe's first series. No one holds two stripes' locks at
// once; MemPostings.mu and series locks are taken under one.
type seriesStripe struct {
	mu     lockorder.RWMutex[lockorder.Stripe]
	byHash map[uint64]*memSeries
	// conflicts holds the further series of a hash that has more than one
	// (a 64-bit hash collision); nil until the first one.
	conflicts map[uint64][]*memSeries
	_         [24]byte // pad to 64 bytes: one stripe per cache line
}

func newStripeSeries(size int) *stripeSeries {
	return &stripeSeries{mask: uint64(size - 1), stripes: make([]seriesStripe, size)}
}

// getByRef returns the series with the given ref, nil if there is none.
func (ss *stripeSeries) getByRef(ref SeriesRef) *memSeries { return ss.refs.get(ref) }

// getByHash returns the series with the given labels and hash, nil if there
// is none.
func (ss *stripeSeries) getByHash(hash uint64, lset labels.Labels) *memSeries {
	st := &ss.stripes[hash&ss.mask]
	st.mu.RLock()
	s := st.lookupLocked(hash, lset)
	st.mu.RUnlock()
	return s
}

// lookupLocked returns the series of the stripe with the given labels and
// hash, nil if there is none. Requires st.mu held (either side).
func (st *seriesStripe) lookupLocked(hash uint64, lset labels.Labels) *memSeries {
	if s := st.byHash[hash]; s != nil && labels.Equal(s.lset, lset) {
		return s
	}
	for _, s := range st.conflicts[hash] {
		if labels.Equal(s.lset, lset) {
			return s
		}
	}
	return nil
}

// getOrSet returns the series with the given labels, creating it with
// create if there is none. created reports whether it did. Takes the
// stripe's lock and calls create under it, so create may take only locks
// after the stripe's (the head's takes MemPostings.mu); then takes
// refTable.mu alone, if the ref needs a new page.
func (ss *stripeSeries) getOrSet(hash uint64, lset labels.Labels, create func() *memSeries) (s *memSeries, created bool) {
	st := &ss.stripes[hash&ss.mask]
	st.mu.Lock()
	if s := st.lookupLocked(hash, lset); s != nil {
		st.mu.Unlock()
		return s, false
	}
	s = create()
	if st.byHash == nil {
		st.byHash = map[uint64]*memSeries{}
	}
	if st.byHash[hash] == nil {
		st.byHash[hash] = s
	} else {
		if st.conflicts == nil {
			st.conflicts = map[uint64][]*memSeries{}
		}
		st.conflicts[hash] = append(st.conflicts[hash], s)
	}
	st.mu.Unlock()

	// Until this insert, lookups by ref miss the series. That is harmless:
	// every Append carries the labels too and falls back to them.
	ss.refs.set(s)
	return s, true
}

// remove deletes s from the map if it still has no chunks and no pending
// samples, marking it removed so that an Appender that found it just before
// looks it up again. lastRef is the newest ref handed out. It reports
// whether it removed s. Takes the stripe's lock and s.mu under it, then
// refTable.mu alone.
func (ss *stripeSeries) remove(s *memSeries, lastRef SeriesRef) bool {
	hash := s.lset.Hash()
	st := &ss.stripes[hash&ss.mask]
	st.mu.Lock()
	s.mu.Lock()
	if len(s.chunks) > 0 || s.pending > 0 || s.removed {
		s.mu.Unlock()
		st.mu.Unlock()
		return false
	}
	s.removed = true
	s.mu.Unlock()
	if st.byHash[hash] == s {
		delete(st.byHash, hash)
		if c := st.conflicts[hash]; len(c) > 0 {
			st.byHash[hash] = c[0]
			if len(c) == 1 {
				delete(st.conflicts, hash)
			} else {
				st.conflicts[hash] = slices.Clone(c[1:])
			}
		}
	} else if c := st.conflicts[hash]; len(c) > 0 {
		c = slices.DeleteFunc(slices.Clone(c), func(x *memSeries) bool { return x == s })
		if len(c) == 0 {
			delete(st.conflicts, hash)
		} else {
			st.conflicts[hash] = c
		}
	}
	st.mu.Unlock()

	ss.refs.delete(s, lastRef)
	return true
}
