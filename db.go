package tsdb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/internal/metricnames"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// DB is a time-series database in a directory: the in-memory head, its
// write-ahead log and the immutable blocks on disk. It is safe for
// concurrent use by multiple goroutines: any number of Appenders and
// Queriers may be used at once.
type DB struct {
	dir    string
	opts   Options
	fs     vfs.FS
	logger *slog.Logger

	lock       io.Closer // the directory's lock file; nil with NoLockfile
	head       *head
	walMetrics *walMetrics
	metrics    *dbMetrics
	// metricNames names every metric (Options.MetricsNamespace).
	metricNames metricnames.Namer
	// reg is the Registerer given to Open (may be nil), kept for a WBL
	// opened when the out-of-order window is turned on at run time.
	reg prometheus.Registerer

	// cmtx serializes compaction, retention, Delete, CleanTombstones and
	// Close: whatever replaces, deletes or rewrites blocks or truncates the
	// head. Take it with lock(ctx), which gives up when ctx is done, so a
	// caller waiting behind a long compaction can be cancelled. Lock
	// order: cmtx before mu (and before any head lock).
	cmtx ctxMutex
	// pendingTrunc is the head truncation that a cancelled compaction left
	// to do, nil if none. Protected by cmtx.
	pendingTrunc *pendingTruncation
	// lateGen numbers head compactions, for freezeLate. Protected by cmtx.
	lateGen uint64
	// skipped are the blocks Open skipped as corrupt (see loadBlocks); set
	// by Open, read-only after.
	skipped []skippedBlock

	mu     lockorder.RWMutex[lockorder.DB] // protects the fields below
	blocks []*Block                        // sorted by MinTime
	// headMint: queriers read the head from here on; everything before it
	// is in blocks.
	headMint int64
	closed   bool
	readOnly bool // opened with OpenReadOnly: no writes at all

	compactc chan struct{}      // wakes the background compaction
	stopc    chan struct{}      // closed by Close
	cancel   context.CancelFunc // cancels a background compaction
	bgDone   sync.WaitGroup
	bgErr    atomic.Pointer[error] // last background compaction error
}

// Open opens the database in dir, creating the directory if needed. logger
// may be nil (discard); reg may be nil (no metrics); opts may be nil
// (DefaultOptions). It loads the blocks (a corrupt block is reported and
// skipped; an I/O error opening a block fails Open with an error naming
// the block and wrapping the cause, so that a transient fault never passes
// for damage), replays the WAL into the head, completes a Delete a crash
// interrupted and starts background compaction.
func Open(dir string, logger *slog.Logger, reg prometheus.Registerer, opts *Options) (*DB, error) {
	return open(dir, logger, reg, opts, false)
}

// open assembles the DB for Open and, with readOnly, for OpenReadOnly. A
// read-only DB takes no lock and writes nothing: it requires a directory
// that holds a database (probeDataDir) instead of creating one, loadBlocks
// leaves leftovers and replaced blocks alone, the WAL is only read
// (replayWALReadOnly), no interrupted Delete is resumed, and nothing runs
// in the background (stopc stays nil).
func open(dir string, logger *slog.Logger, reg prometheus.Registerer, opts *Options, readOnly bool) (*DB, error) {
	o := opts.withDefaults()
	names, err := metricnames.Parse(o.MetricsNamespace)
	if err != nil {
		return nil, fmt.Errorf("tsdb: Options.MetricsNamespace: %w: %w", ErrInvalidOption, err)
	}
	if readOnly {
		o.NoLockfile = true
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	hasWAL := false
	if readOnly {
		var err error
		if hasWAL, err = probeDataDir(o.FS, dir); err != nil {
			return nil, err
		}
	} else if err := createDir(o.FS, dir); err != nil {
		return nil, fmt.Errorf("tsdb: create data dir: %w", err)
	}
	db := &DB{dir: dir, opts: o, fs: o.FS, logger: logger, headMint: math.MinInt64, readOnly: readOnly, metricNames: names, reg: reg}
	if !readOnly {
		db.compactc, db.stopc = make(chan struct{}, 1), make(chan struct{})
	}
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
		maxFutureSkew:     o.MaxFutureSkew.Milliseconds(),
		lateWindow:        o.OutOfOrderTimeWindow.Milliseconds(),
		maxExemplars:      o.MaxExemplars,
		trackLeaks:        o.TrackLeakedAppenders && !readOnly, // a read-only DB makes no head appenders
		metricNames:       names,
	})
	db.metrics = newDBMetrics(db, reg)
	if err := db.loadBlocks(); err != nil {
		if readOnly {
			return nil, err // no lock to release
		}
		return nil, errors.Join(err, db.releaseLock())
	}
	if maxt := db.lastBlockMaxTimeLocked(); maxt != math.MinInt64 {
		db.headMint = maxt
		db.head.raiseMinValidTime(maxt)
	}
	db.head.walMark = db.greatestWALMark()
	if readOnly {
		if err := db.replayWALReadOnly(hasWAL); err != nil {
			return nil, errors.Join(err, db.closeBlocks())
		}
		db.head.assertInvariants("WAL replay", true)
		return db, nil
	}
	if !o.NoWAL {
		db.walMetrics = newWALMetrics(reg, names)
		if err := db.openWAL(reg); err != nil {
			return nil, errors.Join(fmt.Errorf("tsdb: %w", err), db.closeBlocks(), db.releaseLock())
		}
	}
	if err := db.resumeDelete(context.Background()); err != nil {
		return nil, errors.Join(err, db.closeWAL(), db.closeBlocks(), db.releaseLock())
	}
	db.head.assertInvariants("WAL replay", true) // nothing else runs yet
	db.head.onCommit = db.maybeCompact
	ctx, cancel := context.WithCancel(context.Background())
	db.cancel = cancel
	db.bgDone.Add(2)
	go db.run(ctx)
	go db.orderLoop()
	return db, nil
}

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

func (db *DB) closeWAL() error {
	err := db.closeWBL()
	if w := db.head.wal; w != nil {
		err = errors.Join(err, w.Close())
	}
	if hc := db.head.headChunks; hc != nil {
		err = errors.Join(err, hc.Close())
	}
	return err
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

// loadBlocks opens the blocks in the data dir and removes leftovers of
// interrupted writes. A block whose contents are damaged (ErrCorruptBlock)
// is logged (naming its directory), counted, remembered in db.skipped and
// skipped: the rest of the DB keeps serving. Any other failure to open a
// block (an I/O error: see blockOpenError) fails loadBlocks, so that Open
// decides nothing (resuming a Delete, removing replaced blocks, cutting
// the head after the last block) on a partial view of a transient fault.
// On failure the blocks opened so far are closed again.
func (db *DB) loadBlocks() (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, db.closeBlocks())
		}
		db.metrics.reloads.count(err != nil || len(db.skipped) > 0)
	}()
	ents, err := db.fs.ReadDir(db.dir)
	if err != nil {
		return fmt.Errorf("tsdb: read data dir: %w", err)
	}
	for _, e := range ents {
		if isTmpDir(e.Name()) {
			if db.readOnly {
				continue
			}
			if err := db.fs.RemoveAll(filepath.Join(db.dir, e.Name())); err != nil {
				return fmt.Errorf("tsdb: remove leftover %s: %w", e.Name(), err)
			}
			continue
		}
		if _, ok := isBlockDir(e); !ok {
			continue
		}
		dir := filepath.Join(db.dir, e.Name())
		b, err := openBlock(db.fs, dir)
		if cerr := (*corruptBlockError)(nil); errors.As(err, &cerr) {
			db.metrics.corruptBlocks.Inc()
			db.logger.Error("tsdb: skipping block that cannot be opened", "dir", dir, "err", err)
			db.skipped = append(db.skipped, skippedBlock{dir: dir, meta: cerr.meta})
			continue
		}
		if err != nil {
			return err
		}
		db.blocks = append(db.blocks, b)
	}
	db.sortBlocks()
	if db.readOnly {
		return nil
	}
	return db.removeReplacedBlocks()
}

// skippedBlock is a block directory that Open skipped because its contents
// are damaged. The DB never reads it; it stays on disk for inspection.
type skippedBlock struct {
	dir  string
	meta *BlockMeta // nil if its meta.json could not be read
}

// mayHold reports whether the block may hold samples in [mint, maxt]
// (inclusive): its range overlaps, or is unknown.
func (s skippedBlock) mayHold(mint, maxt int64) bool {
	return s.meta == nil || (s.meta.MinTime <= maxt && mint < s.meta.MaxTime)
}

// removeReplacedBlocks deletes blocks that another block lists as its
// parent: a compaction or CleanTombstones wrote the replacement but a
// crash came before it deleted them.
func (db *DB) removeReplacedBlocks() error {
	parents := map[ulid.ULID]bool{}
	for _, b := range db.blocks {
		for _, p := range b.meta.Compaction.Parents {
			parents[p.ULID] = true
		}
	}
	var gone []BlockMeta
	for _, b := range db.blocks {
		if parents[b.meta.ULID] {
			gone = append(gone, b.meta)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	db.logger.Info("tsdb: removing blocks already replaced by their compaction", "blocks", len(gone))
	return db.deleteBlocks(gone)
}

func (db *DB) sortBlocks() {
	slices.SortFunc(db.blocks, func(a, b *Block) int { return cmp.Compare(a.meta.MinTime, b.meta.MinTime) })
}

// loadNewBlock opens a block just written and adds it to the DB.
func (db *DB) loadNewBlock(id ulid.ULID) error {
	b, err := openBlock(db.fs, filepath.Join(db.dir, id.String()))
	db.metrics.reloads.count(err != nil)
	if err != nil {
		return err
	}
	db.mu.Lock()
	db.blocks = append(db.blocks, b)
	db.sortBlocks()
	db.mu.Unlock()
	return nil
}

// setHeadMint makes new queriers read the head only from t on.
func (db *DB) setHeadMint(t int64) {
	db.mu.Lock()
	db.headMint = max(db.headMint, t)
	db.mu.Unlock()
}

// lastBlockMaxTimeLocked returns the end of the newest block,
// math.MinInt64 without blocks. The caller holds db.mu (or owns the DB
// exclusively, as Open does).
func (db *DB) lastBlockMaxTimeLocked() int64 {
	maxt := int64(math.MinInt64)
	for _, b := range db.blocks {
		maxt = max(maxt, b.meta.MaxTime)
	}
	return maxt
}

// deleteBlocks removes the given blocks from the DB and from disk. Readers
// keep reading them (open queriers, and the series sets, Series and
// iterators a Select returned, through its blockLease): the files are
// closed after the last reader. On the real filesystem an open mapping
// stays valid after the files are removed.
func (db *DB) deleteBlocks(metas []BlockMeta) error {
	db.mu.Lock()
	var gone []*Block
	db.blocks = slices.DeleteFunc(db.blocks, func(b *Block) bool {
		if slices.ContainsFunc(metas, func(m BlockMeta) bool { return m.ULID == b.meta.ULID }) {
			gone = append(gone, b)
			return true
		}
		return false
	})
	db.mu.Unlock()
	var errs []error
	for _, b := range gone {
		errs = append(errs, b.close())
		// Rename first so that a crash never leaves half a block under a
		// block's name.
		tmp := filepath.Join(db.dir, tmpPrefix+b.meta.ULID.String()+"-deleted")
		if err := db.fs.Rename(b.dir, tmp); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := db.fs.SyncDir(db.dir); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, db.fs.RemoveAll(tmp))
	}
	return errors.Join(errs...)
}

// Blocks returns the metadata of the DB's blocks, oldest first. The
// result is the caller's own: changing it changes nothing in the DB.
func (db *DB) Blocks() []BlockMeta {
	db.mu.RLock()
	defer db.mu.RUnlock()
	out := make([]BlockMeta, len(db.blocks))
	for i, b := range db.blocks {
		out[i] = b.meta.clone()
	}
	return out
}

// acquireBlocks returns the blocks for which keep is true, each with a
// reader reference taken.
func (db *DB) acquireBlocks(keep func(*Block) bool) []*Block {
	db.mu.RLock()
	defer db.mu.RUnlock()
	var out []*Block
	for _, b := range db.blocks {
		if keep(b) && b.acquire() {
			out = append(out, b)
		}
	}
	return out
}

func releaseBlocks(bs []*Block) {
	for _, b := range bs {
		b.release()
	}
}

// Dir returns the data directory.
func (db *DB) Dir() string { return db.dir }

// SetOutOfOrderTimeWindow changes Options.OutOfOrderTimeWindow; negative
// values are 0 (off). Appenders created afterwards use the new window
// (those open keep the one they were created with, and a Commit applies
// the late samples they accepted). Turning the window on opens the WBL
// (wal.go) if the DB has none yet; if that fails, the window is left as
// it was. It fails with ErrReadOnly on a read-only DB and ErrClosed after
// Close.
func (db *DB) SetOutOfOrderTimeWindow(d time.Duration) error {
	db.mu.Lock() // write side: orders opening the WBL with Close
	defer db.mu.Unlock()
	switch {
	case db.readOnly:
		return fmt.Errorf("tsdb: set out-of-order window: %w", ErrReadOnly)
	case db.closed:
		return fmt.Errorf("tsdb: set out-of-order window: %w", ErrClosed)
	}
	if d > 0 {
		if err := db.ensureWBL(); err != nil {
			return fmt.Errorf("tsdb: set out-of-order window: %w", err)
		}
	}
	db.head.lateWindow.Store(max(d, 0).Milliseconds())
	return nil
}

// Head returns a read-only view of the DB's in-memory head. It offers no
// way to write: the DB's Appender is the only one.
func (db *DB) Head() HeadView { return HeadView{h: db.head} }

// HeadView is a read-only view of a DB's in-memory head: its series count
// and the time range of its committed samples, read live at each call (so
// two calls need not agree with each other). It stays usable after the DB
// is closed and then reports the head as it was at Close.
type HeadView struct{ h *head }

// NumSeries returns the number of series in the head.
func (v HeadView) NumSeries() int64 { return v.h.NumSeries() }

// MinTime returns the time of the oldest committed sample in the head,
// math.MaxInt64 if there is none.
func (v HeadView) MinTime() int64 { return v.h.MinTime() }

// MaxTime returns the time of the newest committed sample in the head,
// math.MinInt64 if there is none.
func (v HeadView) MaxTime() int64 { return v.h.MaxTime() }

func (db *DB) isClosed() bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.closed
}

// adminOp describes one of the DB's operations that hold cmtx throughout
// (Compact, Delete, CleanTombstones, Snapshot), for beginAdmin.
type adminOp struct {
	// name wraps the error of a wait for cmtx that ctx ended, as
	// "tsdb: name: ctx's error"; empty, the error is returned as it is.
	name string
	// readOnlyOK: the operation writes nothing in the data directory, so
	// a DB opened with OpenReadOnly runs it too.
	readOnlyOK bool
}

// The operations that begin with beginAdmin.
var (
	opCompact         = adminOp{}
	opDelete          = adminOp{name: "delete"}
	opCleanTombstones = adminOp{name: "clean tombstones"}
	opSnapshot        = adminOp{name: "snapshot", readOnlyOK: true}
)

// beginAdmin is the common start of the operations that hold cmtx. In
// this order, it returns ErrReadOnly on a DB opened with OpenReadOnly
// (unless op.readOnlyOK) without waiting for anything; it takes cmtx,
// waiting for whoever holds it (compaction, Delete, CleanTombstones,
// Snapshot or Close), and gives up with ctx's error (wrapped as op says)
// if ctx is done first; it returns ErrClosed, not holding cmtx, if the DB
// is closed. Otherwise the caller holds cmtx until it calls release.
func (db *DB) beginAdmin(ctx context.Context, op adminOp) (release func(), err error) {
	if db.readOnly && !op.readOnlyOK {
		return nil, ErrReadOnly
	}
	if err := db.cmtx.lock(ctx); err != nil {
		if op.name == "" {
			return nil, err
		}
		return nil, fmt.Errorf("tsdb: %s: %w", op.name, err)
	}
	if db.isClosed() {
		db.cmtx.unlock()
		return nil, ErrClosed
	}
	return db.cmtx.unlock, nil
}

// Appender returns a new transaction. On a closed DB, its methods return
// ErrClosed. ctx bounds the transaction: once it is done, Append and
// Commit fail with an error wrapping ctx.Err() and nothing is applied
// (see Appender). A context that cannot be cancelled (Background) costs
// nothing; one that can costs a ctx.Err() call per Append.
func (db *DB) Appender(ctx context.Context) Appender {
	db.mu.RLock()
	defer db.mu.RUnlock()
	switch {
	case db.closed:
		return closedAppender{ErrClosed}
	case db.readOnly:
		return closedAppender{ErrReadOnly}
	}
	a := db.head.appender()
	if ctx != nil && ctx.Done() != nil {
		a.ctx = ctx
	}
	return a
}

// Querier returns a Querier over [mint, maxt] (inclusive) that sees
// exactly the commits completed before this call. It takes db.mu (read
// side) and, under it, the Block locks and isolation.mu, so that the
// blocks, the head's lower bound, the tombstones and the snapshot are one
// consistent view.
func (db *DB) Querier(mint, maxt int64) (Querier, error) {
	if mint > maxt {
		return nil, fmt.Errorf("%w: mint %d > maxt %d", ErrInvalidTimeRange, mint, maxt)
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	var blocks []*Block
	for _, b := range db.blocks {
		if b.overlaps(mint, maxt) && b.acquire() {
			blocks = append(blocks, b)
		}
	}
	return newQuerier(db.head, blocks, db.headMint, db.logger, mint, maxt, db.opts.TrackLeakedQueriers), nil
}

// maybeCompact wakes the background compaction if the head is due.
func (db *DB) maybeCompact() {
	if db.head.compactable() {
		select {
		case db.compactc <- struct{}{}:
		default:
		}
	}
}

// compactInterval is how often the background loop compacts and applies
// retention even without being woken.
const compactInterval = time.Minute

// run is the background compaction loop.
func (db *DB) run(ctx context.Context) {
	defer db.bgDone.Done()
	t := time.NewTicker(compactInterval)
	defer t.Stop()
	for {
		select {
		case <-db.stopc:
			return
		case <-t.C:
		case <-db.compactc:
		}
		if err := db.Compact(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
			db.bgErr.Store(&err)
			db.logger.Error("tsdb: background compaction failed", "err", err)
		}
	}
}

// orderLoop rebuilds the head's series order when a Select asks for it
// (head_order.go).
func (db *DB) orderLoop() {
	defer db.bgDone.Done()
	for {
		select {
		case <-db.stopc:
			return
		case <-db.head.orderc:
			db.head.buildOrder()
		}
	}
}

// Close stops background work, waits for the commits in flight, closes the
// WAL and the blocks and releases the lock. Appenders and Queriers still
// open get ErrClosed from then on where they would need the DB: a Commit
// that runs concurrently with Close either completes before the WAL is
// closed (it returns nil and replays after a restart) or applies and logs
// nothing and returns ErrClosed.
// Series sets, Series and iterators obtained before keep working: a
// block's files are unmapped only once the last of them is gone (see
// Querier.Close). With Options.SnapshotOnShutdown it then writes the
// head's chunk snapshot (chunk_snapshot.go); failing to is logged, not
// returned: the WAL holds everything the snapshot would.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	db.mu.Unlock()
	if db.stopc != nil {
		close(db.stopc)
		db.cancel()
		db.bgDone.Wait()
	}
	_ = db.cmtx.lock(context.Background()) // no compaction past this point; cannot fail
	defer db.cmtx.unlock()

	db.head.close() // waits for the commits in flight
	var errs []error
	if hc := db.head.headChunks; hc != nil {
		// Every closed chunk into the files, so that the next Open
		// replays only the open ones (and Prometheus reads them).
		if _, err := db.head.mapChunks(); err != nil {
			errs = append(errs, fmt.Errorf("tsdb: write head chunks: %w", err))
		}
	}
	if err := db.closeWBL(); err != nil {
		errs = append(errs, err)
	}
	if w := db.head.wal; w != nil {
		if err := w.Close(); err != nil {
			errs = append(errs, fmt.Errorf("tsdb: close WAL: %w", err))
		}
	}
	if hc := db.head.headChunks; hc != nil {
		if err := hc.Close(); err != nil {
			errs = append(errs, fmt.Errorf("tsdb: close head chunk files: %w", err))
		}
	}
	if db.opts.SnapshotOnShutdown && db.head.wal != nil {
		if len(errs) > 0 {
			db.logger.Info("tsdb: no chunk snapshot: closing the logs failed")
		} else if err := db.writeChunkSnapshot(); err != nil {
			// Not an error of Close: everything is in the WAL, which
			// the next Open replays.
			db.logger.Warn("tsdb: no chunk snapshot", "err", err)
		}
	}
	errs = append(errs, db.closeBlocks(), db.releaseLock())
	return errors.Join(errs...)
}

func (db *DB) closeBlocks() error {
	db.mu.Lock()
	bs := db.blocks
	db.blocks = nil
	db.mu.Unlock()
	var errs []error
	for _, b := range bs {
		errs = append(errs, b.close())
	}
	return errors.Join(errs...)
}

// ctxMutex is a mutual-exclusion lock whose waiters can be cancelled
// through a context. Its zero value is an unlocked lock. It is not
// reentrant. It is DB.cmtx, the first lock of the order
// (lockorder.RankCompaction): under the invariants build tag its lock and
// unlock are recorded like those of the lockorder mutexes, so it too must
// be released by the goroutine that took it.
type ctxMutex struct {
	once sync.Once
	sem  chan struct{} // one token: held while locked
}

func (m *ctxMutex) ch() chan struct{} {
	m.once.Do(func() { m.sem = make(chan struct{}, 1) })
	return m.sem
}

// lock takes the lock, waiting until it is free or ctx is done. It returns
// ctx.Err() without the lock if ctx is done first (or already at the call).
func (m *ctxMutex) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	lockorder.Acquired(lockorder.RankCompaction)
	select {
	case m.ch() <- struct{}{}:
		return nil
	case <-ctx.Done():
		lockorder.Released(lockorder.RankCompaction)
		return ctx.Err()
	}
}

// unlock releases the lock, which the caller holds.
func (m *ctxMutex) unlock() {
	lockorder.Released(lockorder.RankCompaction)
	<-m.ch()
}

// closedAppender is handed out by a closed or read-only DB: Append and
// Commit return err; Rollback returns nil, as it does on an Appender of an
// open DB that was closed meanwhile (there is nothing to discard).
type closedAppender struct{ err error }

func (a closedAppender) Append(SeriesRef, labels.Labels, int64, float64) (SeriesRef, error) {
	return 0, a.err
}
func (a closedAppender) AppendHistogram(SeriesRef, labels.Labels, int64, *histogram.Histogram, *histogram.FloatHistogram) (SeriesRef, error) {
	return 0, a.err
}
func (a closedAppender) AppendST(SeriesRef, labels.Labels, int64, int64, float64, *histogram.Histogram, *histogram.FloatHistogram) (SeriesRef, error) {
	return 0, a.err
}
func (a closedAppender) UpdateMetadata(SeriesRef, labels.Labels, Metadata) (SeriesRef, error) {
	return 0, a.err
}
func (a closedAppender) AppendExemplar(SeriesRef, labels.Labels, Exemplar) (SeriesRef, error) {
	return 0, a.err
}
func (a closedAppender) Commit() error   { return a.err }
func (a closedAppender) Rollback() error { return nil }

func (a closedAppender) SetOptions(AppendOptions) {}
