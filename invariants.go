package tsdb

import (
	"fmt"
	"slices"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/index"
)

// Invariants of the head, checked under the invariants build tag.
//
// Built with -tags invariants (scripts/test runs the root package and
// internal/ so), the head checks its invariants at safe points and panics
// on a violation: after every commit (the isolation state and the
// write-ID rings of the series the commit wrote), after every truncation
// and compaction, and after the WAL replay of Open (everything below).
// The lock order (internal/lockorder) is checked on every lock taken. A
// normal build does none of it: invariantsEnabled is false, the assert
// methods (invariants_off.go) are empty, and the compiler drops their
// calls. The tests also call checkInvariants on every test DB after it is
// closed, in every build.

// checkInvariants checks the head and returns the first violation found,
// nil if none:
//   - the isolation state (isolation.checkInvariants);
//   - the exemplar storage (exemplarStorage.checkInvariants);
//   - every series in the ref table is found there by its own ref, and
//     its write-ID ring is within bounds (writeIDRing.checkInvariants),
//     empty with isolation off;
//   - the postings are sorted, deduplicated and consistent
//     (index.MemPostings.CheckInvariants).
//
// With quiescent, the caller also guarantees that nothing runs
// concurrently (Open before it returns, or a closed DB), and the series
// maps are checked against each other: the ref table and the stripes
// hold the same series, none of them removed, numSeries of them, and the
// postings list of all series holds exactly their refs.
//
// Without quiescent it may run concurrently with appends and commits, but
// not with a truncation: the caller holds cmtx.
func (h *head) checkInvariants(quiescent bool) error {
	if err := h.iso.checkInvariants(); err != nil {
		return err
	}
	if err := h.exemplars.checkInvariants(h.iso); err != nil {
		return err
	}
	var err error
	var refs []uint64
	var ids ringIDs
	h.series.refs.each(func(s *memSeries) {
		if err != nil {
			return
		}
		if got := h.series.getByRef(s.ref); got != s {
			err = fmt.Errorf("head: series %s is in the ref table, but its ref %d finds another", s.lset, s.ref)
			return
		}
		s.mu.Lock()
		err = ids.checkLocked(h, s)
		removed := s.removed
		s.mu.Unlock()
		if err != nil || !quiescent {
			return
		}
		switch {
		case removed:
			err = fmt.Errorf("head: series %d %s is removed but still in the ref table", s.ref, s.lset)
		case h.series.getByHash(s.lset.Hash(), s.lset) != s:
			err = fmt.Errorf("head: series %d %s is in the ref table but not in its stripe", s.ref, s.lset)
		}
		refs = append(refs, uint64(s.ref))
	})
	if err == nil {
		err = ids.checkIssued(h)
	}
	if err != nil {
		return err
	}
	if err := h.postings.CheckInvariants(); err != nil {
		return fmt.Errorf("head: %w", err)
	}
	if !quiescent {
		return nil
	}
	return h.checkSeriesMaps(refs)
}

// checkSeriesMaps checks that the stripes hold exactly the series of the
// ref table, whose refs are refs, and that numSeries and the postings of
// all series agree with them. Nothing may run concurrently.
func (h *head) checkSeriesMaps(refs []uint64) error {
	n := 0
	for i := range h.series.stripes {
		st := &h.series.stripes[i]
		st.mu.RLock()
		var inStripe []*memSeries
		for _, s := range st.byHash {
			inStripe = append(inStripe, s)
		}
		for hash, c := range st.conflicts {
			if st.byHash[hash] == nil {
				st.mu.RUnlock()
				return fmt.Errorf("head: stripe %d has conflicts for hash %x but no first series", i, hash)
			}
			inStripe = append(inStripe, c...)
		}
		st.mu.RUnlock()
		for _, s := range inStripe {
			if h.series.getByRef(s.ref) != s {
				return fmt.Errorf("head: series %d %s is in stripe %d but not in the ref table", s.ref, s.lset, i)
			}
		}
		n += len(inStripe)
	}
	if n != len(refs) {
		return fmt.Errorf("head: %d series in the stripes, %d in the ref table", n, len(refs))
	}
	if got := h.numSeries.Load(); got != int64(n) {
		return fmt.Errorf("head: numSeries is %d, the head holds %d series", got, n)
	}
	slices.Sort(refs) // the ref table's pages are in order, its large refs are not
	all, err := index.ExpandPostings(h.postings.All())
	if err != nil {
		return fmt.Errorf("head: postings of all series: %w", err)
	}
	if !slices.Equal(all, refs) {
		return fmt.Errorf("head: the postings of all series hold %d refs, the ref table %d, and they differ", len(all), len(refs))
	}
	return nil
}

// checkCommitInvariants checks what a commit of b changed: the isolation
// state and the write-ID rings of the series b wrote. It is safe to run
// concurrently with anything.
func (h *head) checkCommitInvariants(b *appendBatch) error {
	if err := h.iso.checkInvariants(); err != nil {
		return err
	}
	if len(b.exemplars) > 0 {
		if err := h.exemplars.checkInvariants(h.iso); err != nil {
			return err
		}
	}
	var ids ringIDs
	var last *memSeries
	for i := range b.samples {
		s := b.samples[i].s
		if s == last {
			continue
		}
		last = s
		s.mu.Lock()
		err := ids.checkLocked(h, s)
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return ids.checkIssued(h)
}

// ringIDs checks write-ID rings series by series, keeping the highest ID
// seen for one check against the IDs handed out at the end.
type ringIDs struct {
	highest uint64
	in      *memSeries // the series whose ring holds highest
}

// checkLocked checks the write-ID ring of s. Requires s.mu held.
func (r *ringIDs) checkLocked(h *head, s *memSeries) error {
	if !h.isolationOn && s.txs.len() != 0 {
		return fmt.Errorf("head: series %d %s has write IDs with isolation off", s.ref, s.lset)
	}
	highest, err := s.txs.checkInvariants(s.total)
	if err != nil {
		return fmt.Errorf("head: series %d %s: %w", s.ref, s.lset, err)
	}
	if err := s.checkAppendersLocked(); err != nil {
		return fmt.Errorf("head: series %d %s: %w", s.ref, s.lset, err)
	}
	lateHighest, err := s.checkLateLocked(h)
	if err != nil {
		return fmt.Errorf("head: series %d %s: %w", s.ref, s.lset, err)
	}
	metaHighest, err := s.checkMetaLocked(h)
	if err != nil {
		return fmt.Errorf("head: series %d %s: %w", s.ref, s.lset, err)
	}
	highest = max(highest, lateHighest, metaHighest)
	if highest > r.highest {
		r.highest, r.in = highest, s
	}
	return nil
}

// checkAppendersLocked checks xorOpenInvariant: with an open XOR chunk
// (s.app set), s.x holds no other appender and no histogram as the newest
// sample, and the open chunk is an XOR chunk. Requires s.mu held.
func (s *memSeries) checkAppendersLocked() error {
	if s.app == nil {
		return nil
	}
	if n := len(s.chunks); n == 0 || s.chunks[n-1].chunk.Encoding() != chunks.EncXOR {
		return fmt.Errorf("XOR appender without an open XOR chunk")
	}
	if x := s.x; x != nil && (x.xor2 != nil || x.happ != nil || x.fapp != nil || x.lastH != nil || x.lastFH != nil) {
		return fmt.Errorf("open XOR chunk, but seriesExtra has another appender or a histogram as the newest sample")
	}
	return nil
}

// checkLateLocked checks the late samples of s (head_late.go) and returns
// the highest write ID they hold: the open buffer strictly sorted by time
// and no larger than lateOpenMax; each closed chunk with samples in
// [minTime, maxTime] inside one block range, and one write ID per sample
// or none; no write IDs with isolation off; a lateSeries only while it
// holds samples. Requires s.mu held.
func (s *memSeries) checkLateLocked(h *head) (highest uint64, err error) {
	if !s.hasLateLocked() {
		return 0, nil
	}
	l := s.x.late
	if len(l.chunks) == 0 && len(l.open) == 0 {
		return 0, fmt.Errorf("empty late samples kept")
	}
	if len(l.open) > lateOpenMax {
		return 0, fmt.Errorf("%d late samples open, more than %d", len(l.open), lateOpenMax)
	}
	for i, o := range l.open {
		if i > 0 && o.t <= l.open[i-1].t {
			return 0, fmt.Errorf("open late samples not strictly sorted at %d", o.t)
		}
		highest = max(highest, o.id)
	}
	for _, c := range l.chunks {
		n := c.chunk.NumSamples()
		switch {
		case n == 0 || c.minTime > c.maxTime:
			return 0, fmt.Errorf("late chunk [%d, %d] with %d samples", c.minTime, c.maxTime, n)
		case rangeEnd(c.minTime, h.chunkRange) <= c.maxTime:
			return 0, fmt.Errorf("late chunk [%d, %d] straddles a block range boundary", c.minTime, c.maxTime)
		case c.ids != nil && len(c.ids) != n:
			return 0, fmt.Errorf("late chunk [%d, %d] has %d write IDs for %d samples", c.minTime, c.maxTime, len(c.ids), n)
		}
		it := c.chunk.Iterator(nil)
		for it.Next() != chunks.ValNone {
			if t := it.AtT(); t < c.minTime || t > c.maxTime {
				return 0, fmt.Errorf("late chunk [%d, %d] holds a sample at %d", c.minTime, c.maxTime, t)
			}
		}
		if err := it.Err(); err != nil {
			return 0, fmt.Errorf("late chunk [%d, %d]: %w", c.minTime, c.maxTime, err)
		}
		for _, id := range c.ids {
			highest = max(highest, id)
		}
	}
	if !h.isolationOn && highest != 0 {
		return 0, fmt.Errorf("late samples have write IDs with isolation off")
	}
	return highest, nil
}

// checkIssued checks that every ID seen had been handed out. The caller
// holds no series lock, and has released those it checked the rings under.
func (r *ringIDs) checkIssued(h *head) error {
	if issued := h.iso.highWatermark(); r.highest > issued {
		return fmt.Errorf("head: series %d %s: write-ID ring holds ID %d, above the %d handed out", r.in.ref, r.in.lset, r.highest, issued)
	}
	return nil
}
