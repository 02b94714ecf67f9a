package tsdb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/oklog/ulid/v2"
)

// Compaction.
//
// DB.Compact runs head compaction (compact_head.go), then block compaction
// (planning which blocks to merge, merging a group into one block, marking
// a block whose data is damaged as failed) and retention (retention.go).
// The DB runs it in the background; every run holds cmtx.
//
// Block ranges. Blocks cut from the head span MinBlockDuration (2h by
// default), aligned to multiples of it since the Unix epoch; compaction
// merges adjacent blocks into ranges three times larger (2h, 6h, 18h, ...)
// up to MaxBlockDuration. The head cuts its chunks at the same boundaries
// so that moving a range from the head into a block never splits a chunk.

// rangeEnd returns the end (exclusive) of the aligned range of width r that
// holds t.
func rangeEnd(t, r int64) int64 {
	if t >= 0 {
		return (t/r + 1) * r
	}
	return ((t + 1) / r) * r
}

// blockRanges returns the compaction ranges: minRange, then each three
// times the previous, as long as they do not exceed maxRange.
func blockRanges(minRange, maxRange int64) []int64 {
	rs := []int64{minRange}
	for r := minRange * 3; r <= maxRange; r *= 3 {
		rs = append(rs, r)
	}
	return rs
}

// Compact writes every head range that is due into a block, truncates the
// head, compacts blocks into larger ranges and applies retention. It is
// safe to call at any time; compactions are serialized.
//
// A block whose data turns out damaged when a compaction reads it is
// marked failed (BlockMeta.Compaction.Failed, also in its meta.json) and
// left out of every later compaction; the Compact that finds it returns
// the error (wrapping ErrCorruptBlock and naming the block) after it has
// compacted the other blocks and applied retention. The block stays
// queryable and retention deletes it in time. The DB also
// compacts in the background, so calling it is optional.
//
// Before truncating the head, Compact waits until every Querier created
// before the new block was published is closed (those may still read the
// range from the head), or ctx is done: do not hold an open Querier on the
// goroutine that calls Compact with a context that never ends. If ctx ends
// there, the block stays published and the truncation pending: the next
// Compact finishes it (it never writes the range again). Compact also
// gives up with ctx.Err() if ctx ends while it waits for another
// compaction, Delete or CleanTombstones to finish.
func (db *DB) Compact(ctx context.Context) error {
	release, err := db.beginAdmin(ctx, opCompact)
	if err != nil {
		return err
	}
	defer release()
	if err := db.finishTruncation(ctx); err != nil {
		db.metrics.compactionsFailed.Inc()
		return fmt.Errorf("tsdb: compact head: %w", err)
	}
	for db.head.compactable() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := db.compactHead(ctx); err != nil {
			db.metrics.compactionsFailed.Inc()
			return fmt.Errorf("tsdb: compact head: %w", err)
		}
	}
	// Retention runs even if block compaction fails: a failure must not
	// keep the blocks that retention deletes (it may delete the very block
	// that made compaction fail).
	db.head.assertInvariants("head compaction", false)
	err = db.compactBlocks(ctx)
	if err != nil {
		db.metrics.compactionsFailed.Inc()
		err = fmt.Errorf("tsdb: compact blocks: %w", err)
	}
	err = errors.Join(err, db.applyRetention())
	// Last, so that it does not write chunks the head truncation drops.
	if _, merr := db.head.mapChunks(); merr != nil {
		err = errors.Join(err, fmt.Errorf("tsdb: write head chunk files: %w", merr))
	}
	return err
}

// compactBlocks merges blocks into larger ranges while a plan exists. The
// caller holds cmtx.
//
// A group that fails because one of its blocks has damaged data does not
// stop it: that block is marked failed (which takes it out of every later
// plan), the error is kept, and planning goes on with the other blocks.
// Each such failure marks one more block, so the loop ends. Any other
// error ends it at once.
func (db *DB) compactBlocks(ctx context.Context) error {
	ranges := blockRanges(db.head.chunkRange, db.opts.MaxBlockDuration.Milliseconds())
	var errs []error
	for {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		group := planCompaction(db.Blocks(), ranges)
		if group == nil {
			return errors.Join(errs...)
		}
		err := db.compactGroup(ctx, group)
		if err == nil {
			continue
		}
		id, ok := corruptBlockOf(err)
		if !ok || !slices.ContainsFunc(group, func(m BlockMeta) bool { return m.ULID == id }) {
			return errors.Join(append(errs, err)...)
		}
		errs = append(errs, err)
		if err := db.markCompactionFailed(id, err); err != nil {
			errs = append(errs, err)
		}
	}
}

// markCompactionFailed marks block id failed (BlockMeta.Compaction.Failed)
// because reading it for a compaction failed with cause: in memory, so
// that planCompaction leaves it out from now on, and in its meta.json, so
// that it stays out after a restart. The mark holds in memory even if
// meta.json cannot be written (then the error says so). The caller holds
// cmtx.
func (db *DB) markCompactionFailed(id ulid.ULID, cause error) error {
	blocks := db.acquireBlocks(func(b *Block) bool { return b.meta.ULID == id })
	defer releaseBlocks(blocks)
	if len(blocks) == 0 {
		return nil // deleted meanwhile: nothing to mark
	}
	b := blocks[0]
	db.mu.Lock()
	b.mu.Lock()
	b.meta.Compaction.Failed = true
	m := b.meta.clone()
	b.mu.Unlock()
	db.mu.Unlock()
	db.logger.Error("tsdb: block has damaged data; compaction leaves it out from now on, queries still read it and retention deletes it in time",
		"block", id, "dir", b.dir, "err", cause)
	if err := writeMeta(db.fs, b.dir, &m); err != nil {
		return fmt.Errorf("tsdb: mark block %s failed: %w", b.dir, err)
	}
	if err := db.fs.SyncDir(b.dir); err != nil {
		return fmt.Errorf("tsdb: mark block %s failed: %w", b.dir, err)
	}
	return nil
}

// planCompaction returns the next group of blocks to compact, nil if none.
// Overlapping blocks are compacted first, together. Otherwise, for each
// range above the smallest, blocks are grouped by the aligned range that
// holds them; a group of two or more whose range is complete (the newest
// block ends at or after the range's end) is compacted.
//
// Failed blocks (Compaction.Failed) are never in a plan. The other blocks
// of their range still compact, each run of them between failed blocks
// on its own, so that no new block spans a failed one.
func planCompaction(metas []BlockMeta, ranges []int64) []BlockMeta {
	if len(metas) < 2 {
		return nil
	}
	slices.SortFunc(metas, func(a, b BlockMeta) int { return cmp.Compare(a.MinTime, b.MinTime) })
	failed := func(m BlockMeta) bool { return m.Compaction.Failed }
	// Overlaps.
	good := slices.DeleteFunc(slices.Clone(metas), failed)
	for i := 0; i < len(good)-1; i++ {
		group := []BlockMeta{good[i]}
		maxt := good[i].MaxTime
		for j := i + 1; j < len(good) && good[j].MinTime < maxt; j++ {
			group = append(group, good[j])
			maxt = max(maxt, good[j].MaxTime)
		}
		if len(group) > 1 {
			return group
		}
	}
	newest := metas[len(metas)-1].MaxTime
	for _, r := range ranges[1:] {
		for i := 0; i < len(metas); {
			start := metas[i].MinTime - mod(metas[i].MinTime, r)
			end := start + r
			j := i
			for j < len(metas) && metas[j].MaxTime <= end && metas[j].MinTime >= start {
				j++
			}
			if j == i { // a block larger than r
				i++
				continue
			}
			if newest >= end {
				// The first run of two or more blocks without a failed one.
				for k := i; k < j; {
					l := k
					for l < j && !failed(metas[l]) {
						l++
					}
					if l-k > 1 {
						return metas[k:l]
					}
					k = l + 1
				}
			}
			i = j
		}
	}
	return nil
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// compactGroup merges the blocks of group into one block and replaces them.
func (db *DB) compactGroup(ctx context.Context, group []BlockMeta) error {
	start := time.Now()
	blocks := db.acquireBlocks(func(b *Block) bool {
		return slices.ContainsFunc(group, func(m BlockMeta) bool { return m.ULID == b.meta.ULID })
	})
	defer releaseBlocks(blocks)
	if len(blocks) != len(group) {
		return fmt.Errorf("blocks of the compaction plan changed")
	}
	meta := BlockMeta{ULID: newULID(), MinTime: math.MaxInt64, MaxTime: math.MinInt64}
	sets := make([]SeriesSet, len(blocks))
	for i, b := range blocks {
		m := b.meta
		meta.MinTime, meta.MaxTime = min(meta.MinTime, m.MinTime), max(meta.MaxTime, m.MaxTime)
		meta.Compaction.Level = max(meta.Compaction.Level, m.Compaction.Level+1)
		meta.Compaction.Sources = append(meta.Compaction.Sources, m.Compaction.Sources...)
		meta.Compaction.Parents = append(meta.Compaction.Parents, BlockDesc{ULID: m.ULID, MinTime: m.MinTime, MaxTime: m.MaxTime})
		sets[i] = b.selectSeries(ctx, b.tombstones(), m.MinTime, m.MaxTime-1, nil)
		meta.Isotsdb = laterWALMark(meta.Isotsdb, m.Isotsdb)
	}
	slices.SortFunc(meta.Compaction.Sources, func(a, b ulid.ULID) int { return a.Compare(b) })
	meta.Compaction.Sources = slices.Compact(meta.Compaction.Sources)
	written, err := writeBlock(db.fs, db.dir, meta, mergeSeriesSets(sets), db.head.samplesPerChunk)
	if err != nil {
		return err
	}
	if written {
		if err := db.loadNewBlock(meta.ULID); err != nil {
			return err
		}
	}
	db.metrics.compactions.Inc()
	db.metrics.compactionDuration.Observe(time.Since(start).Seconds())
	return db.deleteBlocks(group)
}
