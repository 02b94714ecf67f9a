package tsdb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
)

// Appender adds samples in one transaction. Samples buffered by Append
// become visible all at once when Commit returns, or never (Rollback). An
// Appender is not safe for concurrent use and must not be used after Commit
// or Rollback; use one Appender per goroutine. After the DB is closed,
// Append and Commit return ErrClosed (Commit then applied nothing) and
// Rollback returns nil (it cannot fail: nothing became visible). An
// Appender dropped without Commit or Rollback is rolled back when the
// garbage collector finds it (which may take a while; until then its
// series cannot be truncated away).
//
// Labels. No method keeps the series labels l it is given once it returns:
// a series created by an append keeps a copy. So l may alias memory the
// caller reuses after the call (labels.FromEncoding over another library's
// label string). Exemplar labels (e.Labels) are kept, until the exemplar
// is applied or dropped; they must not alias reused memory.
//
// Context. The context given to DB.Appender bounds the transaction: once
// it is cancelled or past its deadline, Append, AppendHistogram,
// AppendST and UpdateMetadata fail with an error wrapping ctx.Err()
// (nothing buffered), and
// Commit fails so, applying nothing: it rolls the transaction back. Commit
// checks the context once, before it writes anything; a cancellation
// after that does not interrupt it (the commit is applied whole). A
// context that can never be cancelled (Done() == nil, as Background's)
// costs nothing.
type Appender interface {
	// Append buffers a sample. A rejected sample (see the Err... values) is
	// not buffered and affects nothing else in the transaction. The value
	// may be the stale marker (package value), stored like any other
	// value.
	//
	// ref names a head series; the returned ref can be passed next time
	// instead of 0 to skip the label lookup. The contract:
	//
	//   - A ref wins over the labels: if ref names a series of the head,
	//     the sample goes to that series and l is not looked at (not even
	//     compared: passing a ref with other labels appends to the ref's
	//     series, as in Prometheus). Only pass a ref that this DB returned
	//     for the same labels.
	//   - A ref the head does not know (0, never handed out, or the ref of
	//     a series that head compaction has since removed) falls back to
	//     the labels: the series is looked up, or created, by l, and its
	//     ref is returned.
	//   - Refs are never reused while the DB is open: a ref names one label
	//     set from the Append that returned it until Close, even after head
	//     compaction removed its series (a new series never takes it; the
	//     labels may come back under a new ref).
	//   - A ref stays valid whatever becomes of the transaction: after a
	//     Rollback (or a failed Commit) it still names its series, until
	//     head compaction removes the series if it has no samples.
	//   - Across a restart (Close, then Open on the same directory), a
	//     series replayed from the WAL keeps the ref it had, and new
	//     series get refs above every ref in the WAL. But a ref whose
	//     series had been removed before the restart (and is no longer in
	//     the WAL) may be handed out again, to another series. So refs are
	//     not to be kept across Open: a caller that kept one could append
	//     to the wrong series.
	Append(ref SeriesRef, l labels.Labels, t int64, v float64) (SeriesRef, error)
	// AppendHistogram buffers a native histogram sample: exactly one of h
	// (an integer histogram) and fh (a float histogram) must be set. The
	// ref and error contract is Append's; an invalid histogram is rejected
	// with an error wrapping ErrInvalidSample and the precise reason from
	// the histogram package (errors.Is works for both). A float and a
	// histogram at the same time in one series are duplicates. The
	// histogram is not copied: the caller must not modify it after the
	// call.
	AppendHistogram(ref SeriesRef, l labels.Labels, t int64, h *histogram.Histogram, fh *histogram.FloatHistogram) (SeriesRef, error)
	// AppendST buffers a sample with its start time st: the time the
	// cumulative count it belongs to started (OpenTelemetry's start time,
	// Prometheus's ST), or 0 for none. The sample is the float v if h and
	// fh are nil, else the histogram given, as for AppendHistogram. Start
	// times are stored in Prometheus's encodings for them and returned by
	// chunks.Iterator.AtST; otherwise the contract is Append's.
	AppendST(ref SeriesRef, l labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram) (SeriesRef, error)
	// AppendExemplar buffers an exemplar of the series ref or, if the head
	// has no series of that ref, l; the series must be in the head (a
	// sample of it appended, in this transaction or an earlier one), else
	// the error wraps ErrExemplarSeriesNotFound. Commit applies it with
	// the transaction's samples (see exemplar.go). A rejected exemplar
	// (ErrExemplarsDisabled, ErrOutOfOrderExemplar, ErrDuplicateExemplar,
	// ErrExemplarLabelLength, ErrInvalidExemplar) affects nothing else in
	// the transaction. Labels of e with empty values are dropped. It
	// returns the series' ref.
	AppendExemplar(ref SeriesRef, l labels.Labels, e Exemplar) (SeriesRef, error)
	// UpdateMetadata buffers new metadata for the series ref or l (see
	// metadata.go); Commit applies it with the transaction's samples,
	// under the same isolation. The series must be in the head already
	// (an Append of it by this or an earlier Appender created it), else
	// ErrUnknownSeries; an invalid m is rejected with ErrInvalidMetadata.
	// Metadata equal to the series' current one is not buffered (nothing
	// is applied or logged); of several updates of one series in one
	// transaction the last counts. It returns the series' ref.
	UpdateMetadata(ref SeriesRef, l labels.Labels, m Metadata) (SeriesRef, error)
	// Commit makes all buffered samples, exemplars and metadata updates visible at
	// once. If the Appender's context is done when Commit starts, it
	// applies nothing and returns an error wrapping ctx.Err() (see Context
	// above).
	Commit() error
	// Rollback discards all buffered samples and metadata updates.
	Rollback() error
	// SetOptions applies o to the Appends that follow.
	SetOptions(o AppendOptions)
}

// AppendOptions change what an Appender accepts; the zero value is the
// default.
type AppendOptions struct {
	// RejectLate makes Append treat a late sample (head_late.go) as it
	// would with the out-of-order window off: ErrOutOfOrderSample if it is
	// older than its series' newest, ErrOutOfBounds if it is before the
	// head's appendable range. It is Prometheus's DiscardOutOfOrder and
	// RejectOutOfOrder, and like the latter it is decided at Append: a
	// sample that becomes late only at Commit (a concurrent commit wrote
	// a newer sample to its series first) is still stored as a late one
	// while the window is on.
	RejectLate bool
}

// errNoop marks a re-append of a series' newest sample with identical value
// bits: accepted, and nothing to do.
var errNoop = errors.New("tsdb: sample already present")

// pendingSample is a sample buffered by an Appender: a float v, or the
// integer histogram h, or the float histogram fh.
type pendingSample struct {
	s  *memSeries
	t  int64
	st int64 // start time; 0 for none
	v  float64
	h  *histogram.Histogram
	fh *histogram.FloatHistogram
}

// isFloat reports whether p is a float sample.
func (p *pendingSample) isFloat() bool { return p.h == nil && p.fh == nil }

// appendBatch is what the head knows of an open Appender: its buffered
// samples. Series point at it (memSeries.pendingApp), so it must never
// point at its headAppender: the headAppender is what the caller holds, and
// only if nothing in the head reaches it can the garbage collector find a
// leaked one and release its batch (releaseLeakedAppender). Batches are
// pooled (Head.sampleBufs) with their sample buffers.
type appendBatch struct {
	samples []pendingSample
	// late indexes the samples Commit applied as late ones, for the WBL.
	late []int
	// lateAt are the indexes in samples, ascending, of those Append took
	// as late while their series' newest sample was already past them, or
	// while they were before the head's minValidTime. Commit need not look
	// for their time in the series' in-order chunks again: those only grow
	// after the newest sample, and from minValidTime on.
	lateAt []int32
	// meta are the buffered metadata updates, one per series, and metaIdx
	// their index by series (nil until the first); see head_metadata.go.
	meta    []pendingMeta
	metaIdx map[*memSeries]int32
	// exemplars are the buffered exemplars (exemplar.go), and
	// lastExemplar the index in it of each series' newest, for the order
	// check of the next one (nil until the first exemplar).
	exemplars    []pendingExemplar
	lastExemplar map[SeriesRef]int
	// it is reused by Append and Commit to decode chunks when they look for
	// a sample at a late sample's time (memSeries.sampleAtLocked). It may
	// point into a chunk of a series after that series' lock is released,
	// but it is only used under the lock of the series it is reset to.
	it chunks.Iterator
}

// headAppender is the head's Appender. It holds no write ID until Commit
// starts applying its samples, so an idle or leaked appender costs the
// isolation machinery nothing. It takes a batch on its first Append; from
// its first buffered sample until Commit or Rollback it counts in
// tsdb_head_open_appenders and carries a cleanup that releases the batch
// if the appender is dropped without either.
type headAppender struct {
	head         *head
	minValidTime int64 // fixed at creation: bounds the appendable window
	// maxValidTime: later samples are too far in the future. Read from the
	// clock at creation, and again only when a sample exceeds it, so the
	// common path costs one comparison. math.MaxInt64 without
	// MaxFutureSkew.
	maxValidTime int64
	// lateWindow (ms) is the out-of-order window at creation, 0 if off;
	// lateMin is then the oldest time a late sample may have: the head's
	// newest sample at creation minus the window (head_late.go).
	lateWindow, lateMin int64
	rejectLate          bool // AppendOptions.RejectLate

	*appendBatch // nil until the first Append

	tx      inflightWrite // the commit's write ID while it is in flight
	done    bool
	tracked bool            // counted as open, cleanup attached
	cleanup runtime.Cleanup // releases the batch of a leaked appender
	created []uintptr       // call stack of the creation, with Options.TrackLeakedAppenders
	// ctx is the context DB.Appender was given if it can be cancelled
	// (Done() != nil), else nil: a Background context costs nothing.
	ctx context.Context
}

// ctxErr returns the error that a cancelled or expired appender context
// makes op fail with (wrapping ctx.Err()), nil if there is none.
func (a *headAppender) ctxErr(op string) error {
	if a.ctx == nil {
		return nil
	}
	if err := a.ctx.Err(); err != nil {
		return fmt.Errorf("tsdb: %s: %w", op, err)
	}
	return nil
}

// appender returns a new transaction on the head. It is not exported: the
// DB's Appender is the only way in, so that ErrClosed and ErrReadOnly
// always apply. With h.trackLeakedAppenders it records the stack of the
// DB.Appender call for the leak warning.
func (h *head) appender() *headAppender {
	a := &headAppender{
		head:         h,
		minValidTime: max(h.appendableMinValidTime(), MinSampleTime),
		maxValidTime: min(h.appendableMaxValidTime(), MaxSampleTime),
	}
	if w := h.lateWindow.Load(); w > 0 {
		a.lateWindow, a.lateMin = w, math.MinInt64
		if maxt := h.maxTime.Load(); maxt >= math.MinInt64+w {
			a.lateMin = maxt - w
		}
	}
	if h.trackLeakedAppenders {
		pcs := make([]uintptr, 32)
		a.created = pcs[:runtime.Callers(3, pcs)]
	}
	return a
}

// Append implements Appender.
func (a *headAppender) Append(ref SeriesRef, lset labels.Labels, t int64, v float64) (SeriesRef, error) {
	return a.add(ref, lset, pendingSample{t: t, v: v})
}

// AppendST implements Appender.
func (a *headAppender) AppendST(ref SeriesRef, lset labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram) (SeriesRef, error) {
	if h == nil && fh == nil {
		return a.add(ref, lset, pendingSample{t: t, st: st, v: v})
	}
	return a.appendHistogram(ref, lset, st, t, h, fh)
}

// AppendHistogram implements Appender.
func (a *headAppender) AppendHistogram(ref SeriesRef, lset labels.Labels, t int64, h *histogram.Histogram, fh *histogram.FloatHistogram) (SeriesRef, error) {
	return a.appendHistogram(ref, lset, 0, t, h, fh)
}

// appendHistogram validates and buffers a histogram sample.
func (a *headAppender) appendHistogram(ref SeriesRef, lset labels.Labels, st, t int64, h *histogram.Histogram, fh *histogram.FloatHistogram) (SeriesRef, error) {
	var err error
	switch {
	case a.done:
		return 0, ErrAppenderClosed
	case (h == nil) == (fh == nil):
		err = errors.New("exactly one of the integer and the float histogram must be given")
	case h != nil:
		err = h.Validate()
	default:
		err = fh.Validate()
	}
	if err != nil {
		a.head.metrics.invalid.Inc()
		return 0, fmt.Errorf("%w: histogram at %d for %s: %w", ErrInvalidSample, t, lset, err)
	}
	return a.add(ref, lset, pendingSample{t: t, st: st, h: h, fh: fh})
}

// add buffers p (its series field unset) for the series ref or lset.
func (a *headAppender) add(ref SeriesRef, lset labels.Labels, p pendingSample) (SeriesRef, error) {
	t := p.t
	if a.done {
		return 0, ErrAppenderClosed
	}
	if err := a.ctxErr("append"); err != nil {
		return 0, err
	}
	h := a.head
	// behind: before the head's appendable range but within the
	// out-of-order window, so late whatever the series holds (head_late.go).
	behind := false
	if t < a.minValidTime {
		switch {
		case t < MinSampleTime || a.lateWindow == 0 || a.rejectLate:
			return 0, a.outOfBounds(lset, t)
		case t < a.lateMin:
			return 0, a.tooOld(lset, t)
		}
		behind = true
	}
	if h.closed.Load() {
		return 0, fmt.Errorf("tsdb: append: %w", ErrClosed)
	}
	b := a.appendBatch
	if b == nil {
		b = a.newBatch()
	}
	if t > a.maxValidTime {
		// The bound was read from the clock when the Appender was
		// created; the clock has moved on since.
		if t > MaxSampleTime {
			h.metrics.outOfBounds.Inc()
			return 0, fmt.Errorf("%w: sample at %d for %s is later than MaxSampleTime (%d)", ErrOutOfBounds, t, lset, MaxSampleTime)
		}
		if a.maxValidTime = min(h.appendableMaxValidTime(), MaxSampleTime); t > a.maxValidTime {
			h.metrics.tooFarInFuture.Inc()
			return 0, fmt.Errorf("%w: sample at %d for %s is later than %d (wall clock plus MaxFutureSkew)", ErrTooFarInFuture, t, lset, a.maxValidTime)
		}
	}
	var s *memSeries
	if ref != 0 {
		s = h.series.getByRef(ref)
	}
	var err error
	for {
		if s == nil {
			if s, err = h.getOrCreate(lset); err != nil {
				return 0, err
			}
		}
		s.mu.Lock()
		if !s.removed {
			break
		}
		// Truncation removed the series after we found it.
		s.mu.Unlock()
		s = nil
	}
	// late: the sample goes to the series' late samples. pastInOrder:
	// and no commit can add an in-order sample at its time any more (it is
	// before the head's minValidTime or not after the series' newest; it
	// may also be late only because the appender buffered a newer sample).
	late, pastInOrder := false, false
	if !behind {
		err = s.appendableLocked(b, &p)
	}
	if behind || err == ErrOutOfOrderSample && a.lateWindow > 0 && !a.rejectLate {
		err = a.lateAppendableLocked(s, &p)
		late = err == nil
		// (This appender's appendable range is not enough: an older
		// appender may still commit in-order samples before it, down to
		// the head's minValidTime.)
		pastInOrder = late && (p.t <= s.lastTLocked() || p.t < h.minValidTime.Load())
	}
	if err == nil {
		if !late {
			s.pendingApp, s.pendingIdx = b, int32(len(b.samples))
		}
		s.pending++
	}
	s.mu.Unlock()

	switch err {
	case nil:
	case errNoop:
		return s.ref, nil
	case ErrTooOldSample:
		return 0, a.tooOld(s.lset, t)
	case ErrOutOfOrderSample:
		h.metrics.outOfOrder.Inc()
		return 0, fmt.Errorf("%w: sample at %d for %s", err, t, s.lset)
	default:
		h.metrics.duplicate.Inc()
		return 0, fmt.Errorf("%w: sample at %d for %s", err, t, s.lset)
	}
	if !a.tracked {
		a.track()
	}
	p.s = s
	if pastInOrder {
		b.lateAt = append(b.lateAt, int32(len(b.samples)))
	}
	b.samples = append(b.samples, p)
	return s.ref, nil
}

// SetOptions implements Appender.
func (a *headAppender) SetOptions(o AppendOptions) { a.rejectLate = o.RejectLate }

// lateAppendableLocked checks p, older than the series' newest sample or
// than one the appender buffered for it, as a late sample: nil if it may
// be added, ErrTooOldSample if it is older than the window allows, and
// errNoop or ErrDuplicateSampleForTimestamp if the series has a sample at
// its time (samples the appender buffered are checked at commit). Requires
// s.mu held.
func (a *headAppender) lateAppendableLocked(s *memSeries, p *pendingSample) error {
	if p.t < a.lateMin {
		return ErrTooOldSample
	}
	if q, ok := s.sampleAtLocked(p.t, true, &a.it); ok {
		return sameStoredSample(p, q)
	}
	return nil
}

// tooOld counts and describes a sample older than the out-of-order window.
func (a *headAppender) tooOld(lset labels.Labels, t int64) error {
	a.head.metrics.tooOld.Inc()
	return fmt.Errorf("%w: sample at %d for %s is older than %d, the head's newest sample minus the out-of-order window of %s",
		ErrTooOldSample, t, lset, a.lateMin, time.Duration(a.lateWindow)*time.Millisecond)
}

// outOfBounds counts and describes a sample before the appendable window.
func (a *headAppender) outOfBounds(lset labels.Labels, t int64) error {
	a.head.metrics.outOfBounds.Inc()
	if t < MinSampleTime {
		return fmt.Errorf("%w: sample at %d for %s is earlier than MinSampleTime (%d)", ErrOutOfBounds, t, lset, MinSampleTime)
	}
	return fmt.Errorf("%w: sample at %d for %s is older than %d", ErrOutOfBounds, t, lset, a.minValidTime)
}

// newBatch gives the appender a batch, from the head's pool if it has one.
func (a *headAppender) newBatch() *appendBatch {
	b, _ := a.head.sampleBufs.Get().(*appendBatch)
	if b == nil {
		b = &appendBatch{}
	}
	a.appendBatch = b
	return b
}

// track counts the appender as open and attaches the cleanup that releases
// its batch if the appender becomes unreachable without Commit or
// Rollback. Called once, when the first sample is buffered.
func (a *headAppender) track() {
	a.tracked = true
	a.head.metrics.openAppenders.Inc()
	a.cleanup = runtime.AddCleanup(a, releaseLeakedAppender, appenderLeak{head: a.head, batch: a.appendBatch, created: a.created})
}

// appenderLeak is what the cleanup of a leaked Appender needs; it must not
// reference the appender, or the appender would never be collected.
type appenderLeak struct {
	head    *head
	batch   *appendBatch
	created []uintptr
}

// releaseLeakedAppender runs when an Appender with buffered samples became
// unreachable without Commit or Rollback: its samples are discarded as by
// Rollback, so its series are no longer pending and truncation may remove
// them. The gauge goes down last, once everything else is done.
func releaseLeakedAppender(l appenderLeak) {
	l.batch.clearPending()
	l.head.releaseBatch(l.batch)
	if l.created != nil {
		l.head.logger.Warn("tsdb: Appender was neither committed nor rolled back; its samples were discarded by the garbage collector",
			"created_at", formatStack(l.created))
	}
	l.head.metrics.openAppenders.Dec()
}

// Commit implements Appender. Samples are applied series by series under
// a write ID, then the exemplars (exemplar.go); no read that starts
// before Commit returns sees any of them.
// A sample that another commit made out of order or duplicate meanwhile is
// dropped and counted in tsdb_head_samples_rejected_total; the rest of the
// transaction is applied.
//
// Commit holds the head's closing lock (read side) from its check of the
// closed flag until its samples are applied, so Close waits for it: a
// Commit either completes before the WAL and the head are closed (nil, and
// its WAL record is written) or finds them closed and applies and logs
// nothing (ErrClosed). Under closeMu it takes the WAL's locks, then
// isolation.mu, each series lock, rangeMu and exemplarStorage.mu, one at
// a time; the caller
// holds no lock of the DB or the head.
func (a *headAppender) Commit() error {
	if a.done {
		return ErrAppenderClosed
	}
	a.done = true
	// From here on a is reachable until the end of Commit only if the code
	// below uses it; stopping the cleanup first means it can never run
	// concurrently with Commit.
	a.cleanup.Stop()
	h := a.head
	h.closeMu.RLock()
	defer h.closeMu.RUnlock()
	if h.closed.Load() {
		a.discard()
		return fmt.Errorf("tsdb: commit: %w", ErrClosed)
	}
	if err := a.ctxErr("commit"); err != nil {
		a.discard() // as Rollback
		return err
	}
	b := a.appendBatch
	if b == nil || len(b.samples) == 0 && len(b.meta) == 0 && len(b.exemplars) == 0 {
		a.discard()
		return nil
	}
	defer a.release()
	wbl := h.wbl.Load()
	if wbl != nil {
		if err := wbl.err(); err != nil {
			b.clearPending()
			return fmt.Errorf("tsdb: commit: %w", err)
		}
	}
	// The write ID is taken even with isolation off: compaction waits for
	// the commits in flight before it reads a range, and the WAL
	// checkpoint for those whose records it checkpoints. So it is taken
	// under the WAL's lock, just before the records are written
	// (isolation.go): not earlier, or commits waiting for that lock would
	// hold IDs, and the low watermark, back.
	var lowWatermark uint64
	begun := false
	begin := func() { lowWatermark, begun = h.iso.beginCommit(&a.tx), true }
	if h.wal == nil {
		begin()
	} else if err := a.logCommit(begin); err != nil {
		b.clearPending()
		if begun {
			h.iso.endCommit(&a.tx)
		}
		return fmt.Errorf("tsdb: commit: %w", err)
	}
	if h.loggedHook != nil {
		h.loggedHook(a)
	}
	id := a.tx.id
	// Loaded after beginCommit: a compaction that raised the bound before
	// this commit took its ID does not wait for it, so the commit must see
	// the raised bound.
	minValid := h.minValidTime.Load()
	appended, lateAdded := 0, 0
	// The time range of the samples applied (not of those dropped): the
	// head's range covers committed samples only.
	mint, maxt := int64(math.MaxInt64), int64(math.MinInt64)
	lateAt := b.lateAt
	for i := range b.samples {
		if h.commitHook != nil {
			h.commitHook(a, i)
		}
		p := &b.samples[i]
		s := p.s
		s.mu.Lock()
		reason := reasonOutOfBounds
		late := false
		switch {
		case p.t >= minValid && p.t > s.lastTLocked():
			// In order, the common case: first, so that the window costs
			// it nothing.
			if p.isFloat() {
				reason = s.appendFloatLocked(h, p.st, p.t, p.v, id, lowWatermark)
			} else {
				reason = s.appendHistogramLocked(h, p.st, p.t, p.h, p.fh, id, lowWatermark)
			}
		case a.lateWindow > 0:
			// Late, or behind the appendable range (which a compaction
			// may have raised since Append checked it): Append checked it
			// against the window.
			late = true
			lateAtAppend := len(lateAt) > 0 && int(lateAt[0]) == i
			if lateAtAppend {
				lateAt = lateAt[1:]
			}
			var added bool
			reason, added = s.appendLateLocked(h, p, id, lowWatermark, !lateAtAppend, &b.it)
			if added {
				lateAdded++
			}
		case p.t < minValid:
		case p.isFloat():
			// Not after the series' newest: a no-op, out of order or a
			// duplicate (appendFloatLocked tells which).
			reason = s.appendFloatLocked(h, p.st, p.t, p.v, id, lowWatermark)
		default:
			reason = s.appendHistogramLocked(h, p.st, p.t, p.h, p.fh, id, lowWatermark)
		}
		if s.pendingApp == b {
			s.pendingApp = nil
		}
		s.pending--
		s.mu.Unlock()
		switch reason {
		case "":
			appended++
			mint, maxt = min(mint, p.t), max(maxt, p.t)
			if late && wbl != nil {
				b.late = append(b.late, i)
			}
		case reasonOutOfOrder:
			h.metrics.outOfOrder.Inc()
		case reasonOutOfBounds:
			h.metrics.outOfBounds.Inc()
		case reasonInvalid:
			h.metrics.invalid.Inc()
		default:
			h.metrics.duplicate.Inc()
		}
	}
	if len(b.meta) > 0 {
		metaID := id
		if !h.isolationOn {
			metaID = 0
		}
		b.applyMetadata(metaID, lowWatermark)
	}
	// The head's range must cover the samples before the commit becomes
	// visible, so that a query that sees them also selects the head.
	if appended > 0 {
		h.updateTimeRange(mint, maxt)
	}
	if len(b.exemplars) > 0 {
		h.commitExemplars(b, id, a.lateWindow)
	}
	// The late samples go to the WBL only now: whether a sample is late is
	// decided under its series' lock while it is applied (a concurrent
	// commit can make it so). The WAL has the commit already, so the WBL
	// is a copy; it is written before the commit becomes visible, as
	// Prometheus does.
	var wblErr error
	if len(b.late) > 0 {
		wblErr = a.logLate(wbl, b)
	}
	h.iso.endCommit(&a.tx)
	h.assertCommitInvariants(b)
	h.metrics.samplesAppended.Add(float64(appended))
	if lateAdded > 0 {
		h.metrics.lateAppended.Add(float64(lateAdded))
	}
	if h.onCommit != nil {
		h.onCommit()
	}
	if wblErr != nil {
		return fmt.Errorf("tsdb: commit: %w", wblErr)
	}
	return nil
}

// Rollback implements Appender. It takes no write ID. It discards the
// buffered samples and returns nil also after the DB was closed: nothing
// became visible, which is all Rollback promises.
func (a *headAppender) Rollback() error {
	if a.done {
		return ErrAppenderClosed
	}
	a.done = true
	a.cleanup.Stop()
	a.discard()
	return nil
}

// discard drops the buffered samples (their marks on the series too) and
// releases the batch.
func (a *headAppender) discard() {
	if a.appendBatch != nil {
		a.clearPending()
	}
	a.release()
}

// clearPending removes the batch's marks from its series.
func (b *appendBatch) clearPending() {
	for i := range b.samples {
		s := b.samples[i].s
		s.mu.Lock()
		if s.pendingApp == b {
			s.pendingApp = nil
		}
		s.pending--
		s.mu.Unlock()
	}
	b.clearPendingMeta()
	for i := range b.exemplars {
		s := b.exemplars[i].s
		s.mu.Lock()
		s.pending--
		s.mu.Unlock()
	}
}

// maxPooledSamples bounds the buffers kept for reuse, so that one huge
// transaction does not pin its buffer forever.
const maxPooledSamples = 1 << 16

// release gives the batch back to the pool and stops counting the
// appender as open. The caller has stopped the cleanup.
func (a *headAppender) release() {
	if b := a.appendBatch; b != nil {
		a.appendBatch = nil
		a.head.releaseBatch(b)
	}
	if a.tracked {
		a.tracked = false
		a.head.metrics.openAppenders.Dec()
	}
}

// releaseBatch empties b (dropping its series references) and pools it
// unless its buffer is too large to keep. No series may point at b any
// more.
func (h *head) releaseBatch(b *appendBatch) {
	if cap(b.samples) > maxPooledSamples || cap(b.exemplars) > maxPooledSamples {
		return
	}
	clear(b.samples)
	b.samples, b.late, b.lateAt = b.samples[:0], b.late[:0], b.lateAt[:0]
	b.resetMeta()
	if b.exemplars != nil {
		clear(b.exemplars)
		clear(b.lastExemplar)
		b.exemplars = b.exemplars[:0]
	}
	h.sampleBufs.Put(b)
}
