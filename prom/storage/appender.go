package promstorage

import (
	"fmt"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// base is what both appender kinds share: one isotsdb transaction. Like
// the isotsdb Appender, it is used by one goroutine at a time.
type base struct {
	app tsdb.Appender
	lb  labels.ScratchBuilder // reused for converting label sets
}

func newBase(app tsdb.Appender) base { return base{app: app} }

// appendFloat appends one float sample; storage.SeriesRef and
// tsdb.SeriesRef are the same number.
func (b *base) appendFloat(ref storage.SeriesRef, ls plabels.Labels, t int64, v float64) (storage.SeriesRef, error) {
	r, err := b.app.Append(tsdb.SeriesRef(ref), toOurLabels(&b.lb, ls), t, v)
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

// SetOptions implements storage.Appender. The only option,
// DiscardOutOfOrder, is what isotsdb always does.
func (a *appender) SetOptions(*storage.AppendOptions) {}

// AppendExemplar implements storage.ExemplarAppender: it always fails with
// ErrExemplarsUnsupported.
func (a *appender) AppendExemplar(_ storage.SeriesRef, ls plabels.Labels, _ exemplar.Exemplar) (storage.SeriesRef, error) {
	return 0, unsupported(ErrExemplarsUnsupported, storage.ErrExemplarsDisabled, ls.String())
}

// AppendHistogram implements storage.HistogramAppender: it always fails
// with ErrHistogramsUnsupported.
func (a *appender) AppendHistogram(_ storage.SeriesRef, ls plabels.Labels, _ int64, _ *histogram.Histogram, _ *histogram.FloatHistogram) (storage.SeriesRef, error) {
	return 0, unsupported(ErrHistogramsUnsupported, storage.ErrNativeHistogramsDisabled, ls.String())
}

// AppendHistogramSTZeroSample implements storage.HistogramAppender: it
// always fails with ErrHistogramsUnsupported.
func (a *appender) AppendHistogramSTZeroSample(_ storage.SeriesRef, ls plabels.Labels, _, _ int64, _ *histogram.Histogram, _ *histogram.FloatHistogram) (storage.SeriesRef, error) {
	return 0, unsupported(ErrHistogramsUnsupported, storage.ErrNativeHistogramsDisabled, ls.String())
}

// UpdateMetadata implements storage.MetadataUpdater: it always fails with
// ErrMetadataUnsupported.
func (a *appender) UpdateMetadata(_ storage.SeriesRef, ls plabels.Labels, _ metadata.Metadata) (storage.SeriesRef, error) {
	return 0, unsupported(ErrMetadataUnsupported, nil, ls.String())
}

// AppendSTZeroSample implements storage.StartTimestampAppender: it always
// fails with ErrStartTimestampsUnsupported. (The zero sample it would add
// is a float sample isotsdb could store, but a counter's artificial zero is
// only meaningful together with start-timestamp-aware reads, which isotsdb
// does not have.)
func (a *appender) AppendSTZeroSample(_ storage.SeriesRef, ls plabels.Labels, _, _ int64) (storage.SeriesRef, error) {
	return 0, unsupported(ErrStartTimestampsUnsupported, nil, ls.String())
}

// appenderV2 is the storage.AppenderV2.
type appenderV2 struct{ base }

var _ storage.AppenderV2 = (*appenderV2)(nil)

// Append implements storage.AppenderV2. A histogram (h or fh not nil) is
// rejected with ErrHistogramsUnsupported. A float sample is appended as by
// Appender.Append; st and opts.Metadata are dropped (isotsdb stores
// neither; the contract requires the sample to be stored regardless), and
// if opts.Exemplars is not empty the sample is stored and the exemplars are
// reported in a *storage.AppendPartialError, each wrapping
// ErrExemplarsUnsupported. opts.RejectOutOfOrder is what isotsdb always
// does.
func (a *appenderV2) Append(ref storage.SeriesRef, ls plabels.Labels, _, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AppendV2Options) (storage.SeriesRef, error) {
	if h != nil || fh != nil {
		return 0, unsupported(ErrHistogramsUnsupported, storage.ErrNativeHistogramsDisabled, ls.String())
	}
	r, err := a.appendFloat(ref, ls, t, v)
	if err != nil || len(opts.Exemplars) == 0 {
		return r, err
	}
	pe := &storage.AppendPartialError{ExemplarErrors: make([]storage.ExemplarError, len(opts.Exemplars))}
	for i := range opts.Exemplars {
		pe.ExemplarErrors[i] = storage.ExemplarError{
			Index: i,
			Err:   unsupported(ErrExemplarsUnsupported, storage.ErrExemplarsDisabled, fmt.Sprintf("%s, exemplar %d", ls, i)),
		}
	}
	return r, pe
}
