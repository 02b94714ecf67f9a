package tsdb

import (
	"context"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// borrowedLabels is a label set over memory the test overwrites once the
// call it was passed to returns, as an adapter aliasing another library's
// reused label string does (labels.FromEncoding).
type borrowedLabels struct {
	buf []byte
	ls  labels.Labels
}

func borrow(t *testing.T, ls labels.Labels) *borrowedLabels {
	t.Helper()
	buf := []byte(ls.Encoding())
	b, ok := labels.FromEncoding(unsafe.String(&buf[0], len(buf)))
	require.True(t, ok)
	return &borrowedLabels{buf: buf, ls: b}
}

// reuse overwrites the memory: zero bytes decode as labels with empty names
// and values, so a set kept over it reads as garbage, not as a crash.
func (b *borrowedLabels) reuse() { clear(b.buf) }

// TestAppenderKeepsNoLabels checks the Appender's "Labels" contract: no
// method keeps the series labels it is given. Every call gets a set over
// memory that is overwritten as soon as it returns, before Commit; the
// head, its postings, the WAL, exemplars and metadata must all hold the
// original labels, before and after a restart.
func TestAppenderKeepsNoLabels(t *testing.T) {
	a := labels.FromStrings("__name__", "a", "job", "x")
	b := labels.FromStrings("__name__", "b", "job", "y")
	c := labels.FromStrings("__name__", "c", "job", "z")
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	o.OutOfOrderTimeWindow = time.Hour
	o.MaxExemplars = 10
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)

	now := time.Now().UnixMilli()
	app := db.Appender(context.Background())
	call := func(ls labels.Labels, f func(labels.Labels) (SeriesRef, error)) {
		t.Helper()
		bl := borrow(t, ls)
		_, err := f(bl.ls)
		require.NoError(t, err)
		bl.reuse()
	}
	call(a, func(l labels.Labels) (SeriesRef, error) { return app.Append(0, l, now, 1) })
	call(b, func(l labels.Labels) (SeriesRef, error) {
		return app.AppendHistogram(0, l, now, &histogram.Histogram{Count: 1, ZeroCount: 1, Sum: 1}, nil)
	})
	call(c, func(l labels.Labels) (SeriesRef, error) { return app.AppendST(0, l, now-5000, now, 3, nil, nil) })
	call(a, func(l labels.Labels) (SeriesRef, error) {
		return app.AppendExemplar(0, l, Exemplar{Labels: labels.FromStrings("trace_id", "t1"), Value: 1, Ts: now, HasTs: true})
	})
	call(b, func(l labels.Labels) (SeriesRef, error) {
		return app.UpdateMetadata(0, l, Metadata{Type: MetricTypeGauge, Help: "h"})
	})
	require.NoError(t, app.Commit())

	// A late sample, in an existing series and in a new one.
	app = db.Appender(context.Background())
	d := labels.FromStrings("__name__", "d")
	call(a, func(l labels.Labels) (SeriesRef, error) { return app.Append(0, l, now-60_000, 0.5) })
	call(d, func(l labels.Labels) (SeriesRef, error) { return app.Append(0, l, now-60_000, 4) })
	require.NoError(t, app.Commit())

	check := func(db *DB, when string) {
		t.Helper()
		want := map[string][]sample{
			a.String(): {{now - 60_000, 0.5}, {now, 1}},
			c.String(): {{now, 3}},
			d.String(): {{now - 60_000, 4}},
		}
		got := allSamples(t, db)
		require.Contains(t, got, b.String(), when)
		delete(got, b.String()) // a histogram: its encoding in sample is querySamples'
		require.Equal(t, want, got, when)

		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		defer q.Close()
		jobs, err := q.LabelValues(context.Background(), "job")
		require.NoError(t, err)
		require.Equal(t, []string{"x", "y", "z"}, jobs, when)
		m, ok, err := q.SeriesMetadata(b)
		require.NoError(t, err)
		require.True(t, ok, when)
		require.Equal(t, Metadata{Type: MetricTypeGauge, Help: "h"}, m, when)

		eq, err := db.ExemplarQuerier(context.Background())
		require.NoError(t, err)
		res, err := eq.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "x")})
		require.NoError(t, err)
		require.Len(t, res, 1, when)
		require.True(t, labels.Equal(a, res[0].SeriesLabels), when)
	}
	check(db, "before the restart")
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	check(db, "after the restart")
}
