package promstorage_test

import (
	"context"
	"strings"
	"testing"

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
