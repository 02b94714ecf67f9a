package tsdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// DB is a time-series database in a directory. It is safe for concurrent
// use by multiple goroutines: any number of Appenders and Queriers may be
// used at once.
type DB struct {
	dir    string
	opts   Options
	fs     vfs.FS
	logger *slog.Logger

	lock       io.Closer // the directory's lock file; nil with NoLockfile
	head       *Head
	walMetrics *walMetrics

	mu     sync.RWMutex // protects closed
	closed bool
}

// Open opens the database in dir, creating the directory if needed. logger
// may be nil (discard); reg may be nil (no metrics); opts may be nil
// (DefaultOptions).
func Open(dir string, logger *slog.Logger, reg prometheus.Registerer, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := createDir(o.FS, dir); err != nil {
		return nil, fmt.Errorf("tsdb: create data dir: %w", err)
	}
	db := &DB{dir: dir, opts: o, fs: o.FS, logger: logger}
	if !o.NoLockfile {
		l, err := o.FS.Lock(filepath.Join(dir, "lock"))
		if err != nil {
			return nil, fmt.Errorf("tsdb: lock data dir %s: %w", dir, err)
		}
		db.lock = l
	}
	db.head = newHead(logger, reg, headOptions{
		chunkRange:        o.MinBlockDuration.Milliseconds(),
		samplesPerChunk:   o.SamplesPerChunk,
		stripeSize:        o.StripeSize,
		isolationDisabled: o.IsolationDisabled,
	})
	if !o.NoWAL {
		db.walMetrics = newWALMetrics(reg)
		if err := db.openWAL(reg); err != nil {
			return nil, errors.Join(fmt.Errorf("tsdb: %w", err), db.releaseLock())
		}
	}
	return db, nil
}

func (db *DB) releaseLock() error {
	if db.lock == nil {
		return nil
	}
	if err := db.lock.Close(); err != nil {
		return fmt.Errorf("tsdb: release lock: %w", err)
	}
	return nil
}

// Dir returns the data directory.
func (db *DB) Dir() string { return db.dir }

// Head returns the DB's in-memory head block.
func (db *DB) Head() *Head { return db.head }

// Appender returns a new transaction. On a closed DB, its methods return
// ErrClosed.
func (db *DB) Appender(ctx context.Context) Appender {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return closedAppender{}
	}
	return db.head.Appender(ctx)
}

// Querier returns a Querier over [mint, maxt] (inclusive) that sees
// exactly the commits completed before this call.
func (db *DB) Querier(mint, maxt int64) (Querier, error) {
	if mint > maxt {
		return nil, fmt.Errorf("%w: mint %d > maxt %d", ErrInvalidTimeRange, mint, maxt)
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	return newQuerier(db.head, db.logger, mint, maxt, db.opts.TrackLeakedQueriers), nil
}

// Close closes the DB. Appenders and Queriers still open get ErrClosed
// from then on where they would need the DB.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	var errs []error
	if w := db.head.wal; w != nil {
		if err := w.Close(); err != nil {
			errs = append(errs, fmt.Errorf("tsdb: close WAL: %w", err))
		}
	}
	errs = append(errs, db.releaseLock())
	return errors.Join(errs...)
}

// closedAppender is handed out by a closed DB.
type closedAppender struct{}

func (closedAppender) Append(SeriesRef, labels.Labels, int64, float64) (SeriesRef, error) {
	return 0, ErrClosed
}
func (closedAppender) Commit() error   { return ErrClosed }
func (closedAppender) Rollback() error { return ErrClosed }

// createDir creates dir if it does not exist and makes its entry durable in
// its parent, so that files synced inside it survive a crash.
func createDir(fsys vfs.FS, dir string) error {
	if _, err := fsys.Stat(dir); err == nil {
		return nil
	}
	if err := fsys.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(filepath.Clean(dir)))
}
