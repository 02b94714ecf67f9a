package tsdb

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"weak"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// Querier reads the DB as of the moment it was created: it sees exactly the
// commits that had completed then, in the time range it was created for
// (inclusive at both ends). It is safe for concurrent use. Close it when
// done: until then it holds its read snapshot, and the head keeps the write
// IDs it needs. (A Querier dropped without Close releases its snapshot when
// the garbage collector finds it, but that may take a while.)
type Querier interface {
	// Select returns the series matching all matchers, sorted by labels.
	// Without matchers it returns every series.
	Select(ctx context.Context, ms ...*labels.Matcher) SeriesSet
	// LabelValues returns the sorted values of the label name, among the
	// series matching ms (all series if none) that have a sample in the
	// querier's range that it sees and that is not deleted. Series of uncommitted or rolled-back Appenders, and of
	// commits not complete when the querier was created, never count.
	LabelValues(ctx context.Context, name string, ms ...*labels.Matcher) ([]string, error)
	// LabelNames returns the sorted label names of the series matching ms
	// (all series if none), counting the same series as LabelValues.
	LabelNames(ctx context.Context, ms ...*labels.Matcher) ([]string, error)
	// SeriesMetadata returns the metadata (metadata.go) of the head series
	// with the labels lset as of the querier's snapshot: that of the last
	// commit it sees that set some. ok is false if it sees none, or if the
	// series is not in the head (blocks store no metadata).
	SeriesMetadata(lset labels.Labels) (m Metadata, ok bool, err error)
	// Metadata returns, for each metric name (the __name__ label) of the
	// head series, the distinct metadata of its series as of the
	// querier's snapshot, sorted by type, unit and help (Prometheus's
	// /api/v1/metadata): only the name metric if it is not "". Series
	// without a name or without metadata the querier sees are left out;
	// the querier's time range does not apply. It reads every head series
	// (with metric, only those of the name) under its lock, one at a time.
	Metadata(ctx context.Context, metric string) (map[string][]Metadata, error)
	// Close releases the read snapshot. Series sets, Series and iterators
	// obtained before stay usable and keep returning what the snapshot saw,
	// even after the blocks they read are compacted away or deleted and
	// after the DB is closed: they hold the blocks' files open until they
	// become unreachable (so a deleted block's disk space is reclaimed only
	// after the garbage collector found them). Close captures, from the
	// head, the series a set has not reached yet.
	Close() error
}

// SeriesSet iterates over series.
type SeriesSet interface {
	Next() bool
	At() Series
	// Err returns the error that stopped the iteration, if any (for example
	// the context's error when it was cancelled).
	Err() error
}

// Series is one series as a query sees it.
type Series interface {
	Labels() labels.Labels
	// Iterator returns an iterator over the series' samples in the query's
	// range. reuse, if not nil, is an iterator returned by an earlier call
	// (of any series) that may be recycled.
	Iterator(reuse chunks.Iterator) chunks.Iterator
}

// querier is the DB's Querier. It owns one read snapshot and a reader
// reference on each block it reads; each Select takes references of its
// own (a blockLease) for what it returns.
type querier struct {
	head   *head
	blocks []*Block // oldest first
	// Deletion intervals as of the querier's creation: a later Delete does
	// not change what it returns.
	blockTombs []tombstones.Reader
	headTombs  *headTombstones
	// headMint: the head is read from here on; blocks hold the rest. It
	// is below the DB's headMint when the head holds late samples of
	// ranges already in blocks (the reads then see the samples a
	// compaction is moving twice, and merge them into one).
	headMint   int64
	mint, maxt int64
	// snap registers the read (compaction waits for it before truncating
	// the head). visible is snap with isolation on, nil with it off.
	snap, visible *readSnapshot

	// mu protects closed and the cleanup's Stop. Select and the label
	// queries hold it for reading while they use the querier's block
	// references and snapshot; Close holds it for writing.
	mu      lockorder.RWMutex[lockorder.Querier]
	closed  bool
	cleanup runtime.Cleanup

	setsMu lockorder.Mutex[lockorder.QuerierSets] // protects headSets; taken after mu
	// headSets are the head series sets Select returned, for Close to
	// freeze those still reachable before it releases the snapshot.
	headSets []weak.Pointer[headSeriesSet]
}

// leakInfo is what the cleanup of a leaked Querier needs; it must not
// reference the querier itself, or the querier would never be collected.
type leakInfo struct {
	snap    *readSnapshot
	blocks  []*Block
	logger  *slog.Logger
	created []uintptr // call stack of the creation, if tracked
}

func newQuerier(h *head, blocks []*Block, headMint int64, logger *slog.Logger, mint, maxt int64, track bool) *querier {
	q := &querier{head: h, blocks: blocks, mint: mint, maxt: maxt, snap: h.iso.snapshot(), headTombs: h.tombstones()}
	// Read after the snapshot: a commit of late samples before headMint
	// lowers the head's MinTime before it completes, so every such commit
	// the snapshot sees is within the head's range read here.
	q.headMint = min(headMint, h.MinTime())
	q.blockTombs = make([]tombstones.Reader, len(blocks))
	for i, b := range blocks {
		q.blockTombs[i] = b.tombstones()
	}
	if h.isolationOn {
		q.visible = q.snap
	}
	info := leakInfo{snap: q.snap, blocks: blocks, logger: logger}
	if track {
		pcs := make([]uintptr, 32)
		info.created = pcs[:runtime.Callers(3, pcs)]
	}
	q.cleanup = runtime.AddCleanup(q, releaseLeaked, info)
	return q
}

// releaseLeaked runs when a Querier became unreachable without Close.
func releaseLeaked(info leakInfo) {
	info.snap.release()
	releaseBlocks(info.blocks)
	if info.created != nil {
		info.logger.Warn("tsdb: Querier was not closed; its read snapshot was released by the garbage collector",
			"created_at", formatStack(info.created))
	}
}

func formatStack(pcs []uintptr) string {
	var b strings.Builder
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "%s (%s:%d)", f.Function, f.File, f.Line)
		if !more {
			break
		}
		b.WriteString(" <- ")
	}
	return b.String()
}

// rlockOpen read-locks q.mu and reports true if q is open; otherwise it
// unlocks and reports false.
func (q *querier) rlockOpen() bool {
	q.mu.RLock()
	if q.closed {
		q.mu.RUnlock()
		return false
	}
	return true
}

func (q *querier) Select(ctx context.Context, ms ...*labels.Matcher) SeriesSet {
	if !q.rlockOpen() {
		return errSeriesSet{fmt.Errorf("tsdb: select: %w", ErrClosed)}
	}
	defer q.mu.RUnlock()
	return q.selectLocked(ctx, ms)
}

// selectLocked is Select; the caller holds q.mu for reading and q is open.
func (q *querier) selectLocked(ctx context.Context, ms []*labels.Matcher) SeriesSet {
	// The set may outlive Close: it reads the blocks through references of
	// its own.
	lease := newBlockLease(q.blocks)
	sets := make([]SeriesSet, 0, len(q.blocks)+1)
	for i, b := range q.blocks {
		sets = append(sets, b.selectLeased(ctx, lease, q.blockTombs[i], q.mint, q.maxt, ms))
	}
	if hmint := max(q.mint, q.headMint); hmint <= q.maxt {
		set := q.head.selectSeries(ctx, q, q.visible, q.headTombs, hmint, q.maxt, ms)
		if hs, ok := set.(*headSeriesSet); ok {
			q.setsMu.Lock()
			q.headSets = slices.DeleteFunc(q.headSets, func(p weak.Pointer[headSeriesSet]) bool { return p.Value() == nil })
			q.headSets = append(q.headSets, weak.Make(hs))
			q.setsMu.Unlock()
		}
		sets = append(sets, set)
	}
	return &keepAlive{SeriesSet: mergeSeriesSets(sets), owner: q}
}

// keepAlive keeps the querier (and so its snapshot and blocks) reachable
// while a series set from it is in use.
type keepAlive struct {
	SeriesSet
	owner *querier
}

// Close implements Querier. Takes q.mu, then setsMu, each live head
// series set's mu and the series locks under it (freezing the sets), then,
// with setsMu released, isolation.mu and the Block locks.
func (q *querier) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	q.cleanup.Stop()
	// Head sets still in use take what they have yet to read while the
	// snapshot still protects it (from truncation, and from losing the
	// write IDs that tell which samples it hides).
	q.setsMu.Lock()
	for _, p := range q.headSets {
		if hs := p.Value(); hs != nil {
			hs.freeze()
		}
	}
	q.headSets = nil
	q.setsMu.Unlock()
	q.snap.release()
	releaseBlocks(q.blocks)
	return nil
}

// emptySeriesSet has no series.
type emptySeriesSet struct{}

func (emptySeriesSet) Next() bool { return false }
func (emptySeriesSet) At() Series { return nil }
func (emptySeriesSet) Err() error { return nil }

// errSeriesSet has no series and an error.
type errSeriesSet struct{ err error }

func (errSeriesSet) Next() bool   { return false }
func (errSeriesSet) At() Series   { return nil }
func (e errSeriesSet) Err() error { return e.err }
