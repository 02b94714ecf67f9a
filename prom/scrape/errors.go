package scrape

import (
	"errors"
	"fmt"
)

// Errors a scrape can fail with, wrapped in a *ScrapeError (errors.Is
// finds them).
var (
	// ErrContentType: the exposition's content type is missing, cannot be
	// parsed or is not one textparse knows, and Options.FallbackContentType
	// is empty (or is not one it knows either).
	ErrContentType = errors.New("scrape: unsupported content type")
	// ErrNoMetricName: a scraped series has no __name__ label. (The
	// parsers of textparse refuse such a series themselves, with a parse
	// error; this guards the label sets the Scraper builds.)
	ErrNoMetricName = errors.New("scrape: series without a metric name")
	// ErrTargetLabels: Options.Labels is not a valid set of target labels
	// (see Options.Labels). Every scrape of such a Scraper fails with it
	// and writes nothing.
	ErrTargetLabels = errors.New("scrape: invalid target labels")
)

// ScrapeError is the error of a failed scrape. Err is the cause: a
// gathering, encoding or parse error, one of the Err... values of this
// package, an append error of the database (tsdb.ErrClosed, an invalid
// histogram, ...), or an error wrapping the context's error.
//
// Committed reports what was written instead of the scrape: true if the
// transaction that ends the previous scrape's series with stale markers
// and reports up=0 was committed (see Scraper), false if nothing at all
// was written (the context was done, the database refused the commit, or
// the target labels are invalid).
type ScrapeError struct {
	Err       error
	Committed bool
}

func (e *ScrapeError) Error() string {
	if e.Committed {
		return fmt.Sprintf("scrape failed (stale markers and up=0 written): %v", e.Err)
	}
	return fmt.Sprintf("scrape failed (nothing written): %v", e.Err)
}

// Unwrap returns the cause.
func (e *ScrapeError) Unwrap() error { return e.Err }
