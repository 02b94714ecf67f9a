package tsdb

import (
	"sync/atomic"

	"github.com/isotsdb/tsdb/internal/lockorder"
)

// refTable finds head series by ref. Refs are dense, taken from a counter
// (or, at WAL replay, from the log, which took them from a counter), so the
// table is an array of pages indexed by ref rather than a hash map: 8 bytes
// a series, and a lookup is two atomic loads with no lock.
//
// Readers (get, each) take no lock. Writers (set, delete) serialize on mu
// only to add or free a page; storing into a slot of an existing page is
// an atomic store.
//
// A page is freed when all of its refs have been handed out (no future set
// can land in it: refs are never reused) and all of its series are gone.
type refTable struct {
	// mu serializes page allocation and freeing, and guards big. It is
	// last in the lock order: taken under tombsMu and the querier's lock
	// (lookups of large refs), and nothing is locked under it.
	mu   lockorder.Mutex[lockorder.RefTable]
	dir  atomic.Pointer[[]*refPage] // page i holds refs [i<<refPageBits, (i+1)<<refPageBits); copy on write
	big  map[SeriesRef]*memSeries   // refs ≥ maxDenseRef (only from a foreign WAL); nil if none
	nbig atomic.Int32               // len(big), so that get skips mu when big is empty
}

const (
	refPageBits = 10
	refPageSize = 1 << refPageBits
	// maxDenseRef bounds the refs kept in pages, so that a WAL with
	// enormous refs cannot make the directory huge.
	maxDenseRef = SeriesRef(1) << 32
)

// refPage is refPageSize consecutive refs.
type refPage struct {
	slots [refPageSize]atomic.Pointer[memSeries]
	live  atomic.Int32 // non-nil slots
	// dead is set, under refTable.mu, while the page is being freed. A
	// set that raced with the freeing sees it (or the freeing sees the
	// set's live count) and redoes its store under mu.
	dead atomic.Bool
}

// get returns the series with the given ref, nil if there is none.
func (t *refTable) get(ref SeriesRef) *memSeries {
	if ref >= maxDenseRef {
		if t.nbig.Load() == 0 {
			return nil
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.big[ref]
	}
	dir := t.dir.Load()
	if dir == nil {
		return nil
	}
	i := uint64(ref >> refPageBits)
	if i >= uint64(len(*dir)) {
		return nil
	}
	p := (*dir)[i]
	if p == nil {
		return nil
	}
	return p.slots[ref&(refPageSize-1)].Load()
}

// set makes s findable by its ref.
func (t *refTable) set(s *memSeries) {
	ref := s.ref
	if ref >= maxDenseRef {
		t.mu.Lock()
		if t.big == nil {
			t.big = map[SeriesRef]*memSeries{}
		}
		t.big[ref] = s
		t.nbig.Store(int32(len(t.big)))
		t.mu.Unlock()
		return
	}
	i := uint64(ref >> refPageBits)
	slot := ref & (refPageSize - 1)
	if p := t.page(i); p != nil {
		if p.slots[slot].Swap(s) == nil {
			p.live.Add(1)
		}
		if !p.dead.Load() {
			return
		}
		// The page is being freed: take the store back and redo it under
		// mu, where the page is either gone or alive again.
		if p.slots[slot].CompareAndSwap(s, nil) {
			p.live.Add(-1)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pageLocked(i)
	if p.slots[slot].Swap(s) == nil {
		p.live.Add(1)
	}
}

// delete removes s. lastRef is the newest ref handed out: a page whose refs
// are all ≤ lastRef and that holds no series any more is freed.
func (t *refTable) delete(s *memSeries, lastRef SeriesRef) {
	ref := s.ref
	if ref >= maxDenseRef {
		t.mu.Lock()
		delete(t.big, ref)
		t.nbig.Store(int32(len(t.big)))
		t.mu.Unlock()
		return
	}
	i := uint64(ref >> refPageBits)
	p := t.page(i)
	if p == nil || !p.slots[ref&(refPageSize-1)].CompareAndSwap(s, nil) {
		return
	}
	if p.live.Add(-1) > 0 || SeriesRef((i+1)<<refPageBits-1) > lastRef {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	dir := *t.dir.Load()
	if dir[i] != p {
		return
	}
	// Announce the freeing, then look for a set that got in meanwhile
	// (it checks dead after raising live; one of the two sees the other).
	p.dead.Store(true)
	if p.live.Load() != 0 {
		p.dead.Store(false)
		return
	}
	nd := make([]*refPage, len(dir))
	copy(nd, dir)
	nd[i] = nil
	t.dir.Store(&nd)
}

// page returns page i, nil if it does not exist.
func (t *refTable) page(i uint64) *refPage {
	if dir := t.dir.Load(); dir != nil && i < uint64(len(*dir)) {
		return (*dir)[i]
	}
	return nil
}

// pageLocked returns page i, creating it and growing the directory if
// needed. Requires t.mu held.
func (t *refTable) pageLocked(i uint64) *refPage {
	var dir []*refPage
	if d := t.dir.Load(); d != nil {
		dir = *d
	}
	if i < uint64(len(dir)) && dir[i] != nil {
		return dir[i]
	}
	n := uint64(len(dir))
	if i >= n {
		n = max(i+1, 2*n) // grow geometrically
	}
	nd := make([]*refPage, n)
	copy(nd, dir)
	p := &refPage{}
	nd[i] = p
	t.dir.Store(&nd)
	return p
}

// each calls fn for every series in the table, in ref order. Series set or
// deleted while it runs may or may not be visited.
func (t *refTable) each(fn func(*memSeries)) {
	t.until(func(s *memSeries) bool { fn(s); return true })
}

// until is each stopping as soon as fn returns false; it reports whether
// it visited every series. The dense refs come in ref order, the refs
// beyond maxDenseRef (only from a foreign WAL) after them in no order.
// It takes refTable.mu only to copy the latter, never while fn runs.
func (t *refTable) until(fn func(*memSeries) bool) bool {
	if dir := t.dir.Load(); dir != nil {
		for _, p := range *dir {
			if p == nil || p.live.Load() == 0 {
				continue
			}
			for j := range p.slots {
				if s := p.slots[j].Load(); s != nil && !fn(s) {
					return false
				}
			}
		}
	}
	if t.nbig.Load() == 0 {
		return true
	}
	t.mu.Lock()
	big := make([]*memSeries, 0, len(t.big))
	for _, s := range t.big {
		big = append(big, s)
	}
	t.mu.Unlock()
	for _, s := range big {
		if !fn(s) {
			return false
		}
	}
	return true
}
