package scrape_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/prom/scrape"
)

// countingAppender counts the appends that come without a ref (a label
// lookup in the database) and those with one.
type countingAppender struct {
	tsdb.Appender
	noRef, withRef *int
}

func (a countingAppender) count(ref tsdb.SeriesRef) {
	if ref == 0 {
		*a.noRef++
	} else {
		*a.withRef++
	}
}

func (a countingAppender) Append(ref tsdb.SeriesRef, l labels.Labels, t int64, v float64) (tsdb.SeriesRef, error) {
	a.count(ref)
	return a.Appender.Append(ref, l, t, v)
}

func (a countingAppender) AppendHistogram(ref tsdb.SeriesRef, l labels.Labels, t int64, h *histogram.Histogram, fh *histogram.FloatHistogram) (tsdb.SeriesRef, error) {
	a.count(ref)
	return a.Appender.AppendHistogram(ref, l, t, h, fh)
}

// TestRefCache: the second scrape of the same series appends every sample
// by ref and adds no series; a series that vanished is dropped from the
// cache and is a new series when it comes back.
func TestRefCache(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	var noRef, withRef int
	scrape.WrapAppender(s, func(a tsdb.Appender) tsdb.Appender { return countingAppender{a, &noRef, &withRef} })
	reg := newRegistry(t)
	t0 := time.Now()
	res, err := s.ScrapeGatherer(context.Background(), reg, t0)
	require.NoError(t, err)
	require.Equal(t, 12, res.SeriesAdded)
	require.Equal(t, 12+5, noRef) // the series and the report series
	require.Equal(t, 0, withRef)

	noRef, withRef = 0, 0
	res, err = s.ScrapeGatherer(context.Background(), reg, t0.Add(15*time.Second))
	require.NoError(t, err)
	require.Equal(t, 0, res.SeriesAdded)
	require.Equal(t, 0, noRef)
	require.Equal(t, 12+5, withRef)
	require.Equal(t, "0", atShort(t, db, ms(t0.Add(15*time.Second)), "app", "host:9100")["scrape_series_added"])

	// The gauge vanishes (a stale marker, by ref) and comes back: looked up
	// by labels again, and counted as added.
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "extra", Help: "Extra."})
	require.NoError(t, reg.Register(g))
	_, err = s.ScrapeGatherer(context.Background(), reg, t0.Add(30*time.Second))
	require.NoError(t, err)
	reg.Unregister(g)
	_, err = s.ScrapeGatherer(context.Background(), reg, t0.Add(45*time.Second))
	require.NoError(t, err)
	require.NoError(t, reg.Register(g))
	noRef, withRef = 0, 0
	res, err = s.ScrapeGatherer(context.Background(), reg, t0.Add(60*time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, res.SeriesAdded)
	require.Equal(t, 1, noRef)
}
