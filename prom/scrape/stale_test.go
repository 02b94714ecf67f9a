package scrape_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/prom/scrape"
)

// TestStaleness: a float series and a native histogram vanish from the
// registry; the next scrape ends them with stale markers in its own
// transaction, and the scrape after that writes no more markers.
func TestStaleness(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "queue_length", Help: "Queue."}, []string{"queue"})
	g.WithLabelValues("a").Set(1)
	g.WithLabelValues("b").Set(2)
	nh := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "native_seconds", Help: "Native.", NativeHistogramBucketFactor: 1.1})
	nh.Observe(1)
	reg.MustRegister(g, nh)

	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	t0 := time.Now()
	_, err := s.ScrapeGatherer(context.Background(), reg, t0)
	require.NoError(t, err)

	g.DeleteLabelValues("b")
	reg.Unregister(nh)
	t1 := t0.Add(15 * time.Second)
	res, err := s.ScrapeGatherer(context.Background(), reg, t1)
	require.NoError(t, err)
	require.Equal(t, 2, res.Stale)
	got := atShort(t, db, ms(t1), "app", "host:9100")
	require.Equal(t, "1", got[`queue_length{queue="a"}`])
	require.Equal(t, "stale", got[`queue_length{queue="b"}`])
	require.Equal(t, "stale", got["native_seconds"])
	require.Equal(t, "1", got["up"])
	require.Equal(t, "0", got["scrape_series_added"])
	require.Equal(t, "1", got["scrape_samples_scraped"])

	t2 := t1.Add(15 * time.Second)
	res, err = s.ScrapeGatherer(context.Background(), reg, t2)
	require.NoError(t, err)
	require.Equal(t, 0, res.Stale)
	got = atShort(t, db, ms(t2), "app", "host:9100")
	require.NotContains(t, got, `queue_length{queue="b"}`)

	// The series comes back: it is added again, and stored.
	g.WithLabelValues("b").Set(5)
	t3 := t2.Add(15 * time.Second)
	res, err = s.ScrapeGatherer(context.Background(), reg, t3)
	require.NoError(t, err)
	require.Equal(t, 1, res.SeriesAdded)
	require.Equal(t, "5", atShort(t, db, ms(t3), "app", "host:9100")[`queue_length{queue="b"}`])
}

// TestStalenessAfterRestart: after Close and Open, a new Scraper of the same
// target ends the series the previous process scraped that are gone now,
// and leaves alone those of another target, those still exposed and those
// already ended.
func TestStalenessAfterRestart(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	other := labels.FromStrings("job", "app", "instance", "other:9100")
	t0 := time.Now()
	body := "# TYPE a gauge\na 1\nb 2\nc 3\n"
	_, err := scrape.New(db, scrape.Options{Labels: target}).ScrapeExposition(context.Background(), []byte(body), "text/plain", t0)
	require.NoError(t, err)
	_, err = scrape.New(db, scrape.Options{Labels: other}).ScrapeExposition(context.Background(), []byte(body), "text/plain", t0)
	require.NoError(t, err)
	// c is ended before the restart.
	s := scrape.New(db, scrape.Options{Labels: target})
	t1 := t0.Add(15 * time.Second)
	_, err = s.ScrapeExposition(context.Background(), []byte("a 1\nb 2\n"), "text/plain", t1)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	db = openDB(t, dir)
	s = scrape.New(db, scrape.Options{Labels: target})
	t2 := t1.Add(15 * time.Second)
	res, err := s.ScrapeExposition(context.Background(), []byte("a 1\n"), "text/plain", t2)
	require.NoError(t, err)
	require.Equal(t, 1, res.Stale, "%+v", res)
	got := atShort(t, db, ms(t2), "app", "host:9100")
	require.Equal(t, "1", got["a"])
	require.Equal(t, "stale", got["b"])
	require.NotContains(t, got, "c")
	require.Equal(t, "1", got["up"])
	require.Empty(t, atShort(t, db, ms(t2), "app", "other:9100"))

	// The next scrape has nothing left to end.
	res, err = s.ScrapeExposition(context.Background(), []byte("a 1\n"), "text/plain", t2.Add(15*time.Second))
	require.NoError(t, err)
	require.Equal(t, 0, res.Stale)
}

// TestMarkStale: the target is gone; every series of its last scrape and
// its report series end, and the markers survive a restart in which a new
// Scraper is told the target is gone.
func TestMarkStale(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	s := scrape.New(db, scrape.Options{Labels: target})
	t0 := time.Now()
	_, err := s.ScrapeExposition(context.Background(), []byte("a 1\nb 2\n"), "text/plain", t0)
	require.NoError(t, err)
	t1 := t0.Add(15 * time.Second)
	res, err := s.MarkStale(context.Background(), t1)
	require.NoError(t, err)
	require.Equal(t, 7, res.Stale) // a, b and the five report series
	got := atShort(t, db, ms(t1), "app", "host:9100")
	for _, name := range []string{"a", "b", "up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_samples_post_metric_relabeling", "scrape_series_added"} {
		require.Equal(t, "stale", got[name], name)
	}

	// The target comes back: a new target for the scrape counts.
	res, err = s.ScrapeExposition(context.Background(), []byte("a 1\nb 2\n"), "text/plain", t1.Add(500*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, 2, res.SeriesAdded)
	res, err = s.MarkStale(context.Background(), t1.Add(600*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, 7, res.Stale)

	// After a restart, with a series written by the previous process.
	_, err = scrape.New(db, scrape.Options{Labels: target}).ScrapeExposition(context.Background(), []byte("c 1\n"), "text/plain", t1.Add(time.Second))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db = openDB(t, dir)
	t2 := t1.Add(15 * time.Second)
	res, err = scrape.New(db, scrape.Options{Labels: target}).MarkStale(context.Background(), t2)
	require.NoError(t, err)
	got = atShort(t, db, ms(t2), "app", "host:9100")
	require.Equal(t, "stale", got["c"])
	require.Equal(t, "stale", got["up"])
	require.NotContains(t, got, "a") // already ended
	require.Equal(t, 6, res.Stale, "%+v", res)
}

// TestTimestampStaleness: series with their own timestamps get no stale
// marker when they vanish, unless TrackTimestampsStaleness is set.
func TestTimestampStaleness(t *testing.T) {
	for _, track := range []bool{false, true} {
		db := openDB(t, t.TempDir())
		s := scrape.New(db, scrape.Options{Labels: target, TrackTimestampsStaleness: track})
		t0 := time.Now().Truncate(time.Second)
		body := "a 1 " + itoa(ms(t0)-5000) + "\nb 2\n"
		_, err := s.ScrapeExposition(context.Background(), []byte(body), "text/plain", t0)
		require.NoError(t, err)
		t1 := t0.Add(15 * time.Second)
		_, err = s.ScrapeExposition(context.Background(), []byte("c 1\n"), "text/plain", t1)
		require.NoError(t, err)
		got := atShort(t, db, ms(t1), "app", "host:9100")
		require.Equal(t, "stale", got["b"])
		if track {
			require.Equal(t, "stale", got["a"])
		} else {
			require.NotContains(t, got, "a")
		}
	}
}

// TestEmptyScrape: an empty exposition (or an empty gathering) is a
// successful scrape of nothing, as in Prometheus: up is 1 and every series
// ends.
func TestEmptyScrape(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	t0 := time.Now()
	_, err := s.ScrapeExposition(context.Background(), []byte("a 1\n"), textType, t0)
	require.NoError(t, err)
	t1 := t0.Add(15 * time.Second)
	res, err := s.ScrapeGatherer(context.Background(), prometheus.NewRegistry(), t1)
	require.NoError(t, err)
	require.Equal(t, 1, res.Stale)
	got := atShort(t, db, ms(t1), "app", "host:9100")
	require.Equal(t, "stale", got["a"])
	require.Equal(t, "1", got["up"])
	require.Equal(t, "0", got["scrape_samples_scraped"])
}
