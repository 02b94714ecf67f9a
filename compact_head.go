package tsdb

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/oklog/ulid/v2"
)

// Head compaction.
//
// When the head spans 1.5 block ranges, compactHead writes its oldest range
// into a block and publishes it; the head is truncated (and the WAL
// checkpointed, see wal_checkpoint.go) only once no querier can still read
// that range from the head. A truncation a cancelled Compact left to do is
// pending until the next Compact finishes it.

// compactable reports whether the head spans more than 1.5 block ranges
// from minValidTime (the end of the blocks written from it) on, so that
// its oldest range can be written to a block. Late samples before
// minValidTime (see freezeLate) do not count: they go into blocks with the
// next range. Lock-free: commits call it.
func (h *head) compactable() bool {
	mint, maxt := h.MinTime(), h.MaxTime()
	if mint == math.MaxInt64 {
		return false
	}
	return maxt-max(mint, h.minValidTime.Load()) > h.chunkRange/2*3
}

// compactHead moves the head's oldest block range into a block, together
// with the late samples before that range's end. The caller holds cmtx.
//
// Isolation: the range is closed to in-order appends first
// (minValidTime); the WAL's position is read (the blocks' WAL mark,
// wal_mark.go) and the commits logged before it are waited for; the late
// samples before the range's end are frozen (freezeLate), and the commits
// in flight then are waited for, so the frozen samples and the range's
// in-order ones belong to completed commits. The blocks are written from a
// read snapshot taken then, so they hold whole commits only (see
// isolation.go on late samples and blocks).
// They are published for new queriers; the head is truncated once every
// querier created before the publication (which still reads the range from
// the head) is closed, so no querier sees samples appear or disappear.
//
// Late samples older than the range go into blocks of their own, one per
// block range, which overlap the blocks already there; block compaction
// then merges them (planCompaction compacts overlapping blocks first).
func (db *DB) compactHead(ctx context.Context) error {
	h := db.head
	start := time.Now()
	r := h.chunkRange
	db.mu.RLock()
	headMint := db.headMint
	db.mu.RUnlock()
	// The head holds no in-order sample before headMint (that is in
	// blocks; truncation and WAL replay drop it); the clamp also makes
	// sure a range is never written twice.
	mint := max(h.MinTime(), headMint)
	maxt := rangeEnd(mint, r) // exclusive
	h.raiseMinValidTime(maxt)
	// The commits whose records lie before the WAL's position now apply
	// before the late samples are frozen, so the blocks hold each of
	// their samples before maxt (wal_mark.go).
	mark := h.markWAL(maxt)
	if err := h.iso.waitForCommitsBefore(ctx, h.iso.highWatermark()); err != nil {
		return err
	}
	db.lateGen++
	gen := db.lateGen
	older := h.freezeLate(maxt, gen)
	if err := h.iso.waitForCommitsBefore(ctx, h.iso.highWatermark()); err != nil {
		return err
	}
	var snap *readSnapshot
	if h.isolationOn {
		snap = h.iso.snapshot()
	}
	err := db.writeHeadBlocks(ctx, snap, append(older, maxt-r), mark)
	if snap != nil {
		snap.release()
	}
	if err != nil {
		return err
	}
	db.setHeadMint(maxt)
	// From here on the range is the block's: if the truncation below is
	// interrupted, the next Compact resumes it rather than writing the
	// range again.
	db.pendingTrunc = &pendingTruncation{mint: maxt, lateGen: gen, readSeq: h.iso.nextReadSeq()}
	db.metrics.compactions.Inc()
	db.metrics.compactionDuration.Observe(time.Since(start).Seconds())
	return db.finishTruncation(ctx)
}

// writeHeadBlocks writes the head's data in each block range starting at
// one of starts into a block of its own, as snap sees it (everything with
// snap nil), and publishes each in turn. The last block gets isotsdb's
// meta x (may be nil): x's WAL mark says what all of the blocks hold, so it
// is published with the last of them only; if an earlier one fails, no
// block says it (wal_mark.go).
func (db *DB) writeHeadBlocks(ctx context.Context, snap *readSnapshot, starts []int64, x *BlockIsotsdb) error {
	h := db.head
	for i, from := range starts {
		meta := BlockMeta{ULID: newULID(), MinTime: from, MaxTime: from + h.chunkRange}
		if i == len(starts)-1 {
			meta.Isotsdb = x
		}
		meta.Compaction.Level = 1
		meta.Compaction.Sources = []ulid.ULID{meta.ULID}
		ss := h.selectSeries(ctx, nil, snap, h.tombstones(), meta.MinTime, meta.MaxTime-1, nil)
		written, err := writeBlock(db.fs, db.dir, meta, ss, h.samplesPerChunk)
		if err != nil {
			return err
		}
		if written {
			if err := db.loadNewBlock(meta.ULID); err != nil {
				return err
			}
		}
	}
	return nil
}

// pendingTruncation is a head truncation whose block is published (and
// headMint raised) but which has not been done yet.
type pendingTruncation struct {
	mint    int64  // truncate the head's in-order chunks before this time
	lateGen uint64 // and the late chunks frozen by compactions up to this one
	// readSeq: the queriers created before it (that is, before the block
	// was published) may still read the range from the head.
	readSeq uint64
}

// finishTruncation does the pending head truncation, if any: it waits for
// the queriers that may still read the range from the head (or for ctx),
// then truncates. On error the truncation stays pending. The caller holds
// cmtx.
func (db *DB) finishTruncation(ctx context.Context) error {
	p := db.pendingTrunc
	if p == nil {
		return nil
	}
	if err := db.head.iso.waitForReadsBefore(ctx, p.readSeq); err != nil {
		return err
	}
	if err := db.truncateHead(p.mint, p.lateGen); err != nil {
		db.metrics.headTruncationsFailed.Inc()
		return err
	}
	db.pendingTrunc = nil
	return nil
}

// truncateHead drops head data before mint (and the late chunks frozen by
// compactions up to lateGen), removes the WBL segments whose samples all
// went into blocks and checkpoints the WAL. Each step may be repeated: a
// failed truncation stays pending and is done again.
func (db *DB) truncateHead(mint int64, lateGen uint64) error {
	h := db.head
	h.truncate(mint, lateGen)
	db.metrics.headTruncations.Inc()
	if hc := h.headChunks; hc != nil {
		// The files whose chunks all end before mint hold nothing the
		// head references any more (reads that captured their chunks
		// keep the mappings; see head_mmap.go).
		if _, err := hc.Truncate(mint); err != nil {
			return fmt.Errorf("remove head chunk files: %w", err)
		}
	}
	if err := db.truncateWBL(mint); err != nil {
		return err
	}
	return db.checkpointWAL(mint)
}
