package tsdb

import (
	"fmt"
	"unique"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/labels"
)

// The head's side of series metadata (metadata.go): the versions a series
// keeps, the Appender's buffer, Commit's application and WAL records, and
// replay. Which version a read sees is decided in isolation.go
// (visibleMetadata).

// metaVersion is one metadata value a commit set on a series.
type metaVersion struct {
	m  unique.Handle[Metadata] // interned: series of one metric share it
	id uint64                  // the commit's write ID; 0: visible to all
}

// seriesMeta is a series' metadata: its newest version and the older ones
// an open read may still need. It lives in the series' seriesExtra, so
// series without metadata pay nothing for it, and is guarded by the
// series' lock.
//
// Invariants: older holds versions in the order commits applied them,
// cur after them; after a change, at most the first version of older has
// a write ID below the low watermark the changing commit saw, and older
// is nil if cur's is (trimMetaVersions). Versions are only dropped by
// the next change of the series' metadata, so a series keeps the version
// before its newest (and, if it was updated while long reads were open, a
// few more) until its next update.
type seriesMeta struct {
	cur   metaVersion
	older []metaVersion
}

// pendingMeta is a metadata update buffered by an Appender.
type pendingMeta struct {
	s *memSeries
	m unique.Handle[Metadata]
}

// UpdateMetadata implements Appender.
func (a *headAppender) UpdateMetadata(ref SeriesRef, lset labels.Labels, m Metadata) (SeriesRef, error) {
	if a.done {
		return 0, ErrAppenderClosed
	}
	if err := a.ctxErr("update metadata"); err != nil {
		return 0, err
	}
	h := a.head
	if err := m.validate(); err != nil {
		return 0, fmt.Errorf("%w (series %s)", err, lset)
	}
	if h.closed.Load() {
		return 0, fmt.Errorf("tsdb: update metadata: %w", ErrClosed)
	}
	var s *memSeries
	if ref != 0 {
		s = h.series.getByRef(ref)
	}
	hm := unique.Make(m)
	for {
		if s == nil {
			lset := lset.WithoutEmpty()
			if s = h.series.getByHash(lset.Hash(), lset); s == nil {
				return 0, fmt.Errorf("%w: metadata for %s (ref %d)", ErrUnknownSeries, lset, ref)
			}
		}
		s.mu.Lock()
		if !s.removed {
			break
		}
		s.mu.Unlock()
		s = nil
	}
	b := a.appendBatch
	var i int32
	buffered := false
	if b != nil {
		i, buffered = b.metaIdx[s]
	}
	if !buffered && s.currentMetaLocked() == hm {
		// Unchanged: nothing to apply or log (as Prometheus does).
		s.mu.Unlock()
		return s.ref, nil
	}
	if !buffered {
		s.pending++ // the series stays in the head until Commit or Rollback
	}
	s.mu.Unlock()
	if buffered {
		b.meta[i].m = hm // the transaction's last update of the series wins
		return s.ref, nil
	}
	if b == nil {
		b = a.newBatch()
	}
	if b.metaIdx == nil {
		b.metaIdx = map[*memSeries]int32{}
	}
	b.metaIdx[s] = int32(len(b.meta))
	b.meta = append(b.meta, pendingMeta{s: s, m: hm})
	if !a.tracked {
		a.track()
	}
	return s.ref, nil
}

// currentMetaLocked returns the series' newest metadata, committed or
// being committed; the zero handle if it has none. Requires s.mu held.
func (s *memSeries) currentMetaLocked() unique.Handle[Metadata] {
	if s.x == nil || s.x.meta == nil {
		return unique.Handle[Metadata]{}
	}
	return s.x.meta.cur.m
}

// applyMetadata applies the transaction's metadata updates under write ID
// id (0 with isolation off: visible to all at once) and releases the
// series they pinned. Called by Commit while id is in flight.
func (b *appendBatch) applyMetadata(id, lowWatermark uint64) {
	for i := range b.meta {
		p := &b.meta[i]
		s := p.s
		s.mu.Lock()
		s.setMetaLocked(p.m, id, lowWatermark)
		s.pending--
		s.mu.Unlock()
	}
}

// setMetaLocked makes m the series' newest metadata, set by the commit
// with write ID id; lowWatermark is the low watermark the commit saw.
// Requires s.mu held.
func (s *memSeries) setMetaLocked(m unique.Handle[Metadata], id, lowWatermark uint64) {
	x := s.extraLocked()
	if x.meta == nil {
		x.meta = &seriesMeta{cur: metaVersion{m: m, id: id}}
		return
	}
	sm := x.meta
	sm.older = append(sm.older, sm.cur)
	sm.cur = metaVersion{m: m, id: id}
	sm.older = trimMetaVersions(sm.older, sm.cur, lowWatermark)
}

// clearPendingMeta releases the series pinned by buffered metadata
// updates that will not be applied (Rollback, a failed or closed Commit,
// a leaked Appender).
func (b *appendBatch) clearPendingMeta() {
	for i := range b.meta {
		s := b.meta[i].s
		s.mu.Lock()
		s.pending--
		s.mu.Unlock()
	}
}

// resetMeta empties the batch's metadata buffer for reuse (no series may
// be pinned by it any more).
func (b *appendBatch) resetMeta() {
	clear(b.meta)
	b.meta = b.meta[:0]
	if len(b.metaIdx) > maxPooledSamples {
		b.metaIdx = nil
	}
	clear(b.metaIdx)
}

// metadataRecord appends to recs a Metadata record of the transaction's
// updates, if it has any, encoded into sc.mrec; it also adds to sc.series
// the series of those updates not yet in the WAL (an update may name a
// series another open Appender created and has not logged).
func (sc *walScratch) metadataRecord(recs [][]byte, b *appendBatch) [][]byte {
	if len(b.meta) == 0 {
		return recs
	}
	sc.meta = sc.meta[:0]
	for i := range b.meta {
		p := &b.meta[i]
		m := p.m.Value()
		sc.meta = append(sc.meta, record.RefMetadata{Ref: uint64(p.s.ref), Type: uint8(m.Type), Unit: m.Unit, Help: m.Help})
	}
	var enc record.Encoder
	sc.mrec = enc.Metadata(sc.meta, sc.mrec[:0])
	clear(sc.meta) // drop string references
	return append(recs, sc.mrec)
}

// metaSeries appends to series the series of the batch's metadata updates
// that have no Series record in the WAL yet.
func (b *appendBatch) metaSeries(series []record.RefSeries) []record.RefSeries {
	for i := range b.meta {
		if s := b.meta[i].s; !s.walLogged.Load() {
			series = append(series, record.RefSeries{Ref: uint64(s.ref), Labels: s.lset})
		}
	}
	return series
}

// replayMetadata applies the entries of a Metadata record (of the
// checkpoint or a segment, in log order) with write ID 0: the newest one
// of a series replaces whatever it had. Entries of series no record
// defined are counted in unknownMeta.
func (rp *replayer) replayMetadata(ms []record.RefMetadata) {
	for _, e := range ms {
		ref := e.Ref
		rp.maxRef = max(rp.maxRef, ref)
		if d, ok := rp.dups[ref]; ok {
			ref = d
		}
		s := rp.h.series.getByRef(SeriesRef(ref))
		if s == nil {
			rp.unknownMeta++
			continue
		}
		hm := unique.Make(Metadata{Type: metricTypeFromWAL(e.Type), Unit: e.Unit, Help: e.Help})
		s.mu.Lock()
		x := s.extraLocked()
		if x.meta == nil {
			x.meta = &seriesMeta{}
		}
		x.meta.cur, x.meta.older = metaVersion{m: hm}, nil
		s.mu.Unlock()
	}
}

// checkMetaLocked checks the metadata versions of s and returns the
// highest write ID they hold: no version without a value, no write IDs
// with isolation off. (The IDs are checked against the high watermark by
// the caller, as the rings' are.) Requires s.mu held.
func (s *memSeries) checkMetaLocked(h *head) (highest uint64, err error) {
	if s.x == nil || s.x.meta == nil {
		return 0, nil
	}
	sm := s.x.meta
	for _, v := range append([]metaVersion{sm.cur}, sm.older...) {
		if v.m == (unique.Handle[Metadata]{}) {
			return 0, fmt.Errorf("metadata version without a value")
		}
		if !h.isolationOn && v.id != 0 {
			return 0, fmt.Errorf("metadata version with write ID %d with isolation off", v.id)
		}
		highest = max(highest, v.id)
	}
	return highest, nil
}
