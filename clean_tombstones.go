package tsdb

import (
	"context"
	"fmt"
)

// Cleaning tombstones: CleanTombstones rewrites each block that has
// deletions into a new block without the deleted data (through writeBlock,
// as compaction does) and deletes the old one.

// CleanTombstones rewrites every block that has deletions without the
// deleted data, under a new ULID, and removes the old block (once its last
// reader is done). Queries return the same before and after. A crash
// leaves either block; Open removes a block whose replacement is complete.
//
// It waits for a running compaction (or Delete) to finish first. If ctx is
// done while it waits, or while it rewrites a block, it returns ctx.Err()
// (wrapped): the blocks rewritten so far stay rewritten, the rest keep
// their tombstones, and queries return the same either way.
func (db *DB) CleanTombstones(ctx context.Context) error {
	release, err := db.beginAdmin(ctx, opCleanTombstones)
	if err != nil {
		return err
	}
	defer release()
	for _, m := range db.Blocks() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("tsdb: clean tombstones: %w", err)
		}
		blocks := db.acquireBlocks(func(b *Block) bool { return b.meta.ULID == m.ULID })
		if len(blocks) == 0 {
			continue
		}
		b := blocks[0]
		tombs := b.tombstones()
		if tombs.Total() == 0 {
			releaseBlocks(blocks)
			continue
		}
		meta := BlockMeta{ULID: newULID(), MinTime: m.MinTime, MaxTime: m.MaxTime}
		meta.Compaction = m.Compaction
		meta.Compaction.Parents = []BlockDesc{{ULID: m.ULID, MinTime: m.MinTime, MaxTime: m.MaxTime}}
		ss := b.selectSeries(ctx, tombs, m.MinTime, m.MaxTime-1, nil)
		written, err := writeBlock(db.fs, db.dir, meta, ss, db.head.samplesPerChunk)
		releaseBlocks(blocks)
		if err != nil {
			return fmt.Errorf("tsdb: clean tombstones of %s: %w", m.ULID, err)
		}
		if written {
			if err := db.loadNewBlock(meta.ULID); err != nil {
				return err
			}
		}
		if err := db.deleteBlocks([]BlockMeta{m}); err != nil {
			return fmt.Errorf("tsdb: clean tombstones of %s: %w", m.ULID, err)
		}
	}
	return nil
}
