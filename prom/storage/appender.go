package promstorage

import (
	"errors"
	"fmt"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// base is what both appender kinds share: one isotsdb transaction. Like
// the isotsdb Appender, it is used by one goroutine at a time.
type base struct {
	app tsdb.Appender
	lb  labels.ScratchBuilder // reused for converting label sets
	// rejectLate is the tsdb.AppendOptions.RejectLate last set on app.
	rejectLate bool
}

// setRejectLate sets tsdb.AppendOptions.RejectLate on the transaction for
// the appends that follow, if it changes.
func (b *base) setRejectLate(reject bool) {
	if reject != b.rejectLate {
		b.rejectLate = reject
		b.app.SetOptions(tsdb.AppendOptions{RejectLate: reject})
	}
}

func newBase(app tsdb.Appender) base { return base{app: app} }

// appendFloat appends one float sample; storage.SeriesRef and
// tsdb.SeriesRef are the same number.
func (b *base) appendFloat(ref storage.SeriesRef, ls plabels.Labels, t int64, v float64) (storage.SeriesRef, error) {
	r, err := b.app.Append(tsdb.SeriesRef(ref), borrowOurLabels(&b.lb, ls), t, v)
	if err != nil {
		return 0, mapAppendError(err)
	}
	return storage.SeriesRef(r), nil
}

// appendHistogram appends one native histogram sample, h or fh (exactly one
// must be set; the isotsdb Appender rejects anything else as invalid). The
// sample is converted, so the caller keeps ownership of h and fh.
func (b *base) appendHistogram(ref storage.SeriesRef, ls plabels.Labels, t int64, h *histogram.Histogram, fh *histogram.FloatHistogram) (storage.SeriesRef, error) {
	r, err := b.app.AppendHistogram(tsdb.SeriesRef(ref), borrowOurLabels(&b.lb, ls), t, FromPromHistogram(h), FromPromFloatHistogram(fh))
	if err != nil {
		return 0, mapAppendError(err)
	}
	return storage.SeriesRef(r), nil
}

// appendST appends one sample with its start time st (0 for none): the
// float v, or the histogram h or fh, converted as by appendHistogram.
func (b *base) appendST(ref storage.SeriesRef, ls plabels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram) (storage.SeriesRef, error) {
	r, err := b.app.AppendST(tsdb.SeriesRef(ref), borrowOurLabels(&b.lb, ls), st, t, v, FromPromHistogram(h), FromPromFloatHistogram(fh))
	if err != nil {
		return 0, mapAppendError(err)
	}
	return storage.SeriesRef(r), nil
}

// appendExemplar buffers one exemplar of the series ref or ls, converted.
func (b *base) appendExemplar(ref storage.SeriesRef, ls plabels.Labels, e exemplar.Exemplar) (storage.SeriesRef, error) {
	series := borrowOurLabels(&b.lb, ls)
	ours := tsdb.Exemplar{Labels: toOurLabels(&b.lb, e.Labels), Value: e.Value, Ts: e.Ts, HasTs: e.HasTs}
	r, err := b.app.AppendExemplar(tsdb.SeriesRef(ref), series, ours)
	if err != nil {
		return 0, mapAppendError(err)
	}
	return storage.SeriesRef(r), nil
}

// Commit implements storage.AppenderTransaction: every sample appended
// becomes visible at once.
func (b *base) Commit() error { return b.app.Commit() }

// Rollback implements storage.AppenderTransaction: nothing becomes visible.
func (b *base) Rollback() error { return b.app.Rollback() }

// appender is the storage.Appender (the V1 interface).
type appender struct{ base }

var _ storage.Appender = (*appender)(nil)

// Append implements storage.Appender. Errors with a Prometheus counterpart
// match both (see mapAppendError).
func (a *appender) Append(ref storage.SeriesRef, ls plabels.Labels, t int64, v float64) (storage.SeriesRef, error) {
	return a.appendFloat(ref, ls, t, v)
}

// SetOptions implements storage.Appender: DiscardOutOfOrder rejects late
// samples at the following appends as with the out-of-order window off
// (tsdb.AppendOptions.RejectLate; nil opts clears it).
func (a *appender) SetOptions(opts *storage.AppendOptions) {
	a.setRejectLate(opts != nil && opts.DiscardOutOfOrder)
}

// AppendExemplar implements storage.ExemplarAppender: the exemplar is
// buffered in the transaction (tsdb.Appender.AppendExemplar). Errors match
// isotsdb's and Prometheus's sentinels where both exist (out of order,
// duplicate, label set too long, exemplars disabled), so that Prometheus's
// scrape loop counts and ignores them as it does its own TSDB's.
func (a *appender) AppendExemplar(ref storage.SeriesRef, ls plabels.Labels, e exemplar.Exemplar) (storage.SeriesRef, error) {
	return a.appendExemplar(ref, ls, e)
}

// AppendHistogram implements storage.HistogramAppender: exactly one of h
// and fh must be set. The histogram is copied (the caller may reuse it).
// Errors are as for Append; an invalid histogram is rejected with an error
// matching tsdb.ErrInvalidSample, the isotsdb histogram package's reason and
// Prometheus's model/histogram error for that reason (see mapAppendError).
func (a *appender) AppendHistogram(ref storage.SeriesRef, ls plabels.Labels, t int64, h *histogram.Histogram, fh *histogram.FloatHistogram) (storage.SeriesRef, error) {
	return a.appendHistogram(ref, ls, t, h, fh)
}

// AppendHistogramSTZeroSample implements storage.HistogramAppender: it
// appends, at st, the zero histogram that starts the cumulative count h or
// fh (of which only the schema, zero threshold and custom bounds are used;
// the histogram itself is appended by AppendHistogram), with a
// counter-reset hint, as Prometheus's head does. The errors are
// AppendSTZeroSample's.
func (a *appender) AppendHistogramSTZeroSample(ref storage.SeriesRef, ls plabels.Labels, t, st int64, h *histogram.Histogram, fh *histogram.FloatHistogram) (storage.SeriesRef, error) {
	if st >= t {
		return 0, storage.ErrSTNewerThanSample
	}
	var zh *histogram.Histogram
	var zfh *histogram.FloatHistogram
	switch {
	case h != nil:
		zh = &histogram.Histogram{CounterResetHint: histogram.CounterReset, Schema: h.Schema, ZeroThreshold: h.ZeroThreshold, CustomValues: h.CustomValues}
	case fh != nil:
		zfh = &histogram.FloatHistogram{CounterResetHint: histogram.CounterReset, Schema: fh.Schema, ZeroThreshold: fh.ZeroThreshold, CustomValues: fh.CustomValues}
	}
	return stZeroResult(a.appendHistogram(ref, ls, st, zh, zfh))
}

// AppendSTZeroSample implements storage.StartTimestampAppender: it appends
// the zero sample (st, 0) that starts the cumulative count of the sample at
// t, as Prometheus's head does. st must be before t
// (storage.ErrSTNewerThanSample otherwise); a zero sample that would be out
// of order (the series already has a later sample, as it does for every
// scrape of a long-lived counter after the first) is not appended and gets
// storage.ErrOutOfOrderST, which callers expect and ignore.
func (a *appender) AppendSTZeroSample(ref storage.SeriesRef, ls plabels.Labels, t, st int64) (storage.SeriesRef, error) {
	if st >= t {
		return 0, storage.ErrSTNewerThanSample
	}
	return stZeroResult(a.appendFloat(ref, ls, st, 0))
}

// stZeroResult maps an out-of-order zero sample to storage.ErrOutOfOrderST.
func stZeroResult(ref storage.SeriesRef, err error) (storage.SeriesRef, error) {
	if errors.Is(err, tsdb.ErrOutOfOrderSample) {
		return ref, fmt.Errorf("%w: %w", storage.ErrOutOfOrderST, err)
	}
	return ref, err
}

// appenderV2 is the storage.AppenderV2.
type appenderV2 struct{ base }

var _ storage.AppenderV2 = (*appenderV2)(nil)

// Append implements storage.AppenderV2. A histogram sample (h or fh not
// nil; not both) is appended as by Appender.AppendHistogram, v being
// ignored; otherwise the float v is appended as by Appender.Append. The
// start time st is stored with the sample (tsdb.Appender.AppendST; 0 means
// none). opts.Metadata, unless empty, is applied to the series with the
// sample (as by Appender.UpdateMetadata, so unchanged metadata is not
// logged again); metadata isotsdb rejects (a unit or help text that is
// not valid UTF-8) is dropped, since the contract requires the sample to
// be stored regardless. opts.Exemplars are buffered with the sample, as by
// Appender.AppendExemplar; as in Prometheus's head, duplicates and
// exemplars while exemplars are off are dropped silently, and the others
// that are rejected are reported in a *storage.AppendPartialError (the
// sample is stored regardless).
// opts.RejectOutOfOrder rejects the sample if it is late, as with the
// out-of-order window off (tsdb.AppendOptions.RejectLate).
func (a *appenderV2) Append(ref storage.SeriesRef, ls plabels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AppendV2Options) (storage.SeriesRef, error) {
	a.setRejectLate(opts.RejectOutOfOrder)
	r, err := a.appendST(ref, ls, st, t, v, h, fh)
	if err == nil && !opts.Metadata.IsEmpty() {
		_, _ = a.updateMetadata(r, ls, opts.Metadata)
	}
	if err != nil || len(opts.Exemplars) == 0 {
		return r, err
	}
	_, err = a.AppendExemplars(r, ls, opts.Exemplars)
	return r, err
}

var _ storage.ExemplarAppenderV2 = (*appenderV2)(nil)

// AppendExemplars implements storage.ExemplarAppenderV2 (which Prometheus's
// remote-write receiver requires of its AppenderV2): each exemplar of the
// series ref or ls is buffered in the transaction, as by
// Appender.AppendExemplar. As in Prometheus's head, duplicates and every
// exemplar while exemplars are off are dropped silently; the others that
// are rejected are reported in a *storage.AppendPartialError, the rest
// being kept. The series must have a sample in the DB or in this
// transaction: otherwise nothing is buffered and the error wraps
// storage.ErrNotFound and tsdb.ErrExemplarSeriesNotFound.
func (a *appenderV2) AppendExemplars(ref storage.SeriesRef, ls plabels.Labels, es []exemplar.Exemplar) (storage.SeriesRef, error) {
	var errs []storage.ExemplarError
	for i, e := range es {
		r, err := a.appendExemplar(ref, ls, e)
		switch {
		case err == nil:
			ref = r
		case errors.Is(err, tsdb.ErrDuplicateExemplar), errors.Is(err, tsdb.ErrExemplarsDisabled):
		case errors.Is(err, tsdb.ErrExemplarSeriesNotFound):
			return ref, fmt.Errorf("%w: %w", storage.ErrNotFound, err)
		default:
			errs = append(errs, storage.ExemplarError{Index: i, Err: err})
		}
	}
	if len(errs) > 0 {
		return ref, &storage.AppendPartialError{ExemplarErrors: errs}
	}
	return ref, nil
}
