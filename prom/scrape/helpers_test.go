package scrape_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
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

// forEachSeries calls fn for every series of db with its samples, through
// one Querier.
func forEachSeries(tb testing.TB, db *tsdb.DB, fn func(labels.Labels, []point)) {
	tb.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(tb, err)
	defer q.Close()
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
		fn(s.Labels(), pts)
	}
	require.NoError(tb, ss.Err())
}

// readAll returns every series of db with its samples, keyed by the
// series' labels (labels.Labels.String()).
func readAll(tb testing.TB, db *tsdb.DB) map[string][]point {
	tb.Helper()
	out := map[string][]point{}
	forEachSeries(tb, db, func(ls labels.Labels, pts []point) { out[ls.String()] = pts })
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

// short writes ls as name{labels} without the target labels job and
// instance: the tests' shorthand.
func short(ls labels.Labels) string {
	var b strings.Builder
	b.WriteString(ls.Get("__name__"))
	var rest []string
	ls.Range(func(l labels.Label) {
		switch l.Name {
		case "__name__", "job", "instance":
		default:
			rest = append(rest, fmt.Sprintf("%s=%q", l.Name, l.Value))
		}
	})
	if len(rest) > 0 {
		b.WriteString("{" + strings.Join(rest, ",") + "}")
	}
	return b.String()
}

// atShort returns the samples of db at time t by short series name, as
// "value" strings without the time; series of other targets than
// job/instance (the ones given) are left out.
func atShort(tb testing.TB, db *tsdb.DB, t int64, job, instance string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	forEachSeries(tb, db, func(ls labels.Labels, pts []point) {
		if ls.Get("job") != job || ls.Get("instance") != instance {
			return
		}
		for _, p := range pts {
			if p.T == t {
				s := p.String()
				out[short(ls)] = s[strings.IndexByte(s, ':')+1:]
			}
		}
	})
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
