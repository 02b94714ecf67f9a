package promstorage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

// TestAppendExemplarErrors: the adapter's AppendExemplar stores exemplars
// and rejects the others with errors that match both isotsdb's sentinel
// and the one Prometheus's scrape loop tests for; a rejection leaves the
// transaction alone.
func TestAppendExemplarErrors(t *testing.T) {
	s := newExemplarStorage(t, 10)
	ls := labels.FromStrings("__name__", "m")
	app := s.Appender(context.Background())
	ref, err := app.Append(0, ls, 10, 1)
	require.NoError(t, err)
	good := exemplar.Exemplar{Labels: labels.FromStrings("trace_id", "a"), Value: 1, Ts: 10, HasTs: true}
	got, err := app.AppendExemplar(ref, ls, good)
	require.NoError(t, err)
	require.Equal(t, ref, got)
	for _, tc := range []struct {
		name       string
		e          exemplar.Exemplar
		ours, prom error
	}{
		{"duplicate", good, tsdb.ErrDuplicateExemplar, storage.ErrDuplicateExemplar},
		{"out of order", exemplar.Exemplar{Labels: labels.FromStrings("trace_id", "b"), Value: 1, Ts: 9, HasTs: true}, tsdb.ErrOutOfOrderExemplar, storage.ErrOutOfOrderExemplar},
		{"too long", exemplar.Exemplar{Labels: labels.FromStrings("trace_id", strings.Repeat("x", 200)), Value: 1, Ts: 11, HasTs: true}, tsdb.ErrExemplarLabelLength, storage.ErrExemplarLabelLength},
	} {
		_, err := app.AppendExemplar(ref, ls, tc.e)
		require.ErrorIs(t, err, tc.ours, tc.name)
		require.ErrorIs(t, err, tc.prom, tc.name)
	}
	_, err = app.Append(ref, ls, 20, 2)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.Equal(t, []sample{{10, 1}, {20, 2}}, querySamples(t, s, ls))

	q, err := s.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	res, err := q.Select(0, 100, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")})
	require.NoError(t, err)
	require.Equal(t, []exemplar.QueryResult{{SeriesLabels: ls, Exemplars: []exemplar.Exemplar{good}}}, res)
	// A Prometheus matcher isotsdb cannot translate fails the Select.
	_, err = q.Select(0, 100, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "__name__", "a|\x80")})
	require.Error(t, err)

	// With exemplars off, Prometheus's sentinel for that.
	off := newStorage(t)
	app = off.Appender(context.Background())
	ref, err = app.Append(0, ls, 10, 1)
	require.NoError(t, err)
	_, err = app.AppendExemplar(ref, ls, good)
	require.ErrorIs(t, err, storage.ErrExemplarsDisabled)
	require.NoError(t, app.Commit())
}

// TestExemplarsFromConfig: Storage.ApplyConfig resizes the exemplar ring
// from storage.exemplars.max_exemplars, keeping the newest, and leaves it
// alone without an exemplars section.
func TestExemplarsFromConfig(t *testing.T) {
	s := newStorage(t) // exemplars off
	ls := labels.FromStrings("__name__", "m")
	cfg := func(n int64) *config.Config {
		return &config.Config{StorageConfig: config.StorageConfig{ExemplarsConfig: &config.ExemplarsConfig{MaxExemplars: n}}}
	}
	require.NoError(t, s.ApplyConfig(cfg(2)))
	app := s.Appender(context.Background())
	ref, err := app.Append(0, ls, 10, 1)
	require.NoError(t, err)
	for ts := range int64(3) {
		_, err = app.AppendExemplar(ref, ls, exemplar.Exemplar{Labels: labels.FromStrings("trace_id", "x"), Value: float64(ts), Ts: ts, HasTs: true})
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	count := func() int {
		q, err := s.ExemplarQuerier(context.Background())
		require.NoError(t, err)
		res, err := q.Select(0, 100, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")})
		require.NoError(t, err)
		if len(res) == 0 {
			return 0
		}
		require.Equal(t, int64(2), res[0].Exemplars[len(res[0].Exemplars)-1].Ts, "the newest is kept")
		return len(res[0].Exemplars)
	}
	require.Equal(t, 2, count())
	require.NoError(t, s.ApplyConfig(&config.Config{}))
	require.Equal(t, 2, count(), "no exemplars section: unchanged")
	require.NoError(t, s.ApplyConfig(cfg(1)))
	require.Equal(t, 1, count())
	require.NoError(t, s.ApplyConfig(cfg(0)))
	require.Equal(t, 0, count())
}
