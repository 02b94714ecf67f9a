package tsdb

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/isotsdb/tsdb/vfs"
)

// OpenReadOnly opens the database in dir for reading only: it takes no
// lock and writes nothing (it does not repair the WAL, remove leftovers or
// compact), so it can look at a directory another process has open. It
// loads the blocks and replays the WAL into memory, stopping at a torn or
// corrupt tail with a warning. Its Appenders fail with ErrReadOnly; Close
// releases its memory and files.
func OpenReadOnly(dir string, logger *slog.Logger, opts *Options) (*DB, error) {
	return open(dir, logger, nil, opts, true)
}

// probeDataDir makes sure that dir holds a database, a wal directory or a
// block, and returns ErrNotTSDB (wrapped, naming dir) if it does not or
// cannot be read. It reports whether dir has a wal directory.
func probeDataDir(fsys vfs.FS, dir string) (hasWAL bool, err error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("%w: %s: %w", ErrNotTSDB, dir, err)
	}
	hasBlocks := false
	for _, e := range ents {
		_, isBlock := isBlockDir(e)
		hasBlocks = hasBlocks || isBlock
		hasWAL = hasWAL || (e.IsDir() && e.Name() == "wal")
	}
	if !hasWAL && !hasBlocks {
		return false, fmt.Errorf("%w: %s has no wal directory and no blocks", ErrNotTSDB, dir)
	}
	return hasWAL, nil
}

// replayWALReadOnly replays the WAL into the head, if hasWAL, writing
// nothing: missing segments are checked for (and accepted only as
// Options.AcceptIncompleteWAL says) but not recorded, and a torn or
// corrupt tail ends the replay with a warning instead of being repaired.
func (db *DB) replayWALReadOnly(hasWAL bool) error {
	if !hasWAL {
		return nil
	}
	walDir := filepath.Join(db.dir, "wal")
	if err := checkWALComplete(db.fs, db.logger, walDir, db.opts.AcceptIncompleteWAL, true); err != nil {
		return fmt.Errorf("tsdb: %w", err)
	}
	// The WBL is read, never written: a torn tail ends its replay.
	wbl := &wblSource{dir: filepath.Join(db.dir, wblDirName)}
	if err := db.head.replayWAL(db.fs, walDir, nil, wbl, newWALMetrics(nil, db.metricNames)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tsdb: replay WAL: %w", err)
	}
	return nil
}
