package scrape

import (
	"errors"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// reportSeries are the series Prometheus writes about each scrape of a
// target (without extra-scrape-metrics), in the order written, with the
// metadata Prometheus gives them.
var reportSeries = [...]struct{ name, help, unit string }{
	{"up", "Health of the scrape target. 1 means the target is healthy, 0 if the scrape failed.", "targets"},
	{"scrape_duration_seconds", "Duration of the last scrape in seconds.", "seconds"},
	{"scrape_samples_scraped", "Number of samples last scraped.", "samples"},
	{"scrape_samples_post_metric_relabeling", "Number of samples remaining after metric relabeling was applied.", "samples"},
	{"scrape_series_added", "Number of series in the last scrape.", "series"},
}

// reportEntry is a report series' ref cache.
type reportEntry struct {
	ref  tsdb.SeriesRef
	lset labels.Labels
	// metaIter is the scrape that wrote the series' metadata (0: not yet
	// written, or not committed).
	metaIter uint64
}

// isReport reports whether lset is one of the target's report series.
func (s *Scraper) isReport(lset labels.Labels) bool {
	for i := range s.reports {
		if labels.Equal(s.reports[i].lset, lset) {
			return true
		}
	}
	return false
}

// writeReport appends the report series of a scrape at ts: up (1 or 0)
// and the counts of res.
func (s *Scraper) writeReport(app tsdb.Appender, ts int64, up float64, res *Result) error {
	vals := [len(reportSeries)]float64{up, res.Duration.Seconds(), float64(res.Scraped), float64(res.PostRelabel), float64(res.SeriesAdded)}
	for i, v := range vals {
		if err := s.appendReport(app, i, ts, v, res); err != nil {
			return err
		}
	}
	return nil
}

// writeReportStale ends the report series with stale markers at ts.
func (s *Scraper) writeReportStale(app tsdb.Appender, ts int64, res *Result) error {
	for i := range s.reports {
		e := &s.reports[i]
		if err := appendStale(app, e.ref, e.lset, ts, res); err != nil {
			return err
		}
	}
	return nil
}

// appendReport appends v to report series i, and its metadata the first
// time. A value the series' samples make out of order or a duplicate is
// skipped, as in Prometheus (a target scraped again after a restart at an
// earlier time).
func (s *Scraper) appendReport(app tsdb.Appender, i int, ts int64, v float64, res *Result) error {
	e := &s.reports[i]
	ref, err := app.Append(e.ref, e.lset, ts, v)
	switch {
	case err == nil:
	case errors.Is(err, tsdb.ErrOutOfOrderSample), errors.Is(err, tsdb.ErrDuplicateSampleForTimestamp):
		return nil
	default:
		return err
	}
	e.ref = ref
	if e.metaIter == 0 {
		m := tsdb.Metadata{Type: tsdb.MetricTypeGauge, Help: reportSeries[i].help, Unit: reportSeries[i].unit}
		if _, err := app.UpdateMetadata(ref, e.lset, m); err == nil {
			e.metaIter = s.iter
			res.Metadata++
		}
	}
	return nil
}
