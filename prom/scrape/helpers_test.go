package scrape_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
)

// testOptions keep the WAL (restart tests reopen the directory) and room
// for exemplars.
func testOptions() *tsdb.Options {
	o := tsdb.DefaultOptions()
	o.NoLockfile = true
	o.MaxExemplars = 1000
	return o
}

// openDB opens a DB in dir, closed at the end of the test (closing twice is
// fine).
func openDB(tb testing.TB, dir string) *tsdb.DB {
	tb.Helper()
	db, err := tsdb.Open(dir, nil, nil, testOptions())
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// point is a stored sample: a float V, or a histogram H (read as a float
// histogram).
type point struct {
	T int64
	V float64
	H *histogram.FloatHistogram
}

func (p point) stale() bool {
	if p.H != nil {
		return value.IsStaleNaN(p.H.Sum)
	}
	return value.IsStaleNaN(p.V)
}

func (p point) String() string {
	switch {
	case p.stale():
		return fmt.Sprintf("%d:stale", p.T)
	case p.H != nil:
		return fmt.Sprintf("%d:h(count=%g,sum=%g)", p.T, p.H.Count, p.H.Sum)
	}
	return fmt.Sprintf("%d:%g", p.T, p.V)
}

// readAll returns every series of db with its samples, keyed by the
// series' labels (labels.Labels.String()), through one Querier.
func readAll(tb testing.TB, db *tsdb.DB) map[string][]point {
	tb.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(tb, err)
	defer q.Close()
	out := map[string][]point{}
	ss := q.Select(context.Background(), labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	var it chunks.Iterator
	for ss.Next() {
		s := ss.At()
		it = s.Iterator(it)
		var pts []point
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			switch vt {
			case chunks.ValFloat:
				t, v := it.At()
				pts = append(pts, point{T: t, V: v})
			default:
				t, fh := it.AtFloatHistogram(nil)
				pts = append(pts, point{T: t, H: fh})
			}
		}
		require.NoError(tb, it.Err())
		out[s.Labels().String()] = pts
	}
	require.NoError(tb, ss.Err())
	return out
}

// at returns the samples of all, by series, at time t (a series without
// one there is left out), as strings.
func at(all map[string][]point, t int64) map[string]string {
	out := map[string]string{}
	for k, pts := range all {
		for _, p := range pts {
			if p.T == t {
				out[k] = p.String()
			}
		}
	}
	return out
}

// ms is t in milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// seriesMetadata returns the metadata of the series ls.
func seriesMetadata(tb testing.TB, db *tsdb.DB, ls labels.Labels) (tsdb.Metadata, bool) {
	tb.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(tb, err)
	defer q.Close()
	m, ok, err := q.SeriesMetadata(ls)
	require.NoError(tb, err)
	return m, ok
}
