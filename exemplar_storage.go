package tsdb

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/labels"
)

// exemplarStorage holds the head's newest exemplars in a ring of at most
// limit slots (Options.MaxExemplars): a new exemplar takes the slot after
// the previous one and, once the ring is full, overwrites the oldest of
// all. The ring's slice grows with use (doubling, never past limit), so
// a large limit costs memory only once that many exemplars came.
// An in-order append is O(1), and a series' exemplars are read in time
// order without a scan of the ring.
//
// Each series with exemplars has an entry in an index by its labels,
// which points at its oldest and newest exemplar; its exemplars are a
// doubly linked list in time order. An exemplar older than its series'
// newest but within the out-of-order window (the appender's, as for late
// samples; at replay the head's: Options.OutOfOrderTimeWindow, as
// Prometheus's exemplar storage takes it) is linked in at its place in
// time; the ring still overwrites in
// append order, so the exemplar overwritten may be anywhere in its
// series' list.
//
// Invariants (mu held): every slot of ring holds an exemplar; while
// len(ring) < limit, next is len(ring) (the ring grows), else next is the
// slot of the oldest exemplar, the one the next append overwrites; from
// there on, cyclically, the slots are in append order. Each series' list
// is in time order (non-decreasing), its next and prev links agree, and
// together the lists hold every slot once. A series with no exemplars
// left has no index entry. size is limit.
//
// It is safe for concurrent use. Locking: mu guards every field but size
// (and the metrics), which is written under mu and read without it (a
// hint: enabled). mu comes after head.closeMu (Commit stores a
// transaction's exemplars under it), after DB.mu (SetMaxExemplars) and
// after nothing else; no lock is taken under it.
type exemplarStorage struct {
	mu lockorder.RWMutex[lockorder.Exemplars] // protects the fields below

	ring  []exemplarEntry
	next  int // slot of the next exemplar
	limit int // most slots the ring may have; 0: exemplars off
	// index maps the hash of a series' labels to its entry; entries whose
	// labels hash alike are chained through collision.
	index     map[uint64]*exemplarSeries
	numSeries int

	size    atomic.Int64 // limit, readable without the lock
	metrics *exemplarMetrics
}

// exemplarEntry is one slot of the ring: an exemplar with its commit's
// write ID (0: replayed, visible to all), its series and its place in the
// series' list.
type exemplarEntry struct {
	e      Exemplar
	id     uint64
	next   int // slot of the series' next newer exemplar, -1 if none
	prev   int // slot of the series' next older exemplar, -1 if none
	series *exemplarSeries
}

// exemplarSeries is the index entry of one series: its labels and the
// slots of its oldest and newest exemplars.
type exemplarSeries struct {
	lset           labels.Labels
	hash           uint64
	oldest, newest int
	collision      *exemplarSeries // next entry with the same hash
}

// exemplarMetrics are the counters the storage updates; the gauges are
// read from it at scrape time (metrics.go).
type exemplarMetrics struct {
	appended, outOfOrder prometheus.Counter
}

func newExemplarStorage(n int64, m *exemplarMetrics) *exemplarStorage {
	es := &exemplarStorage{metrics: m, index: map[uint64]*exemplarSeries{}}
	es.resize(n)
	return es
}

// enabled reports whether the ring has room for any exemplar. It reads
// no lock: a resize may change the answer right after.
func (es *exemplarStorage) enabled() bool { return es.size.Load() > 0 }

// lookupLocked returns the index entry of the series lset (whose hash is
// hash), nil if it has no exemplars. Requires mu held (either side).
func (es *exemplarStorage) lookupLocked(lset labels.Labels, hash uint64) *exemplarSeries {
	for s := es.index[hash]; s != nil; s = s.collision {
		if labels.Equal(s.lset, lset) {
			return s
		}
	}
	return nil
}

// appendable tells whether e may be added to the exemplars of the series
// lset (hash its hash) as they are now, with an out-of-order window of
// window ms: nil, ErrExemplarsDisabled, ErrDuplicateExemplar or
// ErrOutOfOrderExemplar (unwrapped).
func (es *exemplarStorage) appendable(lset labels.Labels, hash uint64, e *Exemplar, window int64) error {
	es.mu.RLock()
	defer es.mu.RUnlock()
	if es.limit == 0 {
		return ErrExemplarsDisabled
	}
	if s := es.lookupLocked(lset, hash); s != nil {
		return exemplarOrder(&es.ring[s.newest].e, e, window)
	}
	return nil
}

// addCommitted stores the exemplars of a commit with its write ID id and
// out-of-order window window (ms).
// Those that are now out of order (a concurrent commit stored a newer
// one) are dropped and counted; duplicates are dropped, and so is
// everything if exemplars were turned off meanwhile.
func (es *exemplarStorage) addCommitted(pes []pendingExemplar, id uint64, window int64) {
	es.mu.Lock()
	defer es.mu.Unlock()
	for i := range pes {
		p := &pes[i]
		es.addLocked(p.s.lset, p.hash, &p.e, id, window)
	}
}

// addReplayed stores an exemplar read from the WAL (write ID 0) for the
// series lset, if it is valid and in order (with an out-of-order window
// of window ms); it reports whether it did.
func (es *exemplarStorage) addReplayed(lset labels.Labels, e Exemplar, window int64) bool {
	e.Labels = e.Labels.WithoutEmpty()
	if checkExemplar(&e) != nil {
		return false
	}
	hash := lset.Hash()
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.addLocked(lset, hash, &e, 0, window) == nil
}

// addLocked appends e, of the series lset with hash hash, under write ID
// id, after checking its order (window: the out-of-order window in ms);
// it returns why not if it did not. An
// exemplar older than the series' newest (within the window) that has
// the time of one stored and equals it is a duplicate. Requires mu held
// for writing.
func (es *exemplarStorage) addLocked(lset labels.Labels, hash uint64, e *Exemplar, id uint64, window int64) error {
	if es.limit == 0 {
		return ErrExemplarsDisabled
	}
	s := es.lookupLocked(lset, hash)
	if s != nil {
		if err := exemplarOrder(&es.ring[s.newest].e, e, window); err != nil {
			if err == ErrOutOfOrderExemplar {
				es.metrics.outOfOrder.Inc()
			}
			return err
		}
		if e.Ts < es.ring[s.newest].e.Ts && es.storedLocked(s, e) {
			return ErrDuplicateExemplar
		}
	}
	slot := es.next
	if n := len(es.ring); n < es.limit {
		if n == cap(es.ring) {
			r := make([]exemplarEntry, n, min(es.limit, max(16, 2*n)))
			copy(r, es.ring)
			es.ring = r
		}
		es.ring = es.ring[:n+1]
	} else {
		// Full: slot holds the oldest exemplar of all (in append order).
		es.evictLocked(slot)
		if s != nil && s.oldest == -1 {
			s = nil // that was the series' only exemplar; its entry is gone
		}
	}
	ent := exemplarEntry{e: *e, id: id, next: -1, prev: -1}
	switch {
	case s == nil:
		s = &exemplarSeries{lset: lset, hash: hash, oldest: slot, newest: slot}
		s.collision = es.index[hash]
		es.index[hash] = s
		es.numSeries++
	case e.Ts >= es.ring[s.newest].e.Ts:
		ent.prev = s.newest
		es.ring[s.newest].next = slot
		s.newest = slot
	default:
		// Out of order: after the newest exemplar not newer than e, or
		// first.
		at := s.newest
		for at != -1 && es.ring[at].e.Ts > e.Ts {
			at = es.ring[at].prev
		}
		if at == -1 {
			ent.next = s.oldest
			es.ring[s.oldest].prev = slot
			s.oldest = slot
		} else {
			ent.prev, ent.next = at, es.ring[at].next
			es.ring[ent.next].prev = slot // at is not the newest: e.Ts < its Ts
			es.ring[at].next = slot
		}
	}
	ent.series = s
	es.ring[slot] = ent
	if es.next++; es.next == es.limit {
		es.next = 0
	}
	es.metrics.appended.Inc()
	return nil
}

// storedLocked reports whether the series s holds an exemplar equal to e
// (Exemplar.Equals) at e's time. Requires mu held (either side).
func (es *exemplarStorage) storedLocked(s *exemplarSeries, e *Exemplar) bool {
	for i := s.newest; i != -1 && es.ring[i].e.Ts >= e.Ts; i = es.ring[i].prev {
		if es.ring[i].e.Ts == e.Ts && es.ring[i].e.Equals(*e) {
			return true
		}
	}
	return false
}

// evictLocked frees slot, unlinking its exemplar from its series' list
// and removing the series' index entry if that was its last exemplar (its
// oldest is then -1). Requires mu held for writing.
func (es *exemplarStorage) evictLocked(slot int) {
	ent := &es.ring[slot]
	s := ent.series
	if ent.prev == -1 {
		s.oldest = ent.next
	} else {
		es.ring[ent.prev].next = ent.next
	}
	if ent.next == -1 {
		s.newest = ent.prev
	} else {
		es.ring[ent.next].prev = ent.prev
	}
	if s.oldest == -1 {
		es.unindexLocked(s)
	}
	*ent = exemplarEntry{}
}

// unindexLocked removes s from the index. Requires mu held for writing.
func (es *exemplarStorage) unindexLocked(s *exemplarSeries) {
	p := es.index[s.hash]
	if p == s {
		if s.collision == nil {
			delete(es.index, s.hash)
		} else {
			es.index[s.hash] = s.collision
		}
	} else {
		for p.collision != s {
			p = p.collision
		}
		p.collision = s.collision
	}
	s.collision = nil
	es.numSeries--
}

// resize makes the ring hold at most n exemplars (negative: 0), keeping
// the newest of those stored, in their order. O(exemplars stored).
func (es *exemplarStorage) resize(n int64) {
	// More than 2^31 exemplars (128 GiB of ring) cannot be meant; the
	// bound keeps the arithmetic in int on every platform.
	n = min(max(n, 0), math.MaxInt32)
	es.mu.Lock()
	defer es.mu.Unlock()
	if int64(es.limit) == n {
		return
	}
	old, oldLen := es.ring, len(es.ring)
	first := es.firstLocked()
	keep := min(oldLen, int(n))
	ring := make([]exemplarEntry, keep)
	// Rebuild every list: forget all positions, copy the kept exemplars
	// in append order, then link each series' in time order (append order
	// among equal times).
	for _, s := range es.index {
		for ; s != nil; s = s.collision {
			s.oldest, s.newest = -1, -1
		}
	}
	bySeries := map[*exemplarSeries][]int{}
	for i := range keep {
		src := &old[(first+oldLen-keep+i)%oldLen]
		ring[i] = exemplarEntry{e: src.e, id: src.id, next: -1, prev: -1, series: src.series}
		bySeries[src.series] = append(bySeries[src.series], i)
	}
	for s, slots := range bySeries {
		slices.SortStableFunc(slots, func(a, b int) int { return cmp.Compare(ring[a].e.Ts, ring[b].e.Ts) })
		for k, i := range slots {
			if k > 0 {
				ring[i].prev, ring[slots[k-1]].next = slots[k-1], i
			}
		}
		s.oldest, s.newest = slots[0], slots[len(slots)-1]
	}
	var gone []*exemplarSeries
	for _, s := range es.index {
		for ; s != nil; s = s.collision {
			if s.oldest == -1 {
				gone = append(gone, s)
			}
		}
	}
	for _, s := range gone {
		es.unindexLocked(s)
	}
	es.ring, es.limit = ring, int(n)
	es.next = 0
	if keep < es.limit {
		es.next = keep
	}
	es.size.Store(n)
}

// firstLocked returns the slot of the oldest exemplar (0 if none).
// Requires mu held (either side).
func (es *exemplarStorage) firstLocked() int {
	if es.next == len(es.ring) {
		return 0 // growing: the ring starts at 0
	}
	return es.next
}

// selectVisible returns the exemplars in [start, end] that snap sees
// (isolation.go: exemplarVisible) of the series matching one of the
// matcher sets, per series in time order, sorted by series labels.
func (es *exemplarStorage) selectVisible(snap *readSnapshot, start, end int64, matchers [][]*labels.Matcher) []ExemplarQueryResult {
	out := []ExemplarQueryResult{}
	es.mu.RLock()
	defer es.mu.RUnlock()
	for _, s := range es.index {
		for ; s != nil; s = s.collision {
			if es.ring[s.oldest].e.Ts > end || es.ring[s.newest].e.Ts < start || !matchesAnySet(s.lset, matchers) {
				continue
			}
			var r ExemplarQueryResult
			for i := s.oldest; i != -1; i = es.ring[i].next {
				ent := &es.ring[i]
				if ent.e.Ts > end {
					break
				}
				if ent.e.Ts >= start && exemplarVisible(snap, ent.id) {
					r.Exemplars = append(r.Exemplars, ent.e)
				}
			}
			if len(r.Exemplars) > 0 {
				r.SeriesLabels = s.lset
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b ExemplarQueryResult) int { return labels.Compare(a.SeriesLabels, b.SeriesLabels) })
	return out
}

// matchesAnySet reports whether lset matches every matcher of at least one
// of the sets.
func matchesAnySet(lset labels.Labels, sets [][]*labels.Matcher) bool {
	for _, ms := range sets {
		if labels.MatchLabels(lset, ms...) {
			return true
		}
	}
	return false
}

// stats returns, for the metrics, the exemplars stored, the series they
// belong to and the time of the oldest (math.MinInt64 if none).
func (es *exemplarStorage) stats() (exemplars, series int, oldest int64) {
	es.mu.RLock()
	defer es.mu.RUnlock()
	oldest = math.MinInt64
	if len(es.ring) > 0 {
		oldest = es.ring[es.firstLocked()].e.Ts
	}
	return len(es.ring), es.numSeries, oldest
}

// checkInvariants checks the invariants written on exemplarStorage, and
// that no exemplar has a write ID that iso has not handed out, and
// returns the first violation found, nil if none. Safe for concurrent
// use.
func (es *exemplarStorage) checkInvariants(iso *isolation) error {
	es.mu.RLock()
	defer es.mu.RUnlock()
	if err := es.checkInvariantsLocked(); err != nil {
		return err
	}
	if id, maxID := es.highestIDLocked(), iso.highWatermark(); id > maxID {
		return fmt.Errorf("exemplars: an exemplar has write ID %d, above the %d handed out", id, maxID)
	}
	return nil
}

// checkInvariantsLocked checks the ring, the index and the lists;
// requires mu held (either side).
func (es *exemplarStorage) checkInvariantsLocked() error {
	n := len(es.ring)
	switch {
	case int64(es.limit) != es.size.Load():
		return fmt.Errorf("exemplars: limit %d, size says %d", es.limit, es.size.Load())
	case n > es.limit || cap(es.ring) > es.limit:
		return fmt.Errorf("exemplars: ring of %d slots (capacity %d) over the limit of %d", n, cap(es.ring), es.limit)
	case n < es.limit && es.next != n, n == es.limit && n > 0 && (es.next < 0 || es.next >= n), n == 0 && es.next != 0:
		return fmt.Errorf("exemplars: next slot %d in a ring of %d of at most %d", es.next, n, es.limit)
	}
	for i := range n {
		if es.ring[i].series == nil {
			return fmt.Errorf("exemplars: slot %d of %d is empty", i, n)
		}
	}
	listed, entries := 0, 0
	for h, s := range es.index {
		for ; s != nil; s = s.collision {
			entries++
			if s.hash != h || s.lset.Hash() != h {
				return fmt.Errorf("exemplars: series %s indexed under hash %d, its labels hash to %d", s.lset, h, s.lset.Hash())
			}
			prev, last := int64(math.MinInt64), -1
			for i := s.oldest; i != -1; i = es.ring[i].next {
				if i < 0 || i >= n || es.ring[i].series != s {
					return fmt.Errorf("exemplars: series %s lists slot %d, which is not its", s.lset, i)
				}
				if es.ring[i].prev != last {
					return fmt.Errorf("exemplars: series %s: slot %d links back to %d, follows %d", s.lset, i, es.ring[i].prev, last)
				}
				if t := es.ring[i].e.Ts; t < prev {
					return fmt.Errorf("exemplars: series %s: exemplar at %d follows one at %d", s.lset, t, prev)
				}
				prev, last = es.ring[i].e.Ts, i
				if listed++; listed > n {
					return fmt.Errorf("exemplars: the series' lists hold more than the %d exemplars stored (a cycle?)", n)
				}
			}
			if last == -1 || last != s.newest {
				return fmt.Errorf("exemplars: series %s: list ends at slot %d, newest is %d", s.lset, last, s.newest)
			}
		}
	}
	if listed != n || entries != es.numSeries {
		return fmt.Errorf("exemplars: lists hold %d exemplars of %d series; %d stored of %d series", listed, entries, n, es.numSeries)
	}
	return nil
}

// highestIDLocked returns the highest write ID stored with an exemplar.
// Requires mu held (either side).
func (es *exemplarStorage) highestIDLocked() uint64 {
	var id uint64
	for i := range es.ring {
		id = max(id, es.ring[i].id)
	}
	return id
}
