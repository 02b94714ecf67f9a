package tsdb

import "github.com/isotsdb/tsdb/internal/tombstones"

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
