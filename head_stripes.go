package tsdb

import (
	"sync"

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
// until the stripe's first series.
type seriesStripe struct {
	mu     sync.RWMutex
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
// create if there is none. created reports whether it did.
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
