package tsdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/isotsdb/tsdb/internal/wlog"
)

// WAL checkpointing.
//
// After a head truncation the older WAL segments hold mostly data the head
// no longer has. A checkpoint (wlog.Checkpoint) rewrites what of them is
// still needed, the series still in the head, the samples (and
// exemplars, as Prometheus keeps them) not before the truncation, less
// those the blocks' WAL mark says the blocks hold (wal_mark.go), and the
// latest metadata of those series, into
// checkpoint.N; then the segments up to N and the
// older checkpoints are removed. Replay reads the last checkpoint, then the
// segments after it.

// checkpointWAL follows a head truncation at mint: it checkpoints the
// older two thirds of the WAL's segments, keeping the series still in the
// head and the samples from mint on (from the oldest late sample the head
// still holds on, for the series holding one before mint), then removes those segments and the
// checkpoints before the new one. With fewer than three segments it first
// starts a new segment and checkpoints all the others. It leaves the
// segments Options.KeepWALFrom names alone. Without a WAL it does
// nothing. The caller holds cmtx.
func (db *DB) checkpointWAL(mint int64) error {
	h := db.head
	if h.wal == nil {
		return nil
	}
	first, last, err := h.wal.Segments()
	if err != nil {
		return err
	}
	// An earlier checkpoint whose segments are still there (its truncation
	// failed, or the process stopped before it): finish that first, so
	// that the new checkpoint starts after it.
	switch _, cp, err := wlog.LastCheckpoint(db.fs, h.wal.Dir()); {
	case err == nil && cp >= first:
		if err := h.wal.Truncate(cp + 1); err != nil {
			return fmt.Errorf("truncate WAL after checkpoint %d: %w", cp, err)
		}
		if err := deleteCheckpoints(db, cp); err != nil {
			return err
		}
		if first, last, err = h.wal.Segments(); err != nil {
			return err
		}
	case err != nil && !errors.Is(err, wlog.ErrNotFound):
		return fmt.Errorf("find checkpoint: %w", err)
	}
	// Checkpoint the older two thirds of the segments; the newest stay as
	// they are (they hold mostly data still in the head).
	last = first + (last-first)*2/3
	if last <= first {
		if _, err := h.wal.NextSegment(); err != nil {
			return err
		}
		if first, last, err = h.wal.Segments(); err != nil {
			return err
		}
		last--
	}
	if keep := db.opts.KeepWALFrom; keep != nil {
		// A reader still needs the segments from keep() on.
		last = min(last, keep()-1)
	}
	if last < first {
		return nil
	}
	// Late samples that arrived after their range went into a block are
	// still the head's (see freezeLate): their series keep their samples
	// from the oldest of them on. The commits whose records are in the
	// segments checkpointed must have applied theirs first (isolation.go,
	// "Commits and WAL checkpoints"). They never wait for a truncation.
	if err := h.iso.waitForCommitsBefore(context.Background(), h.iso.highWatermark()); err != nil {
		return err
	}
	lateFrom := map[uint64]int64{}
	if h.MinTime() < mint {
		h.series.refs.each(func(s *memSeries) {
			s.mu.Lock()
			if lo, _ := s.lateBoundsLocked(); lo < mint {
				lateFrom[uint64(s.ref)] = lo
			}
			s.mu.Unlock()
		})
	}
	// A duplicate Series record's samples are its series' (walDups): they
	// and the record are kept while that series lives.
	for dup, ref := range h.walDups {
		if h.series.getByRef(SeriesRef(ref)) == nil {
			delete(h.walDups, dup)
		}
	}
	mintOf := func(ref uint64) (int64, bool) {
		if h.series.getByRef(SeriesRef(ref)) == nil {
			to, ok := h.walDups[ref]
			if !ok {
				return 0, false
			}
			ref = to
		}
		if lo, ok := lateFrom[ref]; ok {
			return lo, true
		}
		return mint, true
	}
	// The samples the blocks hold by their WAL mark are dropped too: replay
	// would drop them (wal_mark.go), except those the checkpoint keeps at
	// its end, after the mark, which it would take as late copies.
	var mark *wlog.Mark
	if m := db.greatestWALMark(); m != nil {
		mark = &wlog.Mark{Position: markPosition(m), MaxTime: m.MaxTime}
	}
	if _, err := wlogCheckpoint(db, first, last, mintOf, mark); err != nil {
		return fmt.Errorf("checkpoint WAL: %w", err)
	}
	if err := h.wal.Truncate(last + 1); err != nil {
		return fmt.Errorf("truncate WAL: %w", err)
	}
	return deleteCheckpoints(db, last)
}

// wlogCheckpoint checkpoints WAL segments [from, to] of the DB's WAL.
func wlogCheckpoint(db *DB, from, to int, mintOf func(uint64) (int64, bool), mark *wlog.Mark) (*wlog.CheckpointStats, error) {
	st, err := wlog.CheckpointMarked(db.logger, db.fs, db.head.wal, from, to, mintOf, mark)
	db.metrics.checkpointCreations.count(err != nil)
	return st, err
}

// deleteCheckpoints removes the checkpoints older than index upTo.
func deleteCheckpoints(db *DB, upTo int) error {
	err := wlog.DeleteCheckpoints(db.fs, db.head.wal.Dir(), upTo)
	db.metrics.checkpointDeletions.count(err != nil)
	return err
}
