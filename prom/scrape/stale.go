package scrape

import (
	"errors"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
)

// writeStale appends a stale marker at ts for every series of the last
// successful scrape (and, after a restart, of the head's series of the
// target) that the scrape being made did not append.
func (s *Scraper) writeStale(app tsdb.Appender, ts int64, res *Result) error {
	for ref, ce := range s.tracked {
		if _, ok := s.attempt[ref]; ok {
			continue
		}
		if err := appendStale(app, ref, ce.lset, ts, res); err != nil {
			return err
		}
	}
	for ref, lset := range s.pending {
		if _, ok := s.pendingSeen[ref]; ok {
			continue
		}
		if _, ok := s.attempt[ref]; ok {
			continue
		}
		if err := appendStale(app, ref, lset, ts, res); err != nil {
			return err
		}
	}
	return nil
}

// appendStale appends one stale marker. As in Prometheus it must not be a
// late sample (RejectLate), and a marker the series' samples make out of
// order or a duplicate is skipped: the series has moved on (a target that
// came back, with another Scraper), or was written at ts.
func appendStale(app tsdb.Appender, ref tsdb.SeriesRef, lset labels.Labels, ts int64, res *Result) error {
	app.SetOptions(tsdb.AppendOptions{RejectLate: true})
	_, err := app.Append(ref, lset, ts, value.StaleMarker())
	app.SetOptions(tsdb.AppendOptions{})
	switch {
	case err == nil:
		res.Stale++
	case errors.Is(err, tsdb.ErrOutOfOrderSample), errors.Is(err, tsdb.ErrDuplicateSampleForTimestamp), isOutOfBounds(err):
	default:
		return err
	}
	return nil
}

// isOutOfBounds reports whether err rejects a sample for its time: before
// the head's range (or the out-of-order window) or too far in the future.
func isOutOfBounds(err error) bool {
	return errors.Is(err, tsdb.ErrOutOfBounds) || errors.Is(err, tsdb.ErrTooOldSample) || errors.Is(err, tsdb.ErrTooFarInFuture)
}

// moveRef gives ce the ref the database returned for it, which differs
// from the cached one when head compaction removed the series and an
// Append recreated it; its staleness tracking moves along, or the old ref
// would look like a vanished series.
func (s *Scraper) moveRef(ce *cacheEntry, ref tsdb.SeriesRef) {
	for _, m := range []map[tsdb.SeriesRef]*cacheEntry{s.tracked, s.attempt} {
		if m[ce.ref] == ce {
			delete(m, ce.ref)
			m[ref] = ce
		}
	}
	ce.ref = ref
}
