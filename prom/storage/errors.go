package promstorage

import (
	"errors"
	"fmt"

	"github.com/prometheus/prometheus/storage"

	"github.com/isotsdb/tsdb"
)

// Errors for what isotsdb cannot store. Each is returned wrapped, with the
// series it concerns; the transaction that got it is otherwise unaffected.
var (
	// ErrHistogramsUnsupported: a native histogram sample was appended.
	// Errors wrapping it also match storage.ErrNativeHistogramsDisabled.
	ErrHistogramsUnsupported = errors.New("promstorage: native histograms are not supported")
	// ErrExemplarsUnsupported: an exemplar was appended. Errors wrapping it
	// also match storage.ErrExemplarsDisabled.
	ErrExemplarsUnsupported = errors.New("promstorage: exemplars are not supported")
	// ErrMetadataUnsupported: Appender.UpdateMetadata was called.
	ErrMetadataUnsupported = errors.New("promstorage: metric metadata is not supported")
	// ErrStartTimestampsUnsupported: Appender.AppendSTZeroSample was called.
	ErrStartTimestampsUnsupported = errors.New("promstorage: start timestamps are not supported")
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

// appendErrorPairs maps isotsdb's append errors to Prometheus's.
var appendErrorPairs = [...]struct{ ours, prom error }{
	{tsdb.ErrOutOfOrderSample, storage.ErrOutOfOrderSample},
	{tsdb.ErrDuplicateSampleForTimestamp, storage.ErrDuplicateSampleForTimestamp},
	{tsdb.ErrOutOfBounds, storage.ErrOutOfBounds},
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

// unsupported returns the error for an unsupported kind of data appended to
// the series described by what; prom, if not nil, is the Prometheus error
// the result also matches.
func unsupported(sentinel, prom error, what string) error {
	err := fmt.Errorf("%w (series %s)", sentinel, what)
	if prom == nil {
		return err
	}
	return &dualError{err: err, prom: prom}
}
