package tsdb

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/tombstones"
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
	// Close releases the read snapshot. Series sets and iterators obtained
	// before stay usable.
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
// reference on each block it reads.
type querier struct {
	head   *Head
	blocks []*Block // oldest first
	// Deletion intervals as of the querier's creation: a later Delete does
	// not change what it returns.
	blockTombs []tombstones.Reader
	headTombs  *headTombstones
	headMint   int64 // the head is read from here on; blocks hold the rest
	mint, maxt int64
	// snap registers the read (compaction waits for it before truncating
	// the head). visible is snap with isolation on, nil with it off.
	snap, visible *readSnapshot

	mu      sync.Mutex // protects closed and the cleanup's Stop
	closed  bool
	cleanup runtime.Cleanup
}

// leakInfo is what the cleanup of a leaked Querier needs; it must not
// reference the querier itself, or the querier would never be collected.
type leakInfo struct {
	snap    *readSnapshot
	blocks  []*Block
	logger  *slog.Logger
	created []uintptr // call stack of the creation, if tracked
}

func newQuerier(h *Head, blocks []*Block, headMint int64, logger *slog.Logger, mint, maxt int64, track bool) *querier {
	q := &querier{head: h, blocks: blocks, headMint: headMint, mint: mint, maxt: maxt, snap: h.iso.snapshot(), headTombs: h.tombstones()}
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

func (q *querier) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

func (q *querier) Select(ctx context.Context, ms ...*labels.Matcher) SeriesSet {
	if q.isClosed() {
		return errSeriesSet{fmt.Errorf("tsdb: select: %w", ErrClosed)}
	}
	sets := make([]SeriesSet, 0, len(q.blocks)+1)
	for i, b := range q.blocks {
		sets = append(sets, b.selectSeries(ctx, q.blockTombs[i], q.mint, q.maxt, ms))
	}
	if hmint := max(q.mint, q.headMint); hmint <= q.maxt {
		sets = append(sets, q.head.selectSeries(ctx, q, q.visible, q.headTombs, hmint, q.maxt, ms))
	}
	return &keepAlive{SeriesSet: mergeSeriesSets(sets), owner: q}
}

// keepAlive keeps the querier (and so its snapshot and blocks) reachable
// while a series set from it is in use.
type keepAlive struct {
	SeriesSet
	owner *querier
}

func (q *querier) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	q.cleanup.Stop()
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
