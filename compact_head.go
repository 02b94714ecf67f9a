package tsdb

import (
	"context"
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

// compactable reports whether the head spans more than 1.5 block ranges,
// so that its oldest range can be written to a block.
func (h *head) compactable() bool {
	mint, maxt := h.MinTime(), h.MaxTime()
	if mint == math.MaxInt64 {
		return false
	}
	return maxt-mint > h.chunkRange/2*3
}

// compactHead moves the head's oldest block range into a block. The caller
// holds cmtx.
//
// Isolation: the range is closed to appends first (minValidTime), then the
// commits already in flight are waited for, so the block holds whole
// commits only. The block is published for new queriers, which read the
// head only from its end on; the head is truncated once every querier
// created before the publication (which still reads the range from the
// head) is closed, so no querier sees samples appear or disappear.
func (db *DB) compactHead(ctx context.Context) error {
	h := db.head
	start := time.Now()
	r := h.chunkRange
	db.mu.RLock()
	headMint := db.headMint
	db.mu.RUnlock()
	// The head holds nothing before headMint (that is in blocks; truncation
	// and WAL replay drop it); the clamp only makes sure a range is never
	// written twice.
	mint := max(h.MinTime(), headMint)
	maxt := rangeEnd(mint, r) // exclusive
	h.raiseMinValidTime(maxt)
	if err := h.iso.waitForCommitsBefore(ctx, h.iso.highWatermark()); err != nil {
		return err
	}
	meta := BlockMeta{ULID: newULID(), MinTime: maxt - r, MaxTime: maxt}
	meta.Compaction.Level = 1
	meta.Compaction.Sources = []ulid.ULID{meta.ULID}
	ss := h.selectSeries(ctx, nil, nil, h.tombstones(), meta.MinTime, maxt-1, nil)
	written, err := writeBlock(db.fs, db.dir, meta, ss, h.samplesPerChunk)
	if err != nil {
		return err
	}
	if written {
		if err := db.loadNewBlock(meta.ULID); err != nil {
			return err
		}
	}
	db.setHeadMint(maxt)
	// From here on the range is the block's: if the truncation below is
	// interrupted, the next Compact resumes it rather than writing the
	// range again.
	db.pendingTrunc = &pendingTruncation{mint: maxt, readSeq: h.iso.nextReadSeq()}
	db.metrics.compactions.Inc()
	db.metrics.compactionDuration.Observe(time.Since(start).Seconds())
	return db.finishTruncation(ctx)
}

// pendingTruncation is a head truncation whose block is published (and
// headMint raised) but which has not been done yet.
type pendingTruncation struct {
	mint int64 // truncate the head before this time
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
	if err := db.truncateHead(p.mint); err != nil {
		db.metrics.headTruncationsFailed.Inc()
		return err
	}
	db.pendingTrunc = nil
	return nil
}

// truncateHead drops head data before mint, removes the WBL segments that
// hold only samples before mint and checkpoints the WAL. Each step may be
// repeated: a failed truncation stays pending and is done again.
func (db *DB) truncateHead(mint int64) error {
	h := db.head
	h.truncate(mint)
	db.metrics.headTruncations.Inc()
	if err := db.truncateWBL(mint); err != nil {
		return err
	}
	return db.checkpointWAL(mint)
}
