package tsdb

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/isotsdb/tsdb/labels"
)

// Appender adds samples in one transaction. Samples buffered by Append
// become visible all at once when Commit returns, or never (Rollback). An
// Appender is not safe for concurrent use and must not be used after Commit
// or Rollback; use one Appender per goroutine.
type Appender interface {
	// Append buffers a sample. ref is a hint from an earlier Append of the
	// same series (0 if unknown); the returned ref can be passed next time.
	// A rejected sample (see the Err... values) is not buffered and affects
	// nothing else in the transaction.
	Append(ref SeriesRef, l labels.Labels, t int64, v float64) (SeriesRef, error)
	// Commit makes all buffered samples visible at once.
	Commit() error
	// Rollback discards all buffered samples.
	Rollback() error
}

// errNoop marks a re-append of a series' newest sample with identical value
// bits: accepted, and nothing to do.
var errNoop = errors.New("tsdb: sample already present")

// pendingSample is a sample buffered by an Appender.
type pendingSample struct {
	s *memSeries
	t int64
	v float64
}

// headAppender is the head's Appender. It holds no write ID until Commit
// starts applying its samples, so an idle or leaked appender costs the
// isolation machinery nothing.
type headAppender struct {
	head         *Head
	minValidTime int64 // fixed at creation: bounds the appendable window
	// maxValidTime: later samples are too far in the future. Read from the
	// clock at creation, and again only when a sample exceeds it, so the
	// common path costs one comparison. math.MaxInt64 without
	// MaxFutureSkew.
	maxValidTime int64

	samples []pendingSample
	buf     *[]pendingSample // the pool's box of samples, reused to return it

	tx   inflightWrite // the commit's write ID while it is in flight
	done bool
}

// Appender returns a new transaction on the head.
func (h *Head) Appender(_ context.Context) Appender {
	h.metrics.openAppenders.Inc()
	return &headAppender{
		head:         h,
		minValidTime: h.appendableMinValidTime(),
		maxValidTime: h.appendableMaxValidTime(),
	}
}

// Append implements Appender.
func (a *headAppender) Append(ref SeriesRef, lset labels.Labels, t int64, v float64) (SeriesRef, error) {
	if a.done {
		return 0, ErrAppenderClosed
	}
	h := a.head
	if t < a.minValidTime {
		h.metrics.outOfBounds.Inc()
		return 0, fmt.Errorf("%w: sample at %d for %s is older than %d", ErrOutOfBounds, t, lset, a.minValidTime)
	}
	if t > a.maxValidTime {
		// The bound was read from the clock when the Appender was
		// created; the clock has moved on since.
		if a.maxValidTime = h.appendableMaxValidTime(); t > a.maxValidTime {
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
	err = s.appendableLocked(a, t, v)
	if err == nil {
		s.pendingApp, s.pendingIdx = a, int32(len(a.samples))
		s.pending++
	}
	s.mu.Unlock()

	switch err {
	case nil:
	case errNoop:
		return s.ref, nil
	case ErrOutOfOrderSample:
		h.metrics.outOfOrder.Inc()
		return 0, fmt.Errorf("%w: sample at %d for %s", err, t, s.lset)
	default:
		h.metrics.duplicate.Inc()
		return 0, fmt.Errorf("%w: sample at %d for %s", err, t, s.lset)
	}
	if a.samples == nil {
		if b, ok := h.sampleBufs.Get().(*[]pendingSample); ok {
			a.samples, a.buf = *b, b
		}
	}
	a.samples = append(a.samples, pendingSample{s: s, t: t, v: v})
	return s.ref, nil
}

// Commit implements Appender. Samples are applied series by series under
// a write ID; no read that starts before Commit returns sees any of them.
// A sample that another commit made out of order or duplicate meanwhile is
// dropped and counted in tsdb_head_samples_rejected_total; the rest of the
// transaction is applied.
func (a *headAppender) Commit() error {
	if a.done {
		return ErrAppenderClosed
	}
	a.done = true
	defer a.release()
	if len(a.samples) == 0 {
		return nil
	}
	h := a.head
	if h.wal != nil {
		if err := a.logCommit(); err != nil {
			a.clearPending()
			return fmt.Errorf("tsdb: commit: %w", err)
		}
	}
	// The write ID is taken even with isolation off: compaction waits for
	// the commits in flight before it reads a range.
	lowWatermark := h.iso.beginCommit(&a.tx)
	id := a.tx.id
	// Loaded after beginCommit: a compaction that raised the bound before
	// this commit took its ID does not wait for it, so the commit must see
	// the raised bound.
	minValid := h.minValidTime.Load()
	appended := 0
	// The time range of the samples applied (not of those dropped): the
	// head's range covers committed samples only.
	mint, maxt := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range a.samples {
		if h.commitHook != nil {
			h.commitHook(a, i)
		}
		p := &a.samples[i]
		s := p.s
		s.mu.Lock()
		reason := reasonOutOfBounds
		if p.t >= minValid {
			reason = s.appendLocked(h, p.t, p.v, id, lowWatermark)
		}
		if s.pendingApp == a {
			s.pendingApp = nil
		}
		s.pending--
		s.mu.Unlock()
		switch reason {
		case "":
			appended++
			mint, maxt = min(mint, p.t), max(maxt, p.t)
		case reasonOutOfOrder:
			h.metrics.outOfOrder.Inc()
		case reasonOutOfBounds:
			h.metrics.outOfBounds.Inc()
		default:
			h.metrics.duplicate.Inc()
		}
	}
	// The head's range must cover the samples before the commit becomes
	// visible, so that a query that sees them also selects the head.
	if appended > 0 {
		h.updateTimeRange(mint, maxt)
	}
	h.iso.endCommit(&a.tx)
	h.metrics.samplesAppended.Add(float64(appended))
	if h.onCommit != nil {
		h.onCommit()
	}
	return nil
}

// Rollback implements Appender. It takes no write ID.
func (a *headAppender) Rollback() error {
	if a.done {
		return ErrAppenderClosed
	}
	a.done = true
	a.clearPending()
	a.release()
	return nil
}

// clearPending removes the appender's marks from its series.
func (a *headAppender) clearPending() {
	for i := range a.samples {
		s := a.samples[i].s
		s.mu.Lock()
		if s.pendingApp == a {
			s.pendingApp = nil
		}
		s.pending--
		s.mu.Unlock()
	}
}

// maxPooledSamples bounds the buffers kept for reuse, so that one huge
// transaction does not pin its buffer forever.
const maxPooledSamples = 1 << 16

func (a *headAppender) release() {
	if b := a.samples; cap(b) > 0 && cap(b) <= maxPooledSamples {
		clear(b) // drop series references
		if a.buf == nil {
			a.buf = new([]pendingSample) // once per buffer, not per commit
		}
		*a.buf = b[:0]
		a.head.sampleBufs.Put(a.buf)
		a.buf = nil
	}
	a.samples = nil
	a.head.metrics.openAppenders.Dec()
}
