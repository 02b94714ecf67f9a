package remote

import (
	"errors"
	"fmt"
)

var (
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("remote: invalid config")
	// ErrStopped is returned by Start on a Sender that was already started
	// or stopped.
	ErrStopped = errors.New("remote: sender already started or stopped")
	// ErrPositionFile reports a position file that cannot be parsed.
	ErrPositionFile = errors.New("remote: bad position file")
	// ErrRejected reports a response the sender does not retry (a 4xx
	// other than 429): the batch is counted failed and dropped.
	ErrRejected = errors.New("remote: request rejected by receiver")
)

// HTTPError is a non-2xx answer of the receiver. It wraps ErrRejected when
// the sender gives up on it (4xx other than 429).
type HTTPError struct {
	Status int
	Body   string // first bytes of the response body
	// Written is what a remote write 2.0 receiver says it stored of the
	// request despite the error (its X-Prometheus-Remote-Write-*-Written
	// headers: a partial write); nil if it did not say.
	Written *Written
}

// Written is what a remote write 2.0 receiver reports it stored of a
// request.
type Written struct {
	Samples, Histograms, Exemplars int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("remote: server returned HTTP status %d: %s", e.Status, e.Body)
}

// Unwrap returns ErrRejected for statuses that are not retried.
func (e *HTTPError) Unwrap() error {
	if !retryableStatus(e.Status) {
		return ErrRejected
	}
	return nil
}

// retryableStatus reports whether a response with this status is retried:
// server errors and 429 Too Many Requests.
func retryableStatus(code int) bool { return code/100 == 5 || code == 429 }
