package tsdb

import (
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// The head's tombstones.
//
// The head keeps the intervals DB.Delete marked deleted in memory, per
// series, in one immutable value behind an atomic pointer: a Querier takes
// the value current at its creation and keeps it. Delete installs a new
// value with the intervals added; head truncation installs one without the
// intervals that end before the head and those of series it dropped. The
// WAL makes them durable (Tombstones records).

// headTombstones are the head's deletion intervals. A value is never
// modified: Delete and truncation install a new one.
type headTombstones struct {
	m map[SeriesRef]tombstones.Intervals
}

// get returns the intervals of series ref (nil-safe).
func (t *headTombstones) get(ref SeriesRef) tombstones.Intervals {
	if t == nil {
		return nil
	}
	return t.m[ref]
}

// tombstones returns the head's current deletion intervals, nil if none.
func (h *head) tombstones() *headTombstones { return h.tombs.Load() }

// deletions returns the intervals a Delete of [mint, maxt] adds for the
// head series matching ms, and the same as WAL stones. It reads the head
// with no commit in flight (see "Deletes and commits" in isolation.go):
// each series' interval ends at its newest sample then, so the commits
// that come after are left whole. Takes closeMu (write side), then
// MemPostings.mu and each series lock, one at a time.
func (h *head) deletions(mint, maxt int64, ms []*labels.Matcher) (map[SeriesRef]tombstones.Intervals, []record.Stone, error) {
	h.closeMu.Lock()
	defer h.closeMu.Unlock()
	p, err := index.PostingsForMatchers(h.postings, ms...)
	if err != nil {
		return nil, nil, err
	}
	if h.deleteHook != nil {
		h.deleteHook()
	}
	add := map[SeriesRef]tombstones.Intervals{}
	var stones []record.Stone
	for p.Next() {
		s := h.series.getByRef(SeriesRef(p.At()))
		if s == nil {
			continue
		}
		s.mu.Lock()
		newest := s.lastTLocked()
		if _, hi := s.lateBoundsLocked(); hi > newest {
			newest = hi // only late samples left
		}
		s.mu.Unlock()
		if newest < mint {
			continue
		}
		iv := tombstones.Intervals{{Mint: mint, Maxt: min(maxt, newest)}}
		add[s.ref] = iv
		stones = append(stones, record.Stone{Ref: uint64(s.ref), Intervals: iv})
	}
	if err := p.Err(); err != nil {
		return nil, nil, err
	}
	return add, stones, nil
}

// addTombstones installs the head's intervals plus add. Takes tombsMu;
// Delete calls it holding DB.mu.
func (h *head) addTombstones(add map[SeriesRef]tombstones.Intervals) {
	if len(add) == 0 {
		return
	}
	h.tombsMu.Lock()
	defer h.tombsMu.Unlock()
	next := &headTombstones{m: map[SeriesRef]tombstones.Intervals{}}
	if cur := h.tombs.Load(); cur != nil {
		for ref, itvs := range cur.m {
			next.m[ref] = itvs
		}
	}
	for ref, itvs := range add {
		cur := next.m[ref]
		for _, iv := range itvs {
			cur = cur.Add(iv)
		}
		next.m[ref] = cur
	}
	h.tombs.Store(next)
}

// truncateTombstones drops intervals that end before mint and those of
// series no longer in the head. Takes tombsMu, and refTable.mu under it
// (looking series up by ref).
func (h *head) truncateTombstones(mint int64) {
	h.tombsMu.Lock()
	defer h.tombsMu.Unlock()
	cur := h.tombs.Load()
	if cur == nil {
		return
	}
	next := &headTombstones{m: map[SeriesRef]tombstones.Intervals{}}
	for ref, itvs := range cur.m {
		if h.series.getByRef(ref) == nil {
			continue
		}
		var keep tombstones.Intervals
		for _, iv := range itvs {
			if iv.Maxt >= mint {
				keep = append(keep, iv)
			}
		}
		if len(keep) > 0 {
			next.m[ref] = keep
		}
	}
	if len(next.m) == 0 {
		next = nil
	}
	h.tombs.Store(next)
}
