package scrape_test

import (
	"context"
	"errors"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/prom/scrape"
)

// TestFailedScrape: an exposition that fails to parse halfway stores none
// of its samples (not even those before the error); the previous scrape's
// series end and up is 0, in one commit. The next good scrape brings the
// series back.
func TestFailedScrape(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	t0 := time.Now()
	_, err := s.ScrapeExposition(context.Background(), []byte("# HELP a A.\n# TYPE a gauge\na 1\nb 2\n"), "text/plain", t0)
	require.NoError(t, err)

	t1 := t0.Add(15 * time.Second)
	res, err := s.ScrapeExposition(context.Background(), []byte("a 5\nnew 1\nb{ 3\n"), "text/plain", t1)
	var se *scrape.ScrapeError
	require.ErrorAs(t, err, &se)
	require.True(t, se.Committed)
	require.Equal(t, 2, res.Stale)
	got := atShort(t, db, ms(t1), "app", "host:9100")
	delete(got, "scrape_duration_seconds")
	require.Equal(t, map[string]string{
		"a": "stale", "b": "stale", "up": "0",
		// As Prometheus reports them: the counts up to the error.
		"scrape_samples_scraped": "2", "scrape_samples_post_metric_relabeling": "2", "scrape_series_added": "1",
	}, got)
	require.Equal(t, 0, res.Samples)

	t2 := t1.Add(15 * time.Second)
	res, err = s.ScrapeExposition(context.Background(), []byte("a 6\nnew 1\n"), "text/plain", t2)
	require.NoError(t, err)
	require.Equal(t, 0, res.Stale) // b ended with the failed scrape
	require.Equal(t, 1, res.SeriesAdded, "new was not stored by the failed scrape")
	got = atShort(t, db, ms(t2), "app", "host:9100")
	require.Equal(t, "6", got["a"])
	require.Equal(t, "1", got["new"])
	require.Equal(t, "1", got["up"])
	// The failed scrape's series "new" still gets its metadata next time
	// it comes with some.
	_, err = s.ScrapeExposition(context.Background(), []byte("# HELP new New.\nnew 1\n"), "text/plain", t2.Add(15*time.Second))
	require.NoError(t, err)
	m, ok := seriesMetadata(t, db, labels.FromStrings("__name__", "new", "instance", "host:9100", "job", "app"))
	require.True(t, ok)
	require.Equal(t, "New.", m.Help)
}

// gathererFunc is a prometheus.Gatherer.
type gathererFunc func() ([]*dto.MetricFamily, error)

func (f gathererFunc) Gather() ([]*dto.MetricFamily, error) { return f() }

// TestFailedGather: a Gatherer's error fails the scrape like an HTTP error,
// even with metric families returned alongside.
func TestFailedGather(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	reg := newRegistry(t)
	t0 := time.Now()
	_, err := s.ScrapeGatherer(context.Background(), reg, t0)
	require.NoError(t, err)
	boom := errors.New("boom")
	t1 := t0.Add(15 * time.Second)
	res, err := s.ScrapeGatherer(context.Background(), gathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, _ := reg.Gather()
		return mfs, boom
	}), t1)
	require.ErrorIs(t, err, boom)
	require.Equal(t, 12, res.Stale)
	got := atShort(t, db, ms(t1), "app", "host:9100")
	require.Equal(t, "0", got["up"])
	require.Equal(t, "stale", got["size_bytes"])
	require.Equal(t, "stale", got[`requests_total{code="200"}`])
	require.Equal(t, "0", got["scrape_samples_scraped"])
}

// TestContextCancelled: a scrape whose context is done writes nothing at
// all (no stale markers, no up=0) and leaves the Scraper as it was: the
// next scrape ends exactly the series the last committed one had.
func TestContextCancelled(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	t0 := time.Now()
	_, err := s.ScrapeExposition(context.Background(), []byte("a 1\nb 2\n"), "text/plain", t0)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t1 := t0.Add(15 * time.Second)
	_, err = s.ScrapeExposition(ctx, []byte("a 1\nc 3\n"), "text/plain", t1)
	require.ErrorIs(t, err, context.Canceled)
	var se *scrape.ScrapeError
	require.ErrorAs(t, err, &se)
	require.False(t, se.Committed)

	// Cancelled while gathering: the appends fail, nothing is written.
	ctx, cancel = context.WithCancel(context.Background())
	_, err = s.ScrapeGatherer(ctx, gathererFunc(func() ([]*dto.MetricFamily, error) {
		cancel()
		return newRegistry(t).Gather()
	}), t1)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, atShort(t, db, ms(t1), "app", "host:9100"))

	t2 := t1.Add(15 * time.Second)
	res, err := s.ScrapeExposition(context.Background(), []byte("a 1\n"), "text/plain", t2)
	require.NoError(t, err)
	require.Equal(t, 1, res.Stale)
	require.Equal(t, 0, res.SeriesAdded)
	got := atShort(t, db, ms(t2), "app", "host:9100")
	require.Equal(t, "stale", got["b"])
	require.NotContains(t, got, "c")
}

// TestErrors: the package's sentinels, each with nothing scraped stored.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name        string
		opts        scrape.Options
		body, ctype string
		want        error
	}{
		{"no content type", scrape.Options{Labels: target}, "a 1\n", "", scrape.ErrContentType},
		{"unknown content type", scrape.Options{Labels: target}, "a 1\n", "application/json", scrape.ErrContentType},
		{"reserved target label", scrape.Options{Labels: labels.FromStrings("__name__", "x")}, "a 1\n", "text/plain", scrape.ErrTargetLabels},
		{"empty target label", scrape.Options{Labels: labels.FromStrings("job", "")}, "a 1\n", "text/plain", scrape.ErrTargetLabels},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, t.TempDir())
			_, err := scrape.New(db, c.opts).ScrapeExposition(ctx, []byte(c.body), c.ctype, time.Now())
			require.ErrorIs(t, err, c.want)
			all := readAll(t, db)
			require.NotContains(t, all, `{__name__="a", instance="host:9100", job="app"}`)
		})
	}
	// A fallback makes an unknown content type usable.
	db := openDB(t, t.TempDir())
	now := time.Now()
	_, err := scrape.New(db, scrape.Options{Labels: target, FallbackContentType: "text/plain"}).ScrapeExposition(ctx, []byte("a 1\n"), "application/json", now)
	require.NoError(t, err)
	require.Equal(t, "1", atShort(t, db, ms(now), "app", "host:9100")["a"])
	// An invalid sample fails the scrape (tsdb's error is the cause).
	_, err = scrape.New(db, scrape.Options{Labels: target}).ScrapeExposition(ctx, []byte("a 1\n"), "text/plain", time.UnixMilli(tsdb.MaxSampleTime).Add(time.Hour))
	require.Error(t, err)
}
