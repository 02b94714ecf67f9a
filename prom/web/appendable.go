package promweb

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/isotsdb/tsdb"
)

// writeAppendable is the storage.AppendableV2 the remote-write receiver
// writes through. Prometheus's receiver needs each AppenderV2 to be a
// storage.ExemplarAppenderV2 too (it appends a series' exemplars after its
// samples, with AppendExemplars); promstorage's AppenderV2 is not one, so
// each writeAppender is built on one promstorage (V1) storage.Appender,
// which has AppendExemplar: one Appender, hence one isotsdb transaction,
// per AppenderV2.
type writeAppendable struct {
	storage.Appendable
}

// AppenderV2 implements storage.AppendableV2.
func (a writeAppendable) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return &writeAppender{app: a.Appender(ctx)}
}

// writeAppender is a storage.ExemplarAppenderV2 over one storage.Appender:
// every call goes to the same transaction, which Commit or Rollback ends.
//
// Start timestamps (st) are not stored: the remote-write 1.0 messages the
// receiver accepts carry none, and it always passes 0.
type writeAppender struct {
	app storage.Appender
}

var _ storage.ExemplarAppenderV2 = (*writeAppender)(nil)

// Append implements storage.AppenderV2: a float sample, or a histogram if h
// or fh is set, then opts' metadata and exemplars. As AppenderV2 requires,
// the sample is appended even if its metadata or exemplars are rejected;
// rejected exemplars are reported in a *storage.AppendPartialError.
func (w *writeAppender) Append(ref storage.SeriesRef, ls labels.Labels, _, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AOptions) (storage.SeriesRef, error) {
	var err error
	if h != nil || fh != nil {
		ref, err = w.app.AppendHistogram(ref, ls, t, h, fh)
	} else {
		ref, err = w.app.Append(ref, ls, t, v)
	}
	if err != nil {
		return ref, err
	}
	if !opts.Metadata.IsEmpty() {
		// A metadata rejection must not fail the sample (AppenderV2's
		// contract); isotsdb rejects metadata only for a series it does
		// not have, which cannot happen right after the append.
		if r, merr := w.app.UpdateMetadata(ref, ls, opts.Metadata); merr == nil {
			ref = r
		}
	}
	if len(opts.Exemplars) > 0 {
		return w.AppendExemplars(ref, ls, opts.Exemplars)
	}
	return ref, nil
}

// AppendExemplars implements storage.ExemplarAppenderV2: each exemplar is
// buffered in the transaction. Duplicates, and every exemplar while the DB
// keeps none, are dropped silently, as Prometheus's head drops them; other
// rejections are reported in a *storage.AppendPartialError. The series
// must have a sample in the DB or in this transaction, else the error
// wraps storage.ErrNotFound (and tsdb.ErrExemplarSeriesNotFound).
func (w *writeAppender) AppendExemplars(ref storage.SeriesRef, ls labels.Labels, es []exemplar.Exemplar) (storage.SeriesRef, error) {
	var partial *storage.AppendPartialError
	for i, e := range es {
		r, err := w.app.AppendExemplar(ref, ls, e)
		switch {
		case err == nil:
			ref = r
		case errors.Is(err, storage.ErrDuplicateExemplar), errors.Is(err, storage.ErrExemplarsDisabled):
		case errors.Is(err, tsdb.ErrExemplarSeriesNotFound):
			return ref, fmt.Errorf("%w: %w", storage.ErrNotFound, err)
		default:
			if partial == nil {
				partial = &storage.AppendPartialError{}
			}
			partial.ExemplarErrors = append(partial.ExemplarErrors, storage.ExemplarError{Index: i, Err: err})
		}
	}
	if partial != nil {
		return ref, partial
	}
	return ref, nil
}

// Commit implements storage.AppenderTransaction.
func (w *writeAppender) Commit() error {
	if err := w.app.Commit(); err != nil {
		return fmt.Errorf("promweb: commit remote write: %w", err)
	}
	return nil
}

// Rollback implements storage.AppenderTransaction.
func (w *writeAppender) Rollback() error {
	if err := w.app.Rollback(); err != nil {
		return fmt.Errorf("promweb: roll back remote write: %w", err)
	}
	return nil
}
