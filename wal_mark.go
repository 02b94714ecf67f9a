package tsdb

import (
	"errors"
	"fmt"
	"slices"

	"github.com/isotsdb/tsdb/internal/wlog"
)

// Replay and head compactions: WAL marks.
//
// A head compaction writes a block range [.., maxt) and raises the head's
// minValidTime to maxt; the WAL keeps the range's samples until a
// checkpoint after the truncation. With the out-of-order window on, a
// sample before maxt can also be a late one that arrived after the range
// was written, which only the head (and the WAL) holds. The WAL alone
// cannot tell the two apart, so the mark written with the blocks does:
//
// The compaction raises minValidTime, then reads the WAL's position P
// (wlog.WL.Position, under the WAL's lock) and waits for every commit with
// an ID up to the high watermark read after it; only then does it freeze
// the late samples and take the snapshot the blocks are written from. A
// commit takes its write ID under the WAL's lock just before it writes its
// records (logCommit), so a commit whose records lie before P holds an ID
// up to that watermark: it has applied all of its samples when the late
// ones are frozen (isolation.go, "Commits and WAL marks"). Each of its
// samples before maxt is then in an in-order chunk of the range, or in a
// frozen late chunk (whose range the compaction writes too), or was
// rejected; all of them are in the blocks, once the last of them is
// published (the mark goes with that one, writeHeadBlocks).
// A commit whose records lie after P applies after minValidTime was
// raised: its samples before maxt are late ones (or rejected with the
// window off), which the blocks may or may not hold. The blocks carry
// (P, maxt) in meta.json (WALMark).
//
// The rule (invariant): a WAL sample with time t < maxt in a record that
// ends at or before P is in the blocks. Replay drops it, counted with the
// samples dropped as in blocks; every other sample is replayed as before
// (those before minValidTime as late ones while the window is on).
//
// Several compactions: each gives its blocks a pair (P_i, maxt_i), and
// both grow from one compaction to the next (minValidTime and the log only
// grow; cmtx orders compactions). A record before P_i lies before every
// later P_j, and maxt_i <= maxt_j, so the rule applied with the greatest
// pair drops exactly the samples the rule applied with each pair would
// drop: Open keeps only the greatest pair (greatestWALMark). Block
// compaction carries the greatest pair of its inputs (laterWALMark). A
// mark lost (an empty compaction output, a block deleted by retention or
// rewritten by Prometheus, which drops the field) leaves an older pair or
// none: fewer samples are dropped, never one the blocks lack.
//
// Positions are compared within one log history. A checkpoint of
// segments up to N stands at the end of segment N (wlog.EndOf); positions
// in segments that were deleted are before everything left, so they drop
// nothing that is still read. Open makes sure that nothing logged from
// then on lies before the mark (wlog.WL.StartAfter): a log whose
// numbering went back (a repair that cut segments, a WAL directory
// removed) starts its next segment after the mark's, or, far behind, has
// the marks removed (startWALAfterMark). A block copied in from another
// data directory carries a mark of another log; this WAL's samples before
// its maxt are then dropped as they are with the window off
// (minValidTime), so copy blocks in only behind the head's range.
//
// A directory without marks (written by Prometheus or an older isotsdb)
// replays as before.

// laterWALMark returns the one of a and b with the later WAL mark (a if
// neither has one).
func laterWALMark(a, b *BlockIsotsdb) *BlockIsotsdb {
	switch {
	case b == nil || b.WALMark == nil:
		return a
	case a == nil || a.WALMark == nil:
		return &BlockIsotsdb{WALMark: b.WALMark}
	}
	if c := markPosition(b.WALMark).Compare(markPosition(a.WALMark)); c > 0 || c == 0 && b.WALMark.MaxTime > a.WALMark.MaxTime {
		return &BlockIsotsdb{WALMark: b.WALMark}
	}
	return a
}

func markPosition(m *WALMark) wlog.Position {
	return wlog.Position{Segment: m.Segment, Offset: m.Offset}
}

// greatestWALMark returns the greatest WAL mark of the DB's blocks, or nil.
func (db *DB) greatestWALMark() *WALMark {
	db.mu.RLock()
	defer db.mu.RUnlock()
	var out *BlockIsotsdb
	for _, b := range db.blocks {
		out = laterWALMark(out, b.meta.Isotsdb)
	}
	if out == nil {
		return nil
	}
	return out.WALMark
}

// markWAL reads the WAL's position for a head compaction whose range ends
// at maxt (minValidTime is already raised to it). It returns nil without a
// WAL, or when the WAL cannot say (closed or failed): the blocks then get
// no mark, which is always safe.
func (h *head) markWAL(maxt int64) *BlockIsotsdb {
	if h.wal == nil {
		return nil
	}
	p, err := h.wal.Position()
	if err != nil {
		return nil
	}
	return &BlockIsotsdb{WALMark: &WALMark{Segment: p.Segment, Offset: p.Offset, MaxTime: maxt}}
}

// startWALAfterMark makes sure that every record w logs from now on lies
// after the mark m (see above), once the WAL has been replayed. A log too
// far behind the mark to pad (wlog.ErrTooFarBehind: a mark of another log,
// or a log directory removed long after the mark) makes the marks
// meaningless for what it logs from now on: they are removed from the
// blocks' meta.json, and the next head compaction writes a new one.
func (db *DB) startWALAfterMark(w *wlog.WL, m *WALMark) error {
	if m == nil {
		return nil
	}
	err := w.StartAfter(m.Segment)
	if !errors.Is(err, wlog.ErrTooFarBehind) {
		return err
	}
	db.logger.Warn("tsdb: the WAL is far behind the position recorded with the blocks; removing the blocks' WAL marks", "err", err)
	return db.removeWALMarks()
}

// removeWALMarks removes the WAL mark from the meta.json of every block
// holding one. Only Open calls it, before anything else runs.
func (db *DB) removeWALMarks() error {
	db.mu.RLock()
	blocks := slices.Clone(db.blocks)
	db.mu.RUnlock()
	for _, b := range blocks {
		b.mu.Lock()
		if b.meta.Isotsdb == nil || b.meta.Isotsdb.WALMark == nil {
			b.mu.Unlock()
			continue
		}
		m := b.meta.clone()
		m.Isotsdb = nil
		b.mu.Unlock()
		if err := writeMeta(db.fs, b.dir, &m); err != nil {
			return fmt.Errorf("remove WAL mark of block %s: %w", b.dir, err)
		}
		if err := db.fs.SyncDir(b.dir); err != nil {
			return fmt.Errorf("remove WAL mark of block %s: %w", b.dir, err)
		}
		db.mu.Lock()
		b.mu.Lock()
		b.meta.Isotsdb = nil
		b.mu.Unlock()
		db.mu.Unlock()
	}
	return nil
}
