package tsdb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// exemplarOpts returns test options with room for n exemplars.
func exemplarOpts(fsys vfs.FS, n int64) *Options {
	o := DefaultOptions()
	o.FS, o.MaxExemplars = fsys, n
	return o
}

// ex is an exemplar with a trace_id label and a time of its own.
func ex(trace string, v float64, ts int64) Exemplar {
	return Exemplar{Labels: labels.FromStrings("trace_id", trace), Value: v, Ts: ts, HasTs: true}
}

// allExemplars selects every exemplar of every series through a new
// querier of db.
func allExemplars(t testing.TB, db *DB) []ExemplarQueryResult {
	t.Helper()
	q, err := db.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	return selectAll(t, q)
}

func selectAll(t testing.TB, q ExemplarQuerier) []ExemplarQueryResult {
	t.Helper()
	res, err := q.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")})
	require.NoError(t, err)
	return res
}

// exemplarTraces renders results as "series: trace@ts ..." lines, one per
// series, for comparisons that show what differs.
func exemplarTraces(res []ExemplarQueryResult) []string {
	var out []string
	for _, r := range res {
		var b strings.Builder
		b.WriteString(r.SeriesLabels.String() + ":")
		for _, e := range r.Exemplars {
			fmt.Fprintf(&b, " %s@%d=%g", e.Labels.Get("trace_id"), e.Ts, e.Value)
		}
		out = append(out, b.String())
	}
	return out
}

func TestExemplarAppendCommitSelect(t *testing.T) {
	db, reg := openTestDB(t, exemplarOpts(nil, 10))
	a := db.Appender(context.Background())
	ls := labels.FromStrings("__name__", "req_total", "job", "a")
	ref, err := a.Append(0, ls, 1000, 1)
	require.NoError(t, err)
	got, err := a.AppendExemplar(ref, ls, ex("t1", 1, 1000))
	require.NoError(t, err)
	require.Equal(t, ref, got)
	// By labels alone, with an empty label dropped from the exemplar.
	e := ex("t2", 2, 1001)
	e.Labels = labels.FromStrings("trace_id", "t2", "span_id", "")
	got, err = a.AppendExemplar(0, ls, e)
	require.NoError(t, err)
	require.Equal(t, ref, got)
	require.Empty(t, allExemplars(t, db), "nothing visible before Commit")
	require.NoError(t, a.Commit())

	res := allExemplars(t, db)
	require.Equal(t, []string{`{__name__="req_total", job="a"}: t1@1000=1 t2@1001=2`}, exemplarTraces(res))
	require.Equal(t, 1, res[0].Exemplars[1].Labels.Len(), "empty label dropped")
	require.True(t, res[0].Exemplars[0].HasTs)
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_exemplar_exemplars_appended_total"))
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_exemplar_exemplars_in_storage"))
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_exemplar_series_with_exemplars_in_storage"))
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_exemplar_last_exemplars_timestamp_seconds"))
	require.Equal(t, 10.0, gauge(t, reg, "tsdb_exemplar_max_exemplars"))

	// Time range and matchers.
	q, err := db.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	res, err = q.Select(1001, 5000, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "a")})
	require.NoError(t, err)
	require.Equal(t, []string{`{__name__="req_total", job="a"}: t2@1001=2`}, exemplarTraces(res))
	res, err = q.Select(0, 5000, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "b")})
	require.NoError(t, err)
	require.Empty(t, res)
	res, err = q.Select(0, 5000)
	require.NoError(t, err)
	require.Empty(t, res, "no matcher set selects nothing")
	res, err = q.Select(5000, 0, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "a")})
	require.NoError(t, err)
	require.Empty(t, res, "start after end")
}

// TestExemplarSelectMatcherSets: Select ORs its matcher sets and sorts the
// series by labels.
func TestExemplarSelectMatcherSets(t *testing.T) {
	db, _ := openTestDB(t, exemplarOpts(nil, 100))
	a := db.Appender(context.Background())
	for _, job := range []string{"c", "a", "b"} {
		ls := labels.FromStrings("__name__", "m", "job", job)
		ref, err := a.Append(0, ls, 10, 1)
		require.NoError(t, err)
		_, err = a.AppendExemplar(ref, ls, ex("trace-"+job, 1, 10))
		require.NoError(t, err)
	}
	require.NoError(t, a.Commit())
	q, err := db.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	res, err := q.Select(0, 100,
		[]*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "c")},
		[]*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "a"), labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")},
		[]*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "b"), labels.MustNewMatcher(labels.MatchEqual, "__name__", "x")},
	)
	require.NoError(t, err)
	require.Equal(t, []string{`{__name__="m", job="a"}: trace-a@10=1`, `{__name__="m", job="c"}: trace-c@10=1`}, exemplarTraces(res))
}

// TestExemplarValidation: each way an exemplar is rejected, with its typed
// error; a rejected exemplar leaves the transaction's samples and other
// exemplars alone.
func TestExemplarValidation(t *testing.T) {
	ls := labels.FromStrings("__name__", "m")
	long := strings.Repeat("ü", ExemplarMaxLabelSetLength-len("trace_id")) // runes, not bytes
	for _, tc := range []struct {
		name    string
		stored  []Exemplar // committed before, in order
		pending []Exemplar // appended before in the same transaction
		e       Exemplar
		want    error
		also    error // a second sentinel the error must match, if any
	}{
		{name: "first", e: ex("a", 1, 10)},
		{name: "later", stored: []Exemplar{ex("a", 1, 10)}, e: ex("b", 1, 11)},
		{name: "older", stored: []Exemplar{ex("a", 1, 10)}, e: ex("b", 1, 9), want: ErrOutOfOrderExemplar},
		{name: "older than pending", pending: []Exemplar{ex("a", 1, 10)}, e: ex("b", 1, 9), want: ErrOutOfOrderExemplar},
		{name: "duplicate", stored: []Exemplar{ex("a", 1, 10)}, e: ex("a", 1, 10), want: ErrDuplicateExemplar},
		{name: "duplicate of pending", pending: []Exemplar{ex("a", 1, 10)}, e: ex("a", 1, 10), want: ErrDuplicateExemplar},
		{name: "no timestamps: duplicate whatever the time", stored: []Exemplar{{Labels: labels.FromStrings("trace_id", "a"), Value: 1, Ts: 10}},
			e: Exemplar{Labels: labels.FromStrings("trace_id", "a"), Value: 1, Ts: 20}, want: ErrDuplicateExemplar},
		{name: "one timestamp: not a duplicate", stored: []Exemplar{{Labels: labels.FromStrings("trace_id", "a"), Value: 1, Ts: 10}},
			e: ex("a", 1, 20)},
		{name: "same time, higher value", stored: []Exemplar{ex("a", 1, 10)}, e: ex("a", 2, 10)},
		{name: "same time, lower value", stored: []Exemplar{ex("a", 2, 10)}, e: ex("a", 1, 10), want: ErrOutOfOrderExemplar},
		{name: "NaN never equals", stored: []Exemplar{ex("a", math.NaN(), 10)}, e: ex("a", math.NaN(), 11)},
		{name: "labels at the limit", e: ex(long, 1, 10)},
		{name: "labels too long", e: ex(long+"x", 1, 10), want: ErrExemplarLabelLength},
		{name: "no labels", e: Exemplar{Value: 1, Ts: 10}},
		{name: "empty name", e: Exemplar{Labels: labels.FromStrings("", "x"), Ts: 10}, want: ErrInvalidExemplar},
		{name: "invalid UTF-8", e: Exemplar{Labels: labels.FromStrings("trace_id", "\xff"), Ts: 10}, want: ErrInvalidExemplar},
		{name: "time too late", e: ex("a", 1, MaxSampleTime+1), want: ErrInvalidExemplar, also: ErrOutOfBounds},
		{name: "time too early", e: ex("a", 1, math.MinInt64), want: ErrInvalidExemplar, also: ErrOutOfBounds},
		{name: "extreme but valid time", e: ex("a", 1, MinSampleTime)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, _ := openTestDB(t, exemplarOpts(nil, 8))
			if len(tc.stored) > 0 {
				a := db.Appender(context.Background())
				ref, err := a.Append(0, ls, 1, 1)
				require.NoError(t, err)
				for _, e := range tc.stored {
					_, err := a.AppendExemplar(ref, ls, e)
					require.NoError(t, err)
				}
				require.NoError(t, a.Commit())
			}
			a := db.Appender(context.Background())
			ref, err := a.Append(0, ls, 2, 2)
			require.NoError(t, err)
			for _, e := range tc.pending {
				_, err := a.AppendExemplar(ref, ls, e)
				require.NoError(t, err)
			}
			_, err = a.AppendExemplar(ref, ls, tc.e)
			if tc.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.want)
				if tc.also != nil {
					require.ErrorIs(t, err, tc.also)
				}
				require.Contains(t, err.Error(), `{__name__="m"}`, "the error names the series")
			}
			require.NoError(t, a.Commit())
			want := len(tc.stored) + len(tc.pending)
			if tc.want == nil {
				want++
			}
			n := 0
			for _, r := range allExemplars(t, db) {
				n += len(r.Exemplars)
			}
			require.Equal(t, want, n, "exemplars stored")
			q, err := db.Querier(0, 10)
			require.NoError(t, err)
			defer q.Close()
			require.Len(t, querySamples(t, q)[`{__name__="m"}`], 1+min(len(tc.stored), 1), "the samples are committed")
		})
	}
}

func TestExemplarErrors(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		db, _ := openTestDB(t, nil)
		a := db.Appender(context.Background())
		ls := labels.FromStrings("__name__", "m")
		ref, err := a.Append(0, ls, 1, 1)
		require.NoError(t, err)
		_, err = a.AppendExemplar(ref, ls, ex("a", 1, 1))
		require.ErrorIs(t, err, ErrExemplarsDisabled)
		require.NoError(t, a.Commit())
		require.Empty(t, allExemplars(t, db))
	})
	t.Run("unknown series", func(t *testing.T) {
		db, _ := openTestDB(t, exemplarOpts(nil, 4))
		a := db.Appender(context.Background())
		_, err := a.AppendExemplar(0, labels.FromStrings("__name__", "nope"), ex("a", 1, 1))
		require.ErrorIs(t, err, ErrExemplarSeriesNotFound)
		_, err = a.AppendExemplar(12345, labels.FromStrings("__name__", "nope"), ex("a", 1, 1))
		require.ErrorIs(t, err, ErrExemplarSeriesNotFound)
		require.NoError(t, a.Commit())
	})
	t.Run("after commit", func(t *testing.T) {
		db, _ := openTestDB(t, exemplarOpts(nil, 4))
		a := db.Appender(context.Background())
		require.NoError(t, a.Commit())
		_, err := a.AppendExemplar(0, labels.FromStrings("__name__", "m"), ex("a", 1, 1))
		require.ErrorIs(t, err, ErrAppenderClosed)
	})
	t.Run("after close", func(t *testing.T) {
		db, err := Open("data", nil, nil, exemplarOpts(vfs.NewMemFS(), 4))
		require.NoError(t, err)
		ls := labels.FromStrings("__name__", "m")
		a := db.Appender(context.Background())
		ref, err := a.Append(0, ls, 1, 1)
		require.NoError(t, err)
		_, err = a.AppendExemplar(ref, ls, ex("a", 1, 1))
		require.NoError(t, err)
		q, err := db.ExemplarQuerier(context.Background())
		require.NoError(t, err)
		require.NoError(t, db.Close())
		_, err = a.AppendExemplar(ref, ls, ex("b", 1, 2))
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, a.Commit(), ErrClosed)
		_, err = q.Select(0, 10, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")})
		require.ErrorIs(t, err, ErrClosed)
		_, err = db.ExemplarQuerier(context.Background())
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, db.SetMaxExemplars(10), ErrClosed)
		_, err = db.Appender(context.Background()).AppendExemplar(ref, ls, ex("c", 1, 3))
		require.ErrorIs(t, err, ErrClosed)
		require.NoError(t, db.head.checkInvariants(true))
	})
	t.Run("read-only", func(t *testing.T) {
		_, err := (closedAppender{ErrReadOnly}).AppendExemplar(1, labels.FromStrings("a", "b"), ex("a", 1, 1))
		require.True(t, errors.Is(err, ErrReadOnly))
	})
}
