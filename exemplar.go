package tsdb

import (
	"context"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/isotsdb/tsdb/labels"
)

// Exemplars.
//
// An exemplar is a sample of a series that carries labels of its own,
// typically the trace ID of a request that the series counted. The head
// keeps the newest Options.MaxExemplars exemplars of all series in one
// ring (exemplar_storage.go); 0, the default, turns exemplars off.
// Prometheus's flag defaults to 100,000; each takes some 64 bytes of
// ring plus its labels. DB.SetMaxExemplars resizes the ring at run time,
// keeping the newest exemplars.
//
// Exemplars are part of their transaction: Appender.AppendExemplar
// buffers one, Commit applies it under the commit's write ID and logs it
// in the commit's WAL records (wal.go), so a read and a replay see a
// commit's exemplars together with its samples, or none of them. A read
// (DB.ExemplarQuerier) sees the exemplars of the commits completed before
// it was created (isolation.go: exemplarVisible), minus those the ring
// has dropped since to make room for newer ones.
//
// A series' exemplars must come in time order: an exemplar older than
// the series' newest (at the same time: with a lower value, or an equal
// value and labels that hash lower, as Prometheus orders them) is
// ErrOutOfOrderExemplar; one equal to the newest (Exemplar.Equals) is
// ErrDuplicateExemplar, and storing it again would add nothing. Both are
// checked at AppendExemplar against the exemplars stored and those the
// transaction buffered, and again at Commit, where a concurrent commit may
// have stored a newer one meanwhile: such an exemplar is then dropped
// and counted, the rest of the transaction is applied. With the
// out-of-order window on (Options.OutOfOrderTimeWindow; the Appender's,
// as for late samples), an exemplar less than the window older than its
// series' newest is accepted, as Prometheus accepts it, and stored at its
// place in time; a repeat of a stored exemplar other than the newest is
// found at Commit and dropped as a duplicate. Replay applies the window
// the DB is opened with.
//
// Exemplars are kept by the labels of their series, not by the series
// itself: they outlive the series' removal from the head (as in
// Prometheus) and leave only when the ring overwrites them. They are not
// written to blocks. A WAL checkpoint keeps those of series still in the
// head from the checkpoint's time on (wal_checkpoint.go).

// ExemplarMaxLabelSetLength bounds the labels of an exemplar: the runes
// of their names and values together (OpenMetrics's limit, as in
// Prometheus). Longer label sets are rejected with ErrExemplarLabelLength.
const ExemplarMaxLabelSetLength = 128

// Exemplar is an exemplar of a series: its own labels, its value and
// its time. HasTs says whether the exemplar came with a time of its own;
// when neither of two exemplars has one, Equals ignores their times (a
// scrape gives an exemplar without a time the scrape's time, and the
// same exemplar scraped again is a duplicate). The WAL does not keep
// HasTs: replayed exemplars have it false, as in Prometheus.
type Exemplar struct {
	Labels labels.Labels
	Value  float64
	Ts     int64
	HasTs  bool
}

// Equals reports whether e and o are the same exemplar: equal labels and
// values, and equal times unless neither has a time of its own (HasTs).
// A NaN value equals nothing, as in Prometheus.
func (e Exemplar) Equals(o Exemplar) bool {
	if !labels.Equal(e.Labels, o.Labels) {
		return false
	}
	if (e.HasTs || o.HasTs) && e.Ts != o.Ts {
		return false
	}
	return e.Value == o.Value
}

// ExemplarQueryResult holds the exemplars of one series that a Select
// returned, in time order, and the series' labels.
type ExemplarQueryResult struct {
	SeriesLabels labels.Labels
	Exemplars    []Exemplar
}

// ExemplarQuerier reads exemplars. It sees the commits completed before
// it was created (DB.ExemplarQuerier), never part of one. It is safe for
// concurrent use and needs no Close: it holds nothing that the DB must
// keep for it.
type ExemplarQuerier interface {
	// Select returns the exemplars with times in [start, end] of the
	// series that match at least one of the matcher sets (all the
	// matchers of a set), one result per series with at least one such
	// exemplar, sorted by series labels. No matcher set selects nothing.
	// After the DB is closed it returns ErrClosed.
	Select(start, end int64, matchers ...[]*labels.Matcher) ([]ExemplarQueryResult, error)
}

// checkExemplar validates e's labels and time, with no regard to the
// exemplars stored: the label set must have unique, non-empty, UTF-8
// names and UTF-8 values of at most ExemplarMaxLabelSetLength runes
// together, the time must lie in [MinSampleTime, MaxSampleTime]. Labels
// with empty values are no labels, as for series: the caller drops them
// first (Labels.WithoutEmpty).
func checkExemplar(e *Exemplar) error {
	if e.Ts < MinSampleTime || e.Ts > MaxSampleTime {
		return fmt.Errorf("%w: %w: time %d outside [MinSampleTime, MaxSampleTime]", ErrInvalidExemplar, ErrOutOfBounds, e.Ts)
	}
	if name, dup := e.Labels.HasDuplicateNames(); dup {
		return fmt.Errorf("%w: duplicate label name %q", ErrInvalidExemplar, name)
	}
	n := 0
	return e.Labels.Validate(func(l labels.Label) error {
		switch {
		case l.Name == "":
			return fmt.Errorf("%w: empty label name", ErrInvalidExemplar)
		case !utf8.ValidString(l.Name):
			return fmt.Errorf("%w: label name %q is not valid UTF-8", ErrInvalidExemplar, l.Name)
		case !utf8.ValidString(l.Value):
			return fmt.Errorf("%w: value %q of label %q is not valid UTF-8", ErrInvalidExemplar, l.Value, l.Name)
		}
		n += utf8.RuneCountInString(l.Name) + utf8.RuneCountInString(l.Value)
		if n > ExemplarMaxLabelSetLength {
			return fmt.Errorf("%w: more than %d runes in the names and values of %s", ErrExemplarLabelLength, ExemplarMaxLabelSetLength, e.Labels)
		}
		return nil
	})
}

// exemplarOrder tells whether e may be added to a series whose newest
// exemplar is newest, with an out-of-order window of window ms (0: off):
// nil if so, else ErrDuplicateExemplar or ErrOutOfOrderExemplar
// (unwrapped). An exemplar older than newest is out of order unless it is
// less than window older (then it is stored at its place in time, and a
// duplicate of a stored one is found there: exemplarStorage.addLocked).
// At the same time, exemplars are ordered by value, then by the hash of
// their labels, so that the several exemplars a native histogram has at
// one time can follow each other while a repeat is still caught by
// comparing with the newest alone.
func exemplarOrder(newest, e *Exemplar, window int64) error {
	if newest.Equals(*e) {
		return ErrDuplicateExemplar
	}
	switch {
	case e.Ts < newest.Ts && e.Ts <= newest.Ts-window,
		e.Ts == newest.Ts && e.Value < newest.Value,
		e.Ts == newest.Ts && e.Value == newest.Value && e.Labels.Hash() < newest.Labels.Hash():
		return ErrOutOfOrderExemplar
	}
	return nil
}

// pendingExemplar is an exemplar buffered by an Appender for the series
// s, which it counts as pending (memSeries.pending) until Commit or
// Rollback. hash is the hash of s's labels, the storage's key.
type pendingExemplar struct {
	s    *memSeries
	hash uint64
	e    Exemplar
}

// AppendExemplar implements Appender.
func (a *headAppender) AppendExemplar(ref SeriesRef, lset labels.Labels, e Exemplar) (SeriesRef, error) {
	if a.done {
		return 0, ErrAppenderClosed
	}
	h := a.head
	if !h.exemplars.enabled() {
		return 0, fmt.Errorf("tsdb: append exemplar for %s: %w", lset, ErrExemplarsDisabled)
	}
	if h.closed.Load() {
		return 0, fmt.Errorf("tsdb: append exemplar for %s: %w", lset, ErrClosed)
	}
	e.Labels = e.Labels.WithoutEmpty()
	if err := checkExemplar(&e); err != nil {
		return 0, fmt.Errorf("tsdb: append exemplar for %s: %w", lset, err)
	}
	s := a.pinExemplarSeries(ref, lset)
	if s == nil {
		return 0, fmt.Errorf("%w: %s (ref %d)", ErrExemplarSeriesNotFound, lset, ref)
	}
	b := a.appendBatch
	if b == nil {
		b = a.newBatch()
	}
	hash := s.lset.Hash()
	// Checked against the series' newest stored exemplar and the newest
	// the transaction buffered; a duplicate of an older one is found at
	// Commit (exemplarStorage.addLocked).
	err := h.exemplars.appendable(s.lset, hash, &e, a.lateWindow)
	i, buffered := b.lastExemplar[s.ref]
	if err == nil && buffered {
		err = exemplarOrder(&b.exemplars[i].e, &e, a.lateWindow)
	}
	if err != nil {
		s.mu.Lock()
		s.pending--
		s.mu.Unlock()
		if err == ErrOutOfOrderExemplar {
			h.exemplars.metrics.outOfOrder.Inc()
		}
		return 0, fmt.Errorf("tsdb: append exemplar at %d for %s: %w", e.Ts, s.lset, err)
	}
	if b.lastExemplar == nil {
		b.lastExemplar = map[SeriesRef]int{}
	}
	if !buffered || e.Ts >= b.exemplars[i].e.Ts {
		b.lastExemplar[s.ref] = len(b.exemplars)
	}
	b.exemplars = append(b.exemplars, pendingExemplar{s: s, hash: hash, e: e})
	if !a.tracked {
		a.track()
	}
	return s.ref, nil
}

// pinExemplarSeries finds the series of an exemplar, by ref or else by
// labels, and counts it as pending so that truncation keeps it until the
// transaction ends. It returns nil if the head has no such series: an
// exemplar needs a sample of its series appended first (in this
// transaction or an earlier one). Takes the series lock.
func (a *headAppender) pinExemplarSeries(ref SeriesRef, lset labels.Labels) *memSeries {
	h := a.head
	var s *memSeries
	if ref != 0 {
		s = h.series.getByRef(ref)
	}
	for {
		if s == nil {
			ls := lset.WithoutEmpty()
			if s = h.series.getByHash(ls.Hash(), ls); s == nil {
				return nil
			}
		}
		s.mu.Lock()
		if !s.removed {
			s.pending++
			s.mu.Unlock()
			return s
		}
		// Truncation removed the series after we found it.
		s.mu.Unlock()
		s = nil
	}
}

// commitExemplars stores the transaction's exemplars under its write ID
// id, with the appender's out-of-order window window (ms), and ends their
// series' pending marks. Called by Commit while the write
// ID is in flight, holding no series lock.
func (h *head) commitExemplars(b *appendBatch, id uint64, window int64) {
	h.exemplars.addCommitted(b.exemplars, id, window)
	for i := range b.exemplars {
		s := b.exemplars[i].s
		s.mu.Lock()
		s.pending--
		s.mu.Unlock()
	}
}

// ExemplarQuerier returns a reader of the head's exemplars that sees
// exactly the commits completed before this call. It fails with ErrClosed
// after Close. ctx is not used; it is there for Prometheus's interface.
// With exemplars off the querier finds nothing.
func (db *DB) ExemplarQuerier(_ context.Context) (ExemplarQuerier, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, fmt.Errorf("tsdb: exemplar querier: %w", ErrClosed)
	}
	q := &exemplarQuerier{h: db.head}
	if db.head.isolationOn {
		q.snap = db.head.iso.detachedSnapshot()
	}
	return q, nil
}

// SetMaxExemplars changes Options.MaxExemplars at run time: the ring is
// resized to hold n exemplars (negative n is 0, which turns exemplars
// off and drops them all), keeping the newest ones, as Prometheus's
// ApplyConfig does. Appenders created before keep working: an exemplar
// they buffered while exemplars were on is dropped at Commit if they are
// off by then. It fails with ErrClosed after Close.
func (db *DB) SetMaxExemplars(n int64) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return fmt.Errorf("tsdb: set max exemplars: %w", ErrClosed)
	}
	db.head.exemplars.resize(n)
	return nil
}

// exemplarQuerier is the DB's ExemplarQuerier: the head's exemplar
// storage seen through a detached snapshot (nil with isolation off).
type exemplarQuerier struct {
	h    *head
	snap *readSnapshot
}

// Select implements ExemplarQuerier.
func (q *exemplarQuerier) Select(start, end int64, matchers ...[]*labels.Matcher) ([]ExemplarQueryResult, error) {
	if q.h.closed.Load() {
		return nil, fmt.Errorf("tsdb: select exemplars: %w", ErrClosed)
	}
	if start > end || len(matchers) == 0 {
		return []ExemplarQueryResult{}, nil
	}
	return q.h.exemplars.selectVisible(q.snap, start, end, matchers), nil
}

// exemplarTimeSeconds converts an exemplar time (ms) to seconds for the
// metrics.
func exemplarTimeSeconds(t int64) float64 {
	if t == math.MinInt64 {
		return 0
	}
	return float64(t) / 1000
}
