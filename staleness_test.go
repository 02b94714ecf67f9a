package tsdb

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
	"github.com/isotsdb/tsdb/vfs"
)

func TestStaleNaNValue(t *testing.T) {
	require.Equal(t, uint64(staleNaNBits), value.StaleNaN, "the root's marker is package value's")
	require.True(t, value.IsStaleNaN(value.StaleMarker()))
	require.True(t, math.IsNaN(value.StaleMarker()))
	require.False(t, value.IsStaleNaN(math.NaN()), "a NaN is not a marker")
	require.False(t, value.IsStaleNaN(math.Float64frombits(value.StaleNaN|1<<63)), "nor a marker with the sign bit")
	require.False(t, value.IsStaleNaN(0))
	require.False(t, value.IsStaleNaN(math.Inf(1)))
}

// staleKind is one kind of series a stale marker can end.
type staleKind struct {
	name string
	// add appends the k-th real sample of the kind.
	add func(app Appender, ls labels.Labels, t int64, k int) error
	// isStale reads the sample it is at and reports whether it is a
	// stale marker of the kind (a float series' marker is a float, a
	// histogram series' a histogram of the same kind, with Sum the
	// marker).
	isStale func(vt chunks.ValueType, it chunks.Iterator) bool
}

var staleKinds = []staleKind{
	{"float", func(app Appender, ls labels.Labels, t int64, k int) error {
		_, err := app.Append(0, ls, t, float64(k))
		return err
	}, func(vt chunks.ValueType, it chunks.Iterator) bool {
		_, v := it.At()
		return vt == chunks.ValFloat && value.IsStaleNaN(v)
	}},
	{"histogram", func(app Appender, ls labels.Labels, t int64, k int) error {
		_, err := app.AppendHistogram(0, ls, t, staleTestHistogram(k), nil)
		return err
	}, func(vt chunks.ValueType, it chunks.Iterator) bool {
		if vt != chunks.ValHistogram {
			return false
		}
		_, h := it.AtHistogram(nil)
		return value.IsStaleNaN(h.Sum)
	}},
	{"float histogram", func(app Appender, ls labels.Labels, t int64, k int) error {
		_, err := app.AppendHistogram(0, ls, t, nil, staleTestHistogram(k).ToFloat())
		return err
	}, func(vt chunks.ValueType, it chunks.Iterator) bool {
		if vt != chunks.ValFloatHistogram {
			return false
		}
		_, fh := it.AtFloatHistogram(nil)
		return value.IsStaleNaN(fh.Sum)
	}},
}

func staleTestHistogram(k int) *histogram.Histogram {
	return &histogram.Histogram{Count: uint64(k + 1), Sum: float64(k), PositiveSpans: []histogram.Span{{Offset: 0, Length: 1}}, PositiveBuckets: []int64{int64(k + 1)}}
}

// TestStaleMarkers appends real samples, then the float stale marker with
// Append, to a series of each kind, and checks that reads return the
// marker as the series' last sample, as the value package documents: from
// the head, after WAL replay and from a block. A NaN appended as a value
// stays a NaN, not a marker.
func TestStaleMarkers(t *testing.T) {
	for _, where := range []string{"head", "replayed", "block"} {
		t.Run(where, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			o := DefaultOptions()
			o.FS = fsys
			db, err := Open("data", nil, nil, o)
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			app := db.Appender(context.Background())
			for i, kind := range staleKinds {
				ls := labels.FromStrings("__name__", "m", "kind", kind.name)
				for k := range 3 {
					require.NoError(t, kind.add(app, ls, int64(k)*1000, k))
				}
				_, err := app.Append(0, ls, 3000, value.StaleMarker())
				require.NoError(t, err, kind.name)
				_, err = app.Append(0, ls, 3000, math.NaN())
				require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "a NaN is another value than the marker")
				if i == 0 {
					_, err = app.Append(0, labels.FromStrings("__name__", "nan"), 3000, math.NaN())
					require.NoError(t, err)
				}
			}
			require.NoError(t, app.Commit())
			switch where {
			case "replayed":
				require.NoError(t, db.Close())
				db, err = Open("data", nil, nil, o)
				require.NoError(t, err)
			case "block":
				app = db.Appender(context.Background())
				_, err = app.Append(0, labels.FromStrings("__name__", "late"), 5*hour, 1)
				require.NoError(t, err)
				require.NoError(t, app.Commit())
				require.NoError(t, db.Compact(context.Background()))
				require.Len(t, db.Blocks(), 1)
				require.EqualValues(t, 1, db.Head().NumSeries(), "the markers are in the block only")
			}
			q, err := db.Querier(0, 4000)
			require.NoError(t, err)
			defer q.Close()
			for _, kind := range staleKinds {
				ss := q.Select(context.Background(), labels.MustNewMatcher(labels.MatchEqual, "kind", kind.name))
				require.True(t, ss.Next(), kind.name)
				it := ss.At().Iterator(nil)
				n, stale := 0, false
				for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
					n++
					stale = kind.isStale(vt, it)
					require.Equal(t, n == 4, stale, "%s: only the last sample is a marker", kind.name)
				}
				require.NoError(t, it.Err())
				require.Equal(t, 4, n, kind.name)
				require.Equal(t, int64(3000), it.AtT())
				require.False(t, ss.Next())
			}
			got := querySamples(t, q, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "nan"))
			v := got[`{__name__="nan"}`]
			require.Len(t, v, 1)
			require.True(t, math.IsNaN(v[0].V))
			require.False(t, value.IsStaleNaN(v[0].V))
		})
	}
}
