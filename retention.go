package tsdb

import (
	"fmt"
	"slices"
)

// applyRetention deletes whole blocks, oldest first: those that ended more
// than RetentionDuration before the newest data (blocks and head), then, if
// MaxBytes is set, as many as needed to bring the blocks and the WAL under
// it. Time retention is relative to the data, not to the wall clock, so a
// DB that stops receiving data keeps its last window. Blocks that
// Options.KeepBlock keeps are not deleted. The caller holds cmtx.
func (db *DB) applyRetention() error {
	metas := db.Blocks()
	if len(metas) == 0 {
		return nil
	}
	var del []BlockMeta
	newest := max(db.lastBlockMaxTime(), db.head.MaxTime())
	cutoff := newest - db.opts.RetentionDuration.Milliseconds()
	for _, m := range metas {
		if m.MaxTime <= cutoff {
			del = append(del, m)
		}
	}
	if db.opts.MaxBytes > 0 {
		sizes := db.blockSizes()
		total := db.walSize()
		for _, b := range sizes {
			total += b
		}
		// Oldest first, skipping what time retention already deletes.
		for i, m := range metas {
			if total <= db.opts.MaxBytes {
				break
			}
			total -= sizes[i]
			if !slices.ContainsFunc(del, func(d BlockMeta) bool { return d.ULID == m.ULID }) {
				del = append(del, m)
				db.metrics.retentionBytes.Inc()
			}
		}
	}
	if keep := db.opts.KeepBlock; keep != nil {
		del = slices.DeleteFunc(del, keep)
	}
	if len(del) == 0 {
		return nil
	}
	db.metrics.retentionDeletions.Add(float64(len(del)))
	if err := db.deleteBlocks(del); err != nil {
		return fmt.Errorf("tsdb: retention: %w", err)
	}
	return nil
}

// lastBlockMaxTime is lastBlockMaxTimeLocked taking db.mu itself.
func (db *DB) lastBlockMaxTime() int64 {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.lastBlockMaxTimeLocked()
}

// blockSizes returns the bytes on disk of each block, oldest first.
func (db *DB) blockSizes() []int64 {
	db.mu.RLock()
	defer db.mu.RUnlock()
	out := make([]int64, len(db.blocks))
	for i, b := range db.blocks {
		out[i] = b.Size()
	}
	return out
}

// walSize returns the bytes of the WAL's segments and checkpoints.
func (db *DB) walSize() int64 {
	if db.head.wal == nil {
		return 0
	}
	return dirSize(db, db.head.wal.Dir())
}

// dirSize adds up the sizes of the files below dir.
func dirSize(db *DB, dir string) int64 {
	ents, err := db.fs.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		p := dir + "/" + e.Name()
		if e.IsDir() {
			n += dirSize(db, p)
			continue
		}
		if st, err := db.fs.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}
