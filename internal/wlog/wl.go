package wlog

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/vfs"
)

// WL is an open write-ahead log that appends records to the segments of one
// directory. It is safe for concurrent use.
//
// Failure model: once a write, fsync or segment creation fails, the WL is
// failed for good. The failing call and every later Log, NextSegment, Sync
// and Repair return the same error, which wraps ErrWriteFailed and the
// cause (e.g. syscall.ENOSPC). Records of the failing Log call may be on
// disk in part (a torn tail, found and repaired on the next open) or in
// full: the owner must treat that call's outcome as unknown, Close the WL
// and reopen it.
type WL struct {
	fsys    vfs.FS
	dir     string
	logger  *slog.Logger
	opts    Options // normalized
	metrics *metrics

	// bg counts background fsync+close jobs of completed segments
	// (SyncOnSegmentCut). Add is called with mu held; Wait is called with mu
	// held, so a Wait never races with an Add from zero.
	bg sync.WaitGroup

	// Lock order: mu, then bgMu.
	bgMu  sync.Mutex
	bgErr error // first failure of a background job; protected by bgMu

	mu sync.Mutex // protects the fields below
	// closed is set by Close; every later operation returns ErrClosed.
	closed bool
	// failErr is the sticky failure (see the type comment); nil while healthy.
	failErr error
	// seg is the active segment, opened for writing; nil only after Close
	// or while Repair swaps segments.
	seg    vfs.File
	segIdx int
	// donePages counts the pages of seg that are complete on disk; the
	// active page is page number donePages.
	donePages int
	page      page
	// cbuf is scratch space for snappy output, kept between records.
	cbuf []byte
}

// page buffers the active page of the active segment.
//
// Invariants: 0 <= flushed <= alloc <= PageSize; buf[:flushed] has been
// written to the segment; PageSize-alloc >= headerSize (a page whose tail
// is too short for a header is padded and written out at once).
type page struct {
	buf     [PageSize]byte
	alloc   int // bytes of buf filled with fragments
	flushed int // bytes of buf written to the segment
}

// Open opens the log in dir (creating dir if needed) for appending and
// starts a new segment after the last existing one, so it never appends to
// a segment that may be torn. It also removes temporary directories left
// by a Checkpoint that did not finish.
//
// The owner should read the existing segments (and the last checkpoint)
// before logging, and call Repair if that reading ends in a *corrupt.Error.
// logger may be nil (discard); reg may be nil (no metrics). Metrics are
// named tsdb_wal_* (or as opts.MetricNames says); only one open WL may use a given Registerer.
func Open(logger *slog.Logger, reg prometheus.Registerer, fsys vfs.FS, dir string, opts Options) (*WL, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir = filepath.Clean(dir)
	if err := ensureDir(fsys, dir); err != nil {
		return nil, err
	}
	if err := removeTempCheckpoints(logger, fsys, dir); err != nil {
		return nil, err
	}
	_, last, err := segmentRange(fsys, dir)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(reg, opts.MetricNames, opts.MetricsPrefix, opts.MetricsHelp)
	if err != nil {
		return nil, err
	}
	w := &WL{fsys: fsys, dir: dir, logger: logger, opts: opts, metrics: m}
	f, err := w.createSegment(last + 1)
	if err != nil {
		m.unregister()
		return nil, err
	}
	w.setSegmentLocked(f, last+1)
	return w, nil
}

// ensureDir creates dir if it does not exist and makes its entry durable.
func ensureDir(fsys vfs.FS, dir string) error {
	if _, err := fsys.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("wlog: stat log dir: %w", err)
	}
	if err := fsys.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("wlog: create log dir: %w", err)
	}
	if err := syncParent(fsys, dir); err != nil {
		return fmt.Errorf("wlog: sync parent of log dir: %w", err)
	}
	return nil
}

// createSegment creates segment i (which must not exist) and makes its
// directory entry durable.
func (w *WL) createSegment(i int) (vfs.File, error) {
	name := SegmentName(w.dir, i)
	f, err := w.fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, fmt.Errorf("wlog: create segment: %w", err)
	}
	if err := w.fsys.SyncDir(w.dir); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("wlog: sync log dir after creating %s: %w", name, err)
	}
	return f, nil
}

// setSegmentLocked makes f, a new empty segment with index i, the active one.
func (w *WL) setSegmentLocked(f vfs.File, i int) {
	w.seg, w.segIdx, w.donePages = f, i, 0
	w.page.alloc, w.page.flushed = 0, 0
	w.metrics.currentSegment.Set(float64(i))
}

// Dir returns the log's directory.
func (w *WL) Dir() string { return w.dir }

// checkWritableLocked returns the error a write operation must return
// before doing anything: ErrClosed, the sticky failure, or a failure of a
// background segment sync (which becomes the sticky failure).
func (w *WL) checkWritableLocked() error {
	if w.closed {
		return ErrClosed
	}
	if w.failErr != nil {
		return w.failErr
	}
	w.bgMu.Lock()
	err := w.bgErr
	w.bgMu.Unlock()
	if err != nil {
		return w.failLocked(err)
	}
	return nil
}

// failLocked makes the WL failed with cause (unless it already is) and
// returns the sticky error.
func (w *WL) failLocked(cause error) error {
	if w.failErr == nil {
		w.metrics.writesFailed.Inc()
		w.failErr = fmt.Errorf("%w: %w", ErrWriteFailed, cause)
	}
	return w.failErr
}

// fsync syncs f and records the duration.
func (w *WL) fsync(f vfs.File) error {
	start := time.Now()
	err := f.Sync()
	w.metrics.fsyncDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("wlog: sync %s: %w", f.Name(), err)
	}
	return nil
}

// Sync makes every record logged so far durable: it fsyncs the active
// segment and waits for the background syncs of completed segments.
func (w *WL) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkWritableLocked(); err != nil {
		return err
	}
	if err := w.fsync(w.seg); err != nil {
		return w.failLocked(err)
	}
	w.bg.Wait()
	return w.checkWritableLocked()
}

// NextSegment completes the active segment (padding its last page) and
// starts the next one, returning the new segment's index. Under
// SyncEveryLog the completed segment is fsynced before NextSegment returns,
// otherwise in the background.
func (w *WL) NextSegment() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkWritableLocked(); err != nil {
		return 0, err
	}
	if err := w.cutLocked(); err != nil {
		return 0, w.failLocked(err)
	}
	return w.segIdx, nil
}

// cutLocked completes the active segment and makes a new one active.
func (w *WL) cutLocked() error {
	if w.page.alloc > 0 {
		if err := w.flushLocked(true); err != nil {
			return err
		}
	}
	next, err := w.createSegment(w.segIdx + 1)
	if err != nil {
		return err
	}
	prev := w.seg
	w.setSegmentLocked(next, w.segIdx+1)
	if w.opts.Sync == SyncEveryLog {
		err := w.fsync(prev)
		if cerr := prev.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("wlog: close %s: %w", prev.Name(), cerr)
		}
		return err
	}
	w.bg.Add(1)
	go func() {
		defer w.bg.Done()
		err := w.fsync(prev)
		if cerr := prev.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("wlog: close %s: %w", prev.Name(), cerr)
		}
		if err != nil {
			w.bgMu.Lock()
			if w.bgErr == nil {
				w.bgErr = err
			}
			w.bgMu.Unlock()
		}
	}()
	return nil
}

// ActiveSegment returns the index of the segment that the next Log writes
// to (unless that Log fills it and goes on in the next one).
func (w *WL) ActiveSegment() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.segIdx
}

// Segments returns the indexes of the first and last segment in the log's
// directory (-1, -1 if there is none).
func (w *WL) Segments() (first, last int, err error) {
	return segmentRange(w.fsys, w.dir)
}

// Truncate deletes the segments with an index below i. The active segment
// is never deleted, even if i is above its index. Callers must not be
// reading the segments being deleted.
func (w *WL) Truncate(i int) (err error) {
	w.metrics.truncations.Inc()
	defer func() {
		if err != nil {
			w.metrics.truncationsFailed.Inc()
		}
	}()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	active := w.segIdx
	w.bg.Wait() // completed segments are closed before their files go
	w.mu.Unlock()

	refs, err := listSegments(w.fsys, w.dir)
	if err != nil {
		return err
	}
	removed := false
	for _, r := range refs {
		if r.index >= i || r.index >= active {
			break
		}
		if err := w.fsys.Remove(r.path()); err != nil {
			return fmt.Errorf("wlog: truncate: %w", err)
		}
		removed = true
	}
	if removed {
		if err := w.fsys.SyncDir(w.dir); err != nil {
			return fmt.Errorf("wlog: truncate: sync log dir: %w", err)
		}
	}
	return nil
}

// Close pads and writes out the last page, fsyncs the active segment,
// waits for background syncs and closes the files. A failed WL is closed
// without writing and Close returns its sticky error; a second Close
// returns ErrClosed.
func (w *WL) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	err := w.checkWritableLocked()
	w.closed = true
	if w.seg != nil {
		if err == nil && w.page.alloc > 0 {
			err = w.flushLocked(true)
		}
		if err == nil {
			err = w.fsync(w.seg)
		}
		if cerr := w.seg.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("wlog: close %s: %w", w.seg.Name(), cerr)
		}
		w.seg = nil
	}
	w.bg.Wait()
	w.bgMu.Lock()
	if err == nil {
		err = w.bgErr
	}
	w.bgMu.Unlock()
	w.metrics.unregister()
	return err
}
