package tsdb

import (
	"math"
)

// raiseMinValidTime makes the head reject samples before t from now on:
// appends with ErrOutOfBounds, and commits in progress drop them (counted as
// out of bounds). It never lowers the bound.
func (h *head) raiseMinValidTime(t int64) {
	atomicMax(&h.minValidTime, t)
}

// truncate drops every in-order chunk that ends before mint, the late
// chunks that head compactions up to lateGen wrote into blocks (see
// freezeLate), and the series left without chunks and without samples
// buffered by an open Appender. The caller makes sure no reader needs the
// dropped data any more. Afterwards MinTime is the time of the oldest
// sample left (below mint only for late samples that arrived after their
// range was written into a block), and
// the head is empty (MinTime math.MaxInt64, MaxTime math.MinInt64) if none
// is left, so that the next compaction starts at the oldest data rather
// than walking the empty ranges after mint.
//
// Commits go on meanwhile (at mint or later: minValidTime is raised
// first). A commit that applies a sample to a series after truncate
// scanned it sees truncGen odd (the series lock orders the two), so its
// range is folded into truncMin/truncMax, which truncate reads under
// rangeMu together with installing its result; a commit that applied its
// samples before the scan has them counted by the scan. So MinTime never
// exceeds the time of a committed sample.
//
// The caller holds cmtx (no two truncations at once) and no head lock.
// Takes rangeMu, each series lock, stripe locks (with a series lock under
// them), MemPostings.mu, tombsMu (with refTable.mu under it), one at a
// time except as noted.
func (h *head) truncate(mint int64, lateGen uint64) {
	h.raiseMinValidTime(mint)

	h.rangeMu.Lock()
	h.truncMin, h.truncMax = math.MaxInt64, math.MinInt64
	h.truncGen.Add(1) // odd: commits record their range
	h.rangeMu.Unlock()

	var gone []*memSeries
	oldest, newest := int64(math.MaxInt64), int64(math.MinInt64)
	dropped := 0 // chunks
	h.series.refs.each(func(s *memSeries) {
		s.mu.Lock()
		had := len(s.chunks)
		s.truncateChunksLocked(mint)
		dropped += had - len(s.chunks) + s.truncateLateLocked(lateGen)
		lo, hi := s.lateBoundsLocked()
		if n := len(s.chunks); n > 0 {
			lo, hi = min(lo, s.chunks[0].minTime), max(hi, s.chunks[n-1].maxTime)
		}
		if lo <= hi {
			oldest, newest = min(oldest, lo), max(newest, hi)
		} else if s.pending == 0 {
			gone = append(gone, s)
		}
		s.mu.Unlock()
	})
	h.metrics.chunks.Sub(float64(dropped))
	if len(gone) > 0 {
		refs := make(map[uint64]struct{}, len(gone))
		for _, s := range gone {
			if h.series.remove(s, SeriesRef(h.lastSeriesRef.Load())) {
				refs[uint64(s.ref)] = struct{}{}
			}
		}
		h.postings.Delete(refs)
		h.numSeries.Add(-int64(len(refs)))
	}
	h.rangeMu.Lock()
	oldest, newest = min(oldest, h.truncMin), max(newest, h.truncMax)
	if oldest == math.MaxInt64 {
		h.minTime.Store(math.MaxInt64)
		h.maxTime.Store(math.MinInt64)
	} else {
		// In-order chunks never straddle mint (they are cut at range
		// boundaries and mint is one), so only late samples that arrived
		// after their range was written into a block lie before it.
		h.minTime.Store(oldest)
		// The newest sample is never truncated while any is left, so
		// maxTime stands; newest only covers a commit racing with the
		// reset of an empty head.
		atomicMax(&h.maxTime, newest)
	}
	h.truncGen.Add(1) // even: done
	h.rangeMu.Unlock()
	// Deletions must keep covering the late samples left before mint.
	h.truncateTombstones(min(mint, oldest))
	h.assertInvariants("head truncation", false) // the caller holds cmtx: no other truncation
}

// truncateChunksLocked drops the chunks that end before mint, moving the
// rest to the front of the slice in place: every reader of s.chunks holds
// s.mu (memSeries.chunks), so none sees the move, and the slice keeps its
// capacity for the chunks to come instead of a copy being allocated at
// every truncation. Requires s.mu held.
func (s *memSeries) truncateChunksLocked(mint int64) {
	n := 0
	for n < len(s.chunks) && s.chunks[n].maxTime < mint {
		n++
	}
	if n == 0 {
		return
	}
	if s.hasLateLocked() {
		s.x.late.forgetTimes(s.chunks[:n])
	}
	if n == len(s.chunks) {
		s.chunks, s.app, s.nextAt = nil, nil, math.MinInt64
		if s.x != nil {
			s.x.xor2, s.x.happ, s.x.fapp = nil, nil, nil
		}
		return
	}
	m := copy(s.chunks, s.chunks[n:])
	clear(s.chunks[m:]) // drop the truncated chunks for the collector
	s.chunks = s.chunks[:m]
}
