package promstorage_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// selected is one series of a Select result.
type selected struct {
	labels  string
	samples []sample
}

// drain reads a whole series set.
func drain(t *testing.T, ss storage.SeriesSet) []selected {
	t.Helper()
	var out []selected
	for ss.Next() {
		s := ss.At()
		out = append(out, selected{s.Labels().String(), iterSamples(t, s.Iterator(nil))})
	}
	require.NoError(t, ss.Err())
	require.Empty(t, ss.Warnings())
	return out
}

// seriesNames returns the label sets of a Select result.
func seriesNames(got []selected) []string {
	var out []string
	for _, g := range got {
		out = append(out, g.labels)
	}
	return out
}

func TestSelect(t *testing.T) {
	s := newStorage(t)
	// a: samples at 0..9 s; b: at 0..4 s; c: at 5..9 s; d has label x.
	app := s.Appender(context.Background())
	for i := range int64(10) {
		add := func(ls labels.Labels) {
			_, err := app.Append(0, ls, i*1000, float64(i))
			require.NoError(t, err)
		}
		add(labels.FromStrings("__name__", "a"))
		if i < 5 {
			add(labels.FromStrings("__name__", "b"))
		} else {
			add(labels.FromStrings("__name__", "c"))
		}
		add(labels.FromStrings("__name__", "d", "x", "1"))
	}
	require.NoError(t, app.Commit())

	all := func(names ...string) []string { return names }
	eq := func(n, v string) *labels.Matcher { return labels.MustNewMatcher(labels.MatchEqual, n, v) }
	cases := []struct {
		name       string
		mint, maxt int64 // of the Querier
		hints      *storage.SelectHints
		ms         []*labels.Matcher
		want       []string
		// wantA is what series a holds, if selected.
		wantA []sample
	}{
		{"all, no hints", 0, 9000, nil, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+")},
			all(`{__name__="a"}`, `{__name__="b"}`, `{__name__="c"}`, `{__name__="d", x="1"}`), samplesAt(0, 9)},
		{"querier range", 2000, 3000, nil, []*labels.Matcher{eq("__name__", "a")}, all(`{__name__="a"}`), samplesAt(2, 3)},
		{"hints clip", 0, 9000, &storage.SelectHints{Start: 2000, End: 4000}, []*labels.Matcher{eq("__name__", "a")},
			all(`{__name__="a"}`), samplesAt(2, 4)},
		{"hints wider than querier", 3000, 4000, &storage.SelectHints{Start: -5000, End: 50000}, []*labels.Matcher{eq("__name__", "a")},
			all(`{__name__="a"}`), samplesAt(3, 4)},
		{"hints drop series without samples in range", 0, 9000, &storage.SelectHints{Start: 6000, End: 9000},
			[]*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "__name__", "a|b|c")},
			all(`{__name__="a"}`, `{__name__="c"}`), samplesAt(6, 9)},
		{"empty hint range", 0, 9000, &storage.SelectHints{Start: 5000, End: 4000}, []*labels.Matcher{eq("__name__", "a")}, nil, nil},
		{"not equal", 0, 9000, nil, []*labels.Matcher{labels.MustNewMatcher(labels.MatchNotEqual, "__name__", "a")},
			all(`{__name__="b"}`, `{__name__="c"}`, `{__name__="d", x="1"}`), nil},
		{"not regexp", 0, 9000, nil, []*labels.Matcher{labels.MustNewMatcher(labels.MatchNotRegexp, "__name__", "[ab]")},
			all(`{__name__="c"}`, `{__name__="d", x="1"}`), nil},
		{"empty value matches missing label", 0, 9000, nil, []*labels.Matcher{eq("x", ""), labels.MustNewMatcher(labels.MatchRegexp, "__name__", "a|d")},
			all(`{__name__="a"}`), samplesAt(0, 9)},
		{"limit", 0, 9000, &storage.SelectHints{Start: 0, End: 9000, Limit: 2}, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+")},
			all(`{__name__="a"}`, `{__name__="b"}`), samplesAt(0, 9)},
		{"series func: labels only", 0, 9000, &storage.SelectHints{Start: 0, End: 9000, Func: "series"}, []*labels.Matcher{eq("__name__", "a")},
			all(`{__name__="a"}`), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := s.Querier(tc.mint, tc.maxt)
			require.NoError(t, err)
			defer q.Close()
			for _, sortSeries := range []bool{true, false} {
				got := drain(t, q.Select(context.Background(), sortSeries, tc.hints, tc.ms...))
				require.Equal(t, tc.want, seriesNames(got))
				if len(got) > 0 && got[0].labels == `{__name__="a"}` {
					require.Equal(t, tc.wantA, got[0].samples)
				}
			}
		})
	}
}

// samplesAt returns the samples the tests write at from..to seconds.
func samplesAt(from, to int64) []sample {
	var out []sample
	for i := from; i <= to; i++ {
		out = append(out, sample{i * 1000, float64(i)})
	}
	return out
}

func TestSelectShards(t *testing.T) {
	s := newStorage(t)
	app := s.Appender(context.Background())
	for i := range 50 {
		_, err := app.Append(0, labels.FromStrings("__name__", "m", "i", fmt.Sprint(i)), 1, 1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	q, err := s.Querier(0, 10)
	require.NoError(t, err)
	defer q.Close()
	m := labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")
	all := selectLabels(t, q.Select(context.Background(), true, nil, m))
	require.Len(t, all, 50)

	const shards = 3
	var union []labels.Labels
	for i := range uint64(shards) {
		part := selectLabels(t, q.Select(context.Background(), true, &storage.SelectHints{Start: 0, End: 10, ShardCount: shards, ShardIndex: i}, m))
		require.NotEmpty(t, part)
		require.Less(t, len(part), 50)
		for _, ls := range part {
			require.Equal(t, i, labels.StableHash(ls)%shards, "Prometheus's sharding function")
		}
		union = append(union, part...)
	}
	slices.SortFunc(union, labels.Compare)
	require.Equal(t, all, union, "the shards partition the series")
}

// selectLabels returns the label sets a Select returns.
func selectLabels(t *testing.T, ss storage.SeriesSet) []labels.Labels {
	t.Helper()
	var out []labels.Labels
	for ss.Next() {
		out = append(out, ss.At().Labels())
	}
	require.NoError(t, ss.Err())
	return out
}

func TestSelectSortedLikePrometheus(t *testing.T) {
	s := newStorage(t)
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "ab", "b_", "z"}
	values := []string{"0", "1", "10", "9", "a", "aa", "A", "é", "ü"}
	app := s.Appender(context.Background())
	for range 300 {
		b := labels.NewBuilder(labels.EmptyLabels())
		b.Set("__name__", "m")
		for _, n := range names {
			if rng.IntN(3) > 0 {
				b.Set(n, values[rng.IntN(len(values))])
			}
		}
		_, err := app.Append(0, b.Labels(), 1, 1)
		if err != nil {
			require.ErrorIs(t, err, storage.ErrDuplicateSampleForTimestamp)
		}
	}
	require.NoError(t, app.Commit())
	q, err := s.Querier(0, 10)
	require.NoError(t, err)
	defer q.Close()
	got := selectLabels(t, q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")))
	require.Greater(t, len(got), 100)
	require.True(t, slices.IsSortedFunc(got, labels.Compare), "sorted by Prometheus's labels.Compare")
	for i := 1; i < len(got); i++ {
		require.NotEqual(t, 0, labels.Compare(got[i-1], got[i]), "no duplicates")
	}
}

func TestSelectInvalidMatcher(t *testing.T) {
	s := newStorage(t)
	q, err := s.Querier(0, 10)
	require.NoError(t, err)
	defer q.Close()
	// Prometheus's matcher constructor rejects an invalid regexp, so make
	// an invalid match type instead.
	bad := &labels.Matcher{Type: labels.MatchType(42), Name: "a", Value: "b"}
	ss := q.Select(context.Background(), true, nil, bad)
	require.False(t, ss.Next())
	require.Error(t, ss.Err())
	_, _, err = q.LabelValues(context.Background(), "a", nil, bad)
	require.Error(t, err)
	_, _, err = q.LabelNames(context.Background(), nil, bad)
	require.Error(t, err)
}

func TestLabelQueries(t *testing.T) {
	s := newStorage(t)
	app := s.Appender(context.Background())
	for _, ls := range []labels.Labels{
		labels.FromStrings("__name__", "up", "job", "node", "instance", "a"),
		labels.FromStrings("__name__", "up", "job", "api", "instance", "b"),
		labels.FromStrings("__name__", "errors", "job", "api", "code", "500"),
	} {
		_, err := app.Append(0, ls, 1, 1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	q, err := s.Querier(0, 10)
	require.NoError(t, err)
	defer q.Close()
	ctx := context.Background()
	up := labels.MustNewMatcher(labels.MatchEqual, "__name__", "up")
	api := labels.MustNewMatcher(labels.MatchEqual, "job", "api")

	cases := []struct {
		name  string
		label string // "" for LabelNames
		hints *storage.LabelHints
		ms    []*labels.Matcher
		want  []string
	}{
		{"values", "job", nil, nil, []string{"api", "node"}},
		{"values matching", "instance", nil, []*labels.Matcher{api}, []string{"b"}},
		{"values limit", "__name__", &storage.LabelHints{Limit: 1}, nil, []string{"errors"}},
		{"values of missing label", "nope", nil, nil, nil},
		{"names", "", nil, nil, []string{"__name__", "code", "instance", "job"}},
		{"names matching", "", nil, []*labels.Matcher{up}, []string{"__name__", "instance", "job"}},
		{"names limit", "", &storage.LabelHints{Limit: 2}, []*labels.Matcher{api}, []string{"__name__", "code"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var err error
			if tc.label != "" {
				got, _, err = q.LabelValues(ctx, tc.label, tc.hints, tc.ms...)
			} else {
				got, _, err = q.LabelNames(ctx, tc.hints, tc.ms...)
			}
			require.NoError(t, err)
			if len(tc.want) == 0 {
				require.Empty(t, got)
			} else {
				require.Equal(t, tc.want, got)
			}
		})
	}
}

func TestQuerierIsOneSnapshot(t *testing.T) {
	s := newStorage(t)
	ls := labels.FromStrings("__name__", "m")
	commitSamples(t, s, ls, sample{1, 1})
	q, err := s.Querier(0, 100)
	require.NoError(t, err)
	cq, err := s.ChunkQuerier(0, 100)
	require.NoError(t, err)
	commitSamples(t, s, ls, sample{2, 2})
	commitSamples(t, s, labels.FromStrings("__name__", "new"), sample{2, 2})

	m := labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+")
	for range 2 { // every Select of the Querier reads the same snapshot
		require.Equal(t, []selected{{`{__name__="m"}`, []sample{{1, 1}}}}, drain(t, q.Select(context.Background(), true, nil, m)))
	}
	css := cq.Select(context.Background(), true, nil, m)
	var chunkSeries int
	for css.Next() {
		chunkSeries++
		require.Equal(t, `{__name__="m"}`, css.At().Labels().String())
		it := css.At().Iterator(nil)
		var n int
		for it.Next() {
			meta := it.At()
			require.Equal(t, chunkenc.EncXOR, meta.Chunk.Encoding())
			require.Equal(t, int64(1), meta.MinTime)
			require.Equal(t, int64(1), meta.MaxTime)
			n += meta.Chunk.NumSamples()
		}
		require.NoError(t, it.Err())
		require.Equal(t, 1, n)
	}
	require.NoError(t, css.Err())
	require.Equal(t, 1, chunkSeries)

	require.NoError(t, q.Close())
	require.NoError(t, cq.Close())
	require.Equal(t, []sample{{1, 1}, {2, 2}}, querySamples(t, s, ls), "a new Querier sees the later commit")
}

func TestSeriesUsableAfterClose(t *testing.T) {
	s := newStorage(t)
	ls := labels.FromStrings("__name__", "m")
	commitSamples(t, s, ls, sample{1, 1}, sample{2, 2})
	q, err := s.Querier(0, 100)
	require.NoError(t, err)
	ss := q.Select(context.Background(), true, nil)
	require.True(t, ss.Next())
	series := ss.At()
	require.False(t, ss.Next())
	require.NoError(t, q.Close())
	require.Equal(t, []sample{{1, 1}, {2, 2}}, iterSamples(t, series.Iterator(nil)))
}

func TestStartTime(t *testing.T) {
	s := newStorage(t)
	start, err := s.StartTime()
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), start, "no data")
	commitSamples(t, s, labels.FromStrings("__name__", "m"), sample{500, 1}, sample{900, 1})
	commitSamples(t, s, labels.FromStrings("__name__", "n"), sample{300, 1})
	start, err = s.StartTime()
	require.NoError(t, err)
	require.Equal(t, int64(300), start)
}

func TestQuerierErrors(t *testing.T) {
	s := newStorage(t)
	_, err := s.Querier(10, 5)
	require.ErrorIs(t, err, tsdb.ErrInvalidTimeRange)
	_, err = s.ChunkQuerier(10, 5)
	require.ErrorIs(t, err, tsdb.ErrInvalidTimeRange)
	require.NoError(t, s.Close())
	_, err = s.Querier(0, 5)
	require.ErrorIs(t, err, tsdb.ErrClosed)
}

func TestCancelledSelect(t *testing.T) {
	s := newStorage(t)
	app := s.Appender(context.Background())
	for i := range 500 {
		_, err := app.Append(0, labels.FromStrings("__name__", "m", "i", fmt.Sprint(i)), 1, 1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	q, err := s.Querier(0, 10)
	require.NoError(t, err)
	defer q.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ss := q.Select(ctx, true, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "m"))
	for ss.Next() {
	}
	require.ErrorIs(t, ss.Err(), context.Canceled)
}

var _ storage.Storage = (*promstorage.Storage)(nil)
