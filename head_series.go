package tsdb

import (
	"context"
	"fmt"
	"math"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
)

// Listing the head's series with their newest sample (DB.HeadSeries).
//
// A scrape loop that restarts has forgotten which series its targets
// exposed; the head has not (the WAL replay brought them back). Listing
// them with their newest sample tells it which series to end with a stale
// marker (package value) if a target no longer exposes them, without
// reading their samples: for nearly every series the newest sample is at
// hand under the series lock (the open chunk's appender keeps its last
// value), so the listing costs O(series).

// HeadSeriesInfo is one head series and its newest sample, as
// DB.HeadSeries lists it.
type HeadSeriesInfo struct {
	// Ref is the series' ref, which Appender.Append takes (see its ref
	// contract: valid while this DB is open).
	Ref SeriesRef
	// Labels are the series' labels. They are shared with the head and
	// must not be modified.
	Labels labels.Labels
	// T is the time of the series' newest sample: the latest time, not
	// the time of the sample appended last (a late sample is the newest
	// only if it is the latest).
	T int64
	// V is the newest sample's value if it is a float; for a histogram,
	// its Sum. So value.IsStaleNaN(V) == Stale whatever the kind.
	V float64
	// Histogram reports whether the newest sample is a native histogram
	// (integer or float).
	Histogram bool
	// Stale reports whether the newest sample is a stale marker: the
	// series ended then (its writer has already marked it).
	Stale bool

	// Metadata is the series' metadata (Appender.UpdateMetadata) as the
	// same snapshot sees it, so that a scrape loop can restore its
	// metadata cache from the listing; HasMetadata reports whether the
	// series has any.
	Metadata    Metadata
	HasMetadata bool
}

// HeadSeries calls fn for each series of the head that has a sample the
// listing sees, with its newest such sample, until fn returns false. It
// returns nil when done or stopped by fn, ErrClosed on a closed DB, and
// an error wrapping ctx.Err() if ctx ends first (fn is not called
// again). Series come in ref order (except refs beyond 2^32, which only a
// WAL of another writer has, after the others).
//
// Isolation: the listing reads a snapshot taken when it starts, as a
// Querier does (see isolation.go): it sees exactly the commits completed
// by then, each whole or not at all, so a commit in flight or newer
// shows neither its samples nor its new series. Samples deleted by
// DB.Delete before the call are not seen either. Series that exist only
// in blocks are not listed: their samples are older than the head's
// range. (So a series whose samples a head compaction running meanwhile
// moves into a block, all of them, may or may not be listed.) With
// Options.IsolationDisabled the listing sees whatever is applied when it
// reaches a series.
//
// Cost: O(series) and no allocation per series in the common case. A
// series whose newest sample the snapshot does not see (a commit in
// flight wrote it) or that DB.Delete deleted, or whose newest sample is
// a late one, is read sample by sample from the head instead, as a
// Querier would read it.
//
// Locking: each series' lock is taken briefly while the series is read;
// fn runs without any lock held, so it may use the DB (append, commit,
// query). Like an open Querier, a running listing holds its snapshot:
// head compaction waits for it before it truncates the head, so fn
// should not block for long. Safe for concurrent use.
func (db *DB) HeadSeries(ctx context.Context, fn func(HeadSeriesInfo) bool) error {
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return fmt.Errorf("tsdb: head series: %w", ErrClosed)
	}
	h := db.head
	// The snapshot registers the read (so that truncation waits for it)
	// whether or not isolation is on; visible applies it.
	snap, tombs := h.iso.snapshot(), h.tombstones()
	db.mu.RUnlock()
	defer snap.release()
	visible := snap
	if !h.isolationOn {
		visible = nil
	}
	if err := h.listSeries(ctx, visible, tombs, fn); err != nil {
		return fmt.Errorf("tsdb: head series: %w", err)
	}
	return nil
}

// listSeries is HeadSeries on the head: snap is the read's snapshot (nil:
// everything applied is visible), tombs the deletions it sees.
func (h *head) listSeries(ctx context.Context, snap *readSnapshot, tombs *headTombstones, fn func(HeadSeriesInfo) bool) error {
	var (
		err    error
		n      int
		invBuf []uint64
		hbuf   *histogram.Histogram
		fhbuf  *histogram.FloatHistogram
	)
	h.series.refs.until(func(s *memSeries) bool {
		if n%ctxCheckInterval == 0 {
			if err = ctx.Err(); err != nil {
				return false
			}
		}
		n++
		deleted := tombs.get(s.ref)
		info, ok, exact := s.newest(snap, deleted)
		if !exact {
			info, ok, err = s.newestRead(snap, deleted, &invBuf, &hbuf, &fhbuf)
			if err != nil {
				return false
			}
		}
		return !ok || fn(info)
	})
	return err
}

// newest returns the newest sample of s that snap sees and that is not
// in deleted, as a HeadSeriesInfo, and whether s has one. exact reports
// whether it could tell from the series' state: false if the newest
// sample is late, not visible to snap or deleted, and newestRead must
// read the samples. Takes s.mu.
func (s *memSeries) newest(snap *readSnapshot, deleted tombstones.Intervals) (info HeadSeriesInfo, ok, exact bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lastT := s.lastTLocked()
	if s.hasLateLocked() {
		if _, lateMax := s.lateBoundsLocked(); lateMax > lastT {
			return info, false, false
		}
	}
	if lastT == math.MinInt64 {
		return info, false, true // no sample at all
	}
	// Isolation: the in-order sample at lastT is the newest sample of the
	// series, and the last one in its write-ID ring (isolation.go).
	if !newestVisible(snap, &s.txs) || deleted.Contains(lastT) {
		return info, false, false
	}
	// The newest sample as lastSample finds it, without its allocation.
	info = HeadSeriesInfo{Ref: s.ref, Labels: s.lset, T: lastT}
	switch x := s.x; {
	case x != nil && x.lastH != nil:
		info.V, info.Histogram = x.lastH.Sum, true
	case x != nil && x.lastFH != nil:
		info.V, info.Histogram = x.lastFH.Sum, true
	case x != nil && x.xor2 != nil:
		info.V = math.Float64frombits(x.xor2Last)
	case s.app != nil:
		info.V = math.Float64frombits(s.app.LastValueBits())
	default:
		return HeadSeriesInfo{}, false, false // no appender to ask
	}
	info.Stale = value.IsStaleNaN(info.V)
	if x := s.x; x != nil {
		info.Metadata, info.HasMetadata = visibleMetadata(snap, x.meta)
	}
	return info, true, true
}

// newestRead is newest for the series it cannot tell from the series'
// state: it captures what snap sees of s and reads it to the end. The
// buffers are reused for the histograms read.
func (s *memSeries) newestRead(snap *readSnapshot, deleted tombstones.Intervals, invBuf *[]uint64, hbuf **histogram.Histogram, fhbuf **histogram.FloatHistogram) (info HeadSeriesInfo, ok bool, err error) {
	hs := s.captureUndeleted(snap, deleted, math.MinInt64, math.MaxInt64, invBuf, nil)
	if hs == nil {
		return info, false, nil
	}
	it := hs.Iterator(nil)
	for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
		ok = true
		info.T, info.Histogram = it.AtT(), vt != chunks.ValFloat
		switch vt {
		case chunks.ValFloat:
			_, info.V = it.At()
		case chunks.ValHistogram:
			_, *hbuf = it.AtHistogram(*hbuf)
			info.V = (*hbuf).Sum
		default:
			_, *fhbuf = it.AtFloatHistogram(*fhbuf)
			info.V = (*fhbuf).Sum
		}
	}
	if err := it.Err(); err != nil {
		return info, false, fmt.Errorf("series %s: %w", s.lset, err)
	}
	info.Ref, info.Labels, info.Stale = s.ref, s.lset, value.IsStaleNaN(info.V)
	s.mu.Lock()
	if x := s.x; x != nil {
		info.Metadata, info.HasMetadata = visibleMetadata(snap, x.meta)
	}
	s.mu.Unlock()
	return info, ok, nil
}
