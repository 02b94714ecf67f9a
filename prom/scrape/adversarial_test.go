package scrape_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/prom/scrape"
)

// TestScrapeAfterClose: every call on a Scraper whose DB is closed fails
// with an error that is tsdb.ErrClosed, and none panics.
func TestScrapeAfterClose(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	now := time.Now()
	body := []byte("# TYPE a gauge\na 1\n")
	_, err := s.ScrapeExposition(context.Background(), body, textType, now)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	_, err = s.ScrapeExposition(context.Background(), body, textType, now.Add(time.Second))
	require.ErrorIs(t, err, tsdb.ErrClosed, "scrape after Close")
	_, err = s.MarkStale(context.Background(), now.Add(2*time.Second))
	require.ErrorIs(t, err, tsdb.ErrClosed, "MarkStale after Close")
}

// TestAbsurdTimestamps: exposed timestamps at the end of the int64 range or
// in microseconds (far in the future, beyond the DB's MaxFutureSkew) are
// counted as out of bounds and skipped; the rest of the scrape is stored. (A negative timestamp is a
// parse error of the text format.)
func TestAbsurdTimestamps(t *testing.T) {
	o := testOptions()
	o.MaxFutureSkew = time.Hour // off by default: the DB would take the microseconds
	db, err := tsdb.Open(t.TempDir(), nil, nil, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now().Truncate(time.Millisecond)
	body := "# TYPE a gauge\n" +
		"a{k=\"max\"} 1 9223372036854775807\n" +
		"a{k=\"micros\"} 3 " + itoa(now.UnixMicro()) + "\n" +
		"a{k=\"ok\"} 4\n"
	res, err := scrape.New(db, scrape.Options{Labels: target}).ScrapeExposition(context.Background(), []byte(body), textType, now)
	require.NoError(t, err)
	require.Equal(t, 2, res.OutOfBounds, "the two absurd timestamps")
	require.Equal(t, 1, res.Samples)
	got := readAll(t, db)
	require.Equal(t, []point{{T: ms(now), V: 4}}, got[`{__name__="a", instance="host:9100", job="app", k="ok"}`])
	for _, k := range []string{"max", "micros"} {
		require.NotContains(t, got, `{__name__="a", instance="host:9100", job="app", k="`+k+`"}`)
	}
}

// TestGarbageBodies: bodies that are not expositions fail the scrape with
// a *ScrapeError and store nothing of it (only up=0 and the other report
// series).
func TestGarbageBodies(t *testing.T) {
	for name, c := range map[string]struct {
		body        string
		contentType string
	}{
		"binary as text":      {"\xff\xfe\x01 garbage", textType},
		"binary as protobuf":  {"\xff\xff\xff\xff\x0f garbage", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"},
		"openmetrics no EOF":  {"# TYPE a gauge\na 1\n", omType},
		"text cut mid-series": {"# TYPE a gauge\na 1\na{k=\"x", textType},
		"negative timestamp":  {"# TYPE a gauge\na 1 -5\n", textType},
	} {
		t.Run(name, func(t *testing.T) {
			db := openDB(t, t.TempDir())
			_, err := scrape.New(db, scrape.Options{Labels: target}).ScrapeExposition(context.Background(), []byte(c.body), c.contentType, time.Now())
			require.Error(t, err)
			var se *scrape.ScrapeError
			require.True(t, errors.As(err, &se), "a *ScrapeError: %v", err)
			for k := range readAll(t, db) {
				require.NotContains(t, k, `__name__="a"`, "a sample of the failed scrape was stored")
			}
		})
	}
}
