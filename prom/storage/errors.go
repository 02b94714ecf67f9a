package promstorage

import (
	"errors"

	phistogram "github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/storage"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/histogram"
)

// Errors for what isotsdb cannot store. Each is returned wrapped, with the
// series it concerns; the transaction that got it is otherwise unaffected.
var (
	// ErrMetadataUnsupported is no longer returned: Appender.UpdateMetadata
	// stores metadata since isotsdb has it (tsdb.Metadata).
	//
	// Deprecated: nothing returns it.
	ErrMetadataUnsupported = errors.New("promstorage: metric metadata is not supported")
)

// dualError is an error that matches two sentinels with errors.Is: the
// isotsdb (or promstorage) error it prints, and the Prometheus storage error
// that means the same thing. Prometheus components test for their own
// sentinels (the scrape loop counts storage.ErrOutOfOrderSample, PromQL's
// tests expect it), while isotsdb users test for isotsdb's.
type dualError struct {
	err  error // printed; wraps our sentinel
	prom error // the corresponding storage.Err... value
}

func (e *dualError) Error() string   { return e.err.Error() }
func (e *dualError) Unwrap() []error { return []error{e.err, e.prom} }

// appendErrorPairs maps isotsdb's append errors to Prometheus's. An error
// wraps at most one of the isotsdb errors listed. The histogram validation
// reasons map to the errors Prometheus's histogram Validate methods return
// for the same fault (Prometheus's head returns those errors themselves);
// the invalid histogram's error also wraps tsdb.ErrInvalidSample and
// histogram.ErrInvalid, which have no Prometheus counterpart.
var appendErrorPairs = [...]struct{ ours, prom error }{
	{tsdb.ErrOutOfOrderExemplar, storage.ErrOutOfOrderExemplar},
	{tsdb.ErrDuplicateExemplar, storage.ErrDuplicateExemplar},
	{tsdb.ErrExemplarLabelLength, storage.ErrExemplarLabelLength},
	{tsdb.ErrExemplarsDisabled, storage.ErrExemplarsDisabled},

	{tsdb.ErrOutOfOrderSample, storage.ErrOutOfOrderSample},
	{tsdb.ErrTooOldSample, storage.ErrTooOldSample},
	{tsdb.ErrDuplicateSampleForTimestamp, storage.ErrDuplicateSampleForTimestamp},
	{tsdb.ErrOutOfBounds, storage.ErrOutOfBounds},

	{histogram.ErrSchema, phistogram.ErrHistogramsInvalidSchema},
	{histogram.ErrSpanNegativeOffset, phistogram.ErrHistogramSpanNegativeOffset},
	{histogram.ErrSpanIndexRange, phistogram.ErrHistogramSpanIndexOutOfRange},
	{histogram.ErrSpanBucketMismatch, phistogram.ErrHistogramSpansBucketsMismatch},
	{histogram.ErrNegativeBucketCount, phistogram.ErrHistogramNegativeBucketCount},
	{histogram.ErrNegativeCount, phistogram.ErrHistogramNegativeCount},
	{histogram.ErrCountMismatch, phistogram.ErrHistogramCountMismatch},
	{histogram.ErrCountTooSmall, phistogram.ErrHistogramCountNotBigEnough},
	{histogram.ErrCustomBoundsNaN, phistogram.ErrHistogramCustomBucketsNaN},
	{histogram.ErrCustomBoundsOrder, phistogram.ErrHistogramCustomBucketsInvalid},
	{histogram.ErrCustomBoundsInfinite, phistogram.ErrHistogramCustomBucketsInfinite},
	{histogram.ErrCustomBoundsTooFew, phistogram.ErrHistogramCustomBucketsMismatch},
	{histogram.ErrCustomZeroCount, phistogram.ErrHistogramCustomBucketsZeroCount},
	{histogram.ErrCustomZeroThreshold, phistogram.ErrHistogramCustomBucketsZeroThresh},
	{histogram.ErrCustomNegativeSpans, phistogram.ErrHistogramCustomBucketsNegSpans},
	{histogram.ErrCustomNegativeBuckets, phistogram.ErrHistogramCustomBucketsNegBuckets},
	{histogram.ErrExponentialCustomBounds, phistogram.ErrHistogramExpSchemaCustomBounds},
}

// mapAppendError returns err (from an isotsdb Append) so that it also
// matches the corresponding Prometheus storage error, if there is one. It
// returns nil for nil and err itself when there is no counterpart.
func mapAppendError(err error) error {
	if err == nil {
		return nil
	}
	for _, p := range appendErrorPairs {
		if errors.Is(err, p.ours) {
			return &dualError{err: err, prom: p.prom}
		}
	}
	return err
}
