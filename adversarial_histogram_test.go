package tsdb

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestAdversarialHistogramValues appends hostile histograms and times: each
// is rejected with a typed error, or stored and read back equal from the
// head, after a WAL replay and from a block; a rejected one never takes a
// neighbour of its transaction with it.
func TestAdversarialHistogramValues(t *testing.T) {
	many := &histogram.Histogram{Schema: 0, Count: 20_000, Sum: 1, PositiveSpans: []histogram.Span{{Offset: -10_000, Length: 20_000}}}
	many.PositiveBuckets = make([]int64, 20_000)
	many.PositiveBuckets[0] = 1 // every bucket holds 1: the first delta 1, the rest 0
	farSpan := &histogram.Histogram{Count: 2, Sum: 1, PositiveSpans: []histogram.Span{{Offset: math.MaxInt32 - 2, Length: 1}, {Offset: 0, Length: 1}}, PositiveBuckets: []int64{1, 0}}
	nanZero := &histogram.Histogram{Count: 1, ZeroCount: 1, Sum: 0, ZeroThreshold: math.NaN()}
	infSum := &histogram.FloatHistogram{Count: 1, ZeroCount: 1, Sum: math.Inf(1), ZeroThreshold: 0.1}
	negCount := &histogram.FloatHistogram{Count: -1, Sum: 1}
	badSchema := &histogram.Histogram{Schema: 9, Count: 0}
	customNoBounds := &histogram.Histogram{Schema: histogram.CustomBucketsSchema, Count: 1, Sum: 1, PositiveSpans: []histogram.Span{{Length: 1}}, PositiveBuckets: []int64{1}}
	cases := []struct {
		name string
		t    int64
		h    *histogram.Histogram
		fh   *histogram.FloatHistogram
		want error // nil: stored
	}{
		{"20,000 buckets", 1000, many, nil, nil},
		{"span at the int32 limit", 1000, farSpan, nil, nil},
		{"NaN zero threshold", 1000, nanZero, nil, nil},
		{"infinite sum", 1000, nil, infSum, nil},
		{"negative count", 1000, nil, negCount, ErrInvalidSample},
		{"schema 9", 1000, badSchema, nil, ErrInvalidSample},
		{"custom buckets, only the +Inf bucket", 1000, customNoBounds, nil, nil},
		{"time MinInt64", math.MinInt64, crashHistogram(1), nil, ErrOutOfBounds},
		{"time MaxInt64", math.MaxInt64, crashHistogram(1), nil, ErrOutOfBounds},
		{"time after MaxSampleTime", MaxSampleTime + 1, crashHistogram(1), nil, ErrOutOfBounds},
	}
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	neighbour := labels.FromStrings("__name__", "neighbour")
	want := map[string][]string{}
	for i, tc := range cases {
		app := db.Appender(ctx)
		_, err := app.Append(0, neighbour, int64(i+1)*1000, float64(i))
		require.NoError(t, err)
		want["neighbour"] = append(want["neighbour"], hsample{t: int64(i+1) * 1000, f: float64(i)}.key())
		name := labels.FromStrings("__name__", "h", "case", tc.name)
		_, err = app.AppendHistogram(0, name, tc.t, tc.h, tc.fh)
		if tc.want != nil {
			require.ErrorIs(t, err, tc.want, tc.name)
			if tc.want == ErrInvalidSample {
				require.ErrorIs(t, err, histogram.ErrInvalid, tc.name)
			}
		} else if err != nil {
			// Prometheus's validation may refuse it too; then typed.
			require.ErrorIs(t, err, ErrInvalidSample, tc.name)
			require.ErrorIs(t, err, histogram.ErrInvalid, tc.name)
			t.Logf("%s: refused: %v", tc.name, err)
		} else {
			want[tc.name] = []string{hsample{t: tc.t, h: tc.h, fh: tc.fh}.key()}
		}
		require.NoError(t, app.Commit(), tc.name)
	}
	check := func(what string) {
		t.Helper()
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		defer func() { require.NoError(t, q.Close()) }()
		got := map[string][]string{}
		ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
		for ss.Next() {
			s := ss.At()
			k := s.Labels().Get("case")
			if k == "" {
				k = "neighbour"
			}
			got[k] = keys(readSamples(t, s.Iterator(nil)))
		}
		require.NoError(t, ss.Err())
		require.Equal(t, want, got, what)
	}
	check("head")
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	check("after WAL replay")
	// Force the data into a block: a far later sample makes the head due.
	app := db.Appender(ctx)
	_, err = app.Append(0, neighbour, 4*3600*1000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	want["neighbour"] = append(want["neighbour"], hsample{t: 4 * 3600 * 1000, f: 1}.key())
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())
	check("from a block")
	require.NoError(t, db.Close())
}
