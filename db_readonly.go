package tsdb

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"path/filepath"
)

// ErrNotTSDB is returned by OpenReadOnly for a directory that holds no
// database (neither a WAL nor a block).
var ErrNotTSDB = errors.New("tsdb: not a TSDB data directory")

// ErrReadOnly is returned by writes to a DB opened with OpenReadOnly.
var ErrReadOnly = errors.New("tsdb: read-only DB")

// OpenReadOnly opens the database in dir for reading only: it takes no
// lock and writes nothing (it does not repair the WAL, remove leftovers or
// compact), so it can look at a directory another process has open. It
// loads the blocks and replays the WAL into memory, stopping at a torn or
// corrupt tail with a warning. Its Appenders fail with ErrReadOnly; Close
// releases its memory and files.
func OpenReadOnly(dir string, logger *slog.Logger, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	o.NoLockfile = true
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ents, err := o.FS.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotTSDB, dir, err)
	}
	hasWAL, hasBlocks := false, false
	for _, e := range ents {
		_, isBlock := isBlockDir(e)
		hasBlocks = hasBlocks || isBlock
		hasWAL = hasWAL || (e.IsDir() && e.Name() == "wal")
	}
	if !hasWAL && !hasBlocks {
		return nil, fmt.Errorf("%w: %s has no wal directory and no blocks", ErrNotTSDB, dir)
	}
	db := &DB{dir: dir, opts: o, fs: o.FS, logger: logger, headMint: math.MinInt64, readOnly: true}
	db.head = newHead(logger, nil, headOptions{
		chunkRange:        o.MinBlockDuration.Milliseconds(),
		samplesPerChunk:   o.SamplesPerChunk,
		stripeSize:        o.StripeSize,
		isolationDisabled: o.IsolationDisabled,
		maxFutureSkew:     o.MaxFutureSkew.Milliseconds(),
	})
	db.metrics = newDBMetrics(db, nil)
	if err := db.loadBlocks(); err != nil {
		return nil, err
	}
	if maxt := db.lastBlockMaxTimeLocked(); maxt != math.MinInt64 {
		db.headMint = maxt
		db.head.raiseMinValidTime(maxt)
	}
	if hasWAL {
		walDir := filepath.Join(dir, "wal")
		if err := checkWALComplete(db.fs, logger, walDir, o.AcceptIncompleteWAL, true); err != nil {
			return nil, errors.Join(fmt.Errorf("tsdb: %w", err), db.closeBlocks())
		}
		if err := db.head.replayWAL(db.fs, walDir, nil, newWALMetrics(nil, db.metricNames)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, errors.Join(fmt.Errorf("tsdb: replay WAL: %w", err), db.closeBlocks())
		}
	}
	return db, nil
}
