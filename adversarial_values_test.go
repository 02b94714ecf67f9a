package tsdb

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// staleNaN is Prometheus's staleness marker.
var staleNaN = math.Float64frombits(0x7ff0000000000002)

// TestAdversarialValues writes absurd values and label sets and reads
// them back bit for bit from the head, from blocks after compaction and
// after a WAL replay.
func TestAdversarialValues(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, err := openAdv(fsys, nil)
	require.NoError(t, err)
	values := []float64{math.NaN(), staleNaN, math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, math.Float64frombits(0x7ff8dead00000001)}
	bigValue := strings.Repeat("v", 1<<20)
	many := make([]string, 0, 2*1000)
	for i := 0; i < 1000; i++ {
		many = append(many, "l"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strings.Repeat("0", i/26), "v")
	}
	many = append(many, labels.MetricName, "many")
	lsets := []labels.Labels{
		labels.FromStrings(labels.MetricName, "vals"),
		labels.FromStrings(labels.MetricName, "big", "v", bigValue),
		labels.FromStrings(many...),
		labels.FromStrings(labels.MetricName, "utf8", "ключ", "値 ✓"),
	}
	want := map[string][]sample{}
	// Timestamps from far in the past to the present, negative ones
	// included; one commit.
	tss := []int64{-5 * 3600_000, -3600_000 - 1, -1, 0, 1, 3600_000}
	keys := make([]string, len(lsets))
	for si, l := range lsets {
		keys[si] = l.String()
	}
	app := db.Appender(ctx)
	for i, ts := range tss {
		for si, l := range lsets {
			v := values[(i+si)%len(values)]
			_, err := app.Append(0, l, ts, v)
			require.NoError(t, err, "%d %v", ts, v)
			want[keys[si]] = append(want[keys[si]], sample{ts, v})
		}
	}
	require.NoError(t, app.Commit())
	// Rejected: invalid UTF-8, empty names, duplicate names, no labels.
	for _, l := range []labels.Labels{
		labels.FromStrings(labels.MetricName, "bad\xff"),
		labels.FromStrings("a\xc0", "b"),
		labels.FromStrings("", "v"),
		labels.New(labels.Label{Name: "a", Value: "1"}, labels.Label{Name: "a", Value: "2"}),
		labels.EmptyLabels(),
		labels.FromStrings("a", ""),
	} {
		app := db.Appender(ctx)
		_, err := app.Append(0, l, 10, 1)
		require.ErrorIs(t, err, ErrInvalidSample, "%q", l.String())
		require.NoError(t, app.Rollback())
	}
	check := func(what string, db *DB) {
		t.Helper()
		got, err := fullQuery(db)
		require.NoError(t, err)
		requireSameSamples(t, want, got)
		// Inverted, empty and extreme ranges.
		_, err = db.Querier(1, 0)
		require.ErrorIs(t, err, ErrInvalidTimeRange, what)
		q, err := db.Querier(math.MaxInt64, math.MaxInt64)
		require.NoError(t, err)
		require.Empty(t, querySamples(t, q), what)
		require.NoError(t, q.Close())
		q, err = db.Querier(math.MinInt64, math.MinInt64)
		require.NoError(t, err)
		require.Empty(t, querySamples(t, q), what)
		require.NoError(t, q.Close())
		q, err = db.Querier(-1, -1)
		require.NoError(t, err)
		got = querySamples(t, q)
		require.NoError(t, q.Close())
		n := 0
		for _, ss := range got {
			require.Len(t, ss, 1)
			require.Equal(t, int64(-1), ss[0].T)
			n++
		}
		require.Equal(t, len(lsets), n, what)
	}
	check("head", db)
	require.NoError(t, db.Close())
	db, err = openAdv(fsys, nil)
	require.NoError(t, err)
	check("replayed", db)
	// Push the head on so every sample above is compacted into blocks.
	app = db.Appender(ctx)
	_, err = app.Append(0, labels.FromStrings(labels.MetricName, "later"), 10*3600_000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	want[labels.FromStrings(labels.MetricName, "later").String()] = []sample{{10 * 3600_000, 1}}
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())
	check("blocks", db)
	require.NoError(t, db.Close())
	db, err = openAdv(fsys, nil)
	require.NoError(t, err)
	check("blocks reopened", db)
	require.NoError(t, db.Close())
}

// TestAdversarialExtremeTimestamps appends at the ends of the int64 range
// (MaxInt64, MinInt64+1): each sample is stored and read back, or
// rejected with a typed error; the DB keeps working.
func TestAdversarialExtremeTimestamps(t *testing.T) {
	for _, ts := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MinInt64 + 1} {
		fsys := vfs.NewMemFS()
		db, err := openAdv(fsys, nil)
		require.NoError(t, err)
		l := labels.FromStrings(labels.MetricName, "x")
		app := db.Appender(ctx)
		_, err = app.Append(0, l, ts, 1)
		if err != nil {
			require.True(t, errors.Is(err, ErrOutOfBounds) || errors.Is(err, ErrInvalidSample), "ts %d: untyped %v", ts, err)
		}
		require.NoError(t, app.Commit())
		stored := err == nil
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		got := querySamples(t, q)
		require.NoError(t, q.Close())
		if stored {
			requireSameSamples(t, map[string][]sample{l.String(): {{ts, 1}}}, got)
		}
		require.NoError(t, db.Close())
		db, err = openAdv(fsys, nil)
		require.NoError(t, err)
		q, err = db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		got2 := querySamples(t, q)
		require.NoError(t, q.Close())
		requireSameSamples(t, got, got2)
		require.NoError(t, db.Close())
	}
}

// TestAdversarialMatchers checks Select and the label queries against a
// model of Prometheus's matcher semantics (a missing label matches as the
// empty value) on a DB with blocks and a head.
func TestAdversarialMatchers(t *testing.T) {
	base := advBaseDB(t)
	db, err := openAdv(base.fs.Crash(), nil)
	require.NoError(t, err)
	defer db.Close()
	some := base.lsets[2]
	name := some.Get(labels.MetricName)
	mm := labels.MustNewMatcher
	cases := [][]*labels.Matcher{
		{mm(labels.MatchEqual, labels.MetricName, "nothing")},
		{mm(labels.MatchEqual, "nolabel", "")},
		{mm(labels.MatchRegexp, "nolabel", "")},
		{mm(labels.MatchRegexp, "nolabel", ".*")},
		{mm(labels.MatchNotEqual, "nolabel", "")},
		{mm(labels.MatchNotRegexp, "nolabel", "")},
		{mm(labels.MatchNotRegexp, "nolabel", ".*")},
		{mm(labels.MatchRegexp, labels.MetricName, ".*")},
		{mm(labels.MatchRegexp, labels.MetricName, "")},
		{mm(labels.MatchNotEqual, labels.MetricName, name)},
		{mm(labels.MatchEqual, labels.MetricName, name), mm(labels.MatchNotEqual, labels.MetricName, name)},
		{mm(labels.MatchEqual, "job", "bench"), mm(labels.MatchEqual, "etunlkkq", "")},
		{mm(labels.MatchEqual, "job", "bench"), mm(labels.MatchNotEqual, "etunlkkq", "")},
		{mm(labels.MatchEqual, "job", "bench"), mm(labels.MatchRegexp, "etunlkkq", "|p.*")},
		{mm(labels.MatchEqual, "job", "bench"), mm(labels.MatchNotRegexp, "etunlkkq", "p.*")},
		{mm(labels.MatchRegexp, "job", "ben.*|"), mm(labels.MatchNotRegexp, labels.MetricName, "(?i)A.*")},
		{mm(labels.MatchRegexp, "job", "\\Qbench\\E")},
	}
	matches := func(l labels.Labels, ms []*labels.Matcher) bool {
		for _, m := range ms {
			if !m.Matches(l.Get(m.Name)) {
				return false
			}
		}
		return true
	}
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	for _, ms := range cases {
		want := map[string]bool{}
		wantNames := map[string]bool{}
		for _, l := range base.lsets {
			if matches(l, ms) {
				want[l.String()] = true
				l.Range(func(lb labels.Label) { wantNames[lb.Name] = true })
			}
		}
		got := map[string]bool{}
		ss := q.Select(ctx, ms...)
		for ss.Next() {
			got[ss.At().Labels().String()] = true
		}
		require.NoError(t, ss.Err(), "%v", ms)
		require.Equal(t, want, got, "Select%v", ms)
		names, err := q.LabelNames(ctx, ms...)
		require.NoError(t, err)
		require.Len(t, names, len(wantNames), "LabelNames%v", ms)
		vals, err := q.LabelValues(ctx, "job", ms...)
		require.NoError(t, err)
		if len(want) > 0 {
			require.Equal(t, []string{"bench"}, vals, "LabelValues%v", ms)
		} else {
			require.Empty(t, vals, "LabelValues%v", ms)
		}
	}
}

// TestAdversarialEmptyLabelValue: Prometheus treats a label with an empty
// value as absent, so {__name__="x", a=""} and {__name__="x"} are one
// series.
func TestAdversarialEmptyLabelValue(t *testing.T) {
	db, _ := openTestDB(t, nil)
	app := db.Appender(ctx)
	_, err := app.Append(0, labels.FromStrings(labels.MetricName, "x", "a", ""), 1, 1)
	require.NoError(t, err)
	_, err = app.Append(0, labels.FromStrings(labels.MetricName, "x"), 2, 2)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	got := querySamples(t, q)
	requireSameSamples(t, map[string][]sample{`{__name__="x"}`: {{1, 1}, {2, 2}}}, got)
	names, err := q.LabelNames(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{labels.MetricName}, names)
}

// TestAdversarialDeleteRanges deletes with absurd ranges.
func TestAdversarialDeleteRanges(t *testing.T) {
	base := advBaseDB(t)
	fsys := base.fs.Crash()
	db, err := openAdv(fsys, nil)
	require.NoError(t, err)
	all := labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")
	require.ErrorIs(t, db.Delete(ctx, 1, 0, all), ErrInvalidTimeRange)
	require.ErrorIs(t, db.Delete(ctx, 0, 1), ErrInvalidDelete)
	require.NoError(t, db.Delete(ctx, math.MaxInt64, math.MaxInt64, all))
	require.NoError(t, db.Delete(ctx, math.MinInt64, math.MinInt64, all))
	require.NoError(t, db.Delete(ctx, math.MinInt64, -1, all))
	require.NoError(t, db.Delete(ctx, 0, 0, labels.MustNewMatcher(labels.MatchEqual, "nolabel", "x")))
	got, err := fullQuery(db)
	require.NoError(t, err)
	requireSameSamples(t, base.want, got)
	// Everything, matched by an empty-value matcher.
	require.NoError(t, db.Delete(ctx, math.MinInt64, math.MaxInt64, labels.MustNewMatcher(labels.MatchEqual, "nolabel", "")))
	got, err = fullQuery(db)
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, db.CleanTombstones(ctx))
	require.NoError(t, db.Compact(ctx))
	got, err = fullQuery(db)
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, db.Close())
	db, err = openAdv(fsys, nil)
	require.NoError(t, err)
	got, err = fullQuery(db)
	require.NoError(t, err)
	require.Empty(t, got, "deleted data resurrected by a reopen")
	// The DB takes new data for the deleted series.
	app := db.Appender(ctx)
	_, err = app.Append(0, base.lsets[0], int64(advRounds+100)*15000, 5)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	got, err = fullQuery(db)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.NoError(t, db.Close())
}

// TestAdversarialDeleteUpToMaxInt64 deletes a series up to MaxInt64 (the
// end Prometheus's admin API uses by default): samples appended later are
// new data and must be seen, in the head, after a reopen and in blocks.
func TestAdversarialDeleteUpToMaxInt64(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, err := openAdv(fsys, nil)
	require.NoError(t, err)
	l := labels.FromStrings(labels.MetricName, "x")
	appendAt := func(db *DB, ts int64) {
		app := db.Appender(ctx)
		_, err := app.Append(0, l, ts, float64(ts))
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	appendAt(db, 1000)
	require.NoError(t, db.Delete(ctx, 0, math.MaxInt64, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "x")))
	got, err := fullQuery(db)
	require.NoError(t, err)
	require.Empty(t, got)
	appendAt(db, 2000)
	want := map[string][]sample{l.String(): {{2000, 2000}}}
	got, err = fullQuery(db)
	require.NoError(t, err)
	requireSameSamples(t, want, got)
	require.NoError(t, db.Close())
	db, err = openAdv(fsys, nil)
	require.NoError(t, err)
	got, err = fullQuery(db)
	require.NoError(t, err)
	requireSameSamples(t, want, got)
	appendAt(db, 5*3600_000) // the first range is due
	want[l.String()] = append(want[l.String()], sample{5 * 3600_000, 5 * 3600_000})
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())
	got, err = fullQuery(db)
	require.NoError(t, err)
	requireSameSamples(t, want, got)
	require.NoError(t, db.Close())
}
