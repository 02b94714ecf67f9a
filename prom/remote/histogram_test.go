package remote

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
)

// TestSendHistograms sends integer and float native histograms, mixed with
// floats, to Prometheus's receiver and compares what it stores.
func TestSendHistograms(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	s, err := New(dir, testConfig(rv.url(t)), nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())

	hl := labels.FromStrings("__name__", "h")
	fl := labels.FromStrings("__name__", "fh")
	vl := labels.FromStrings("__name__", "v")
	const n = 100
	for i := range int64(n) {
		app := db.Appender(context.Background())
		c := uint64(i + 1)
		h := &histogram.Histogram{
			Schema: 1, ZeroThreshold: 0.001, ZeroCount: 1, Count: 2*c + 1, Sum: float64(i) * 1.5,
			PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []int64{int64(c), 0},
		}
		fh := &histogram.FloatHistogram{
			Schema: 0, Count: float64(c), Sum: float64(i),
			PositiveSpans: []histogram.Span{{Offset: 1, Length: 1}}, PositiveBuckets: []float64{float64(c)},
		}
		ts := i * 15000
		_, err := app.AppendHistogram(0, hl, ts, h, nil)
		require.NoError(t, err)
		_, err = app.AppendHistogram(0, fl, ts, nil, fh)
		require.NoError(t, err)
		_, err = app.Append(0, vl, ts, float64(i))
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		s.Notify()
	}
	waitFor(t, 20*time.Second, "all samples", func() bool { _, total := rv.deliveries(); return total >= 3*n })
	require.Zero(t, testutil.ToFloat64(s.metrics.samplesFailed))

	q, err := rv.db.Querier(0, 1<<62)
	require.NoError(t, err)
	defer q.Close()
	got := map[string]int{}
	ss := q.Select(context.Background(), false, nil, promMatcher())
	for ss.Next() {
		it := ss.At().Iterator(nil)
		name := ss.At().Labels().Get("__name__")
		for vt := it.Next(); vt != 0; vt = it.Next() {
			switch name {
			case "h":
				ts, h := it.AtHistogram(nil)
				i := ts / 15000
				require.Equal(t, uint64(2*(i+1)+1), h.Count, "count at %d", ts)
				require.Equal(t, float64(i)*1.5, h.Sum)
			case "fh":
				ts, fh := it.AtFloatHistogram(nil)
				require.Equal(t, float64(ts/15000+1), fh.Count)
			case "v":
				ts, v := it.At()
				require.Equal(t, float64(ts/15000), v)
			}
			got[name]++
		}
		require.NoError(t, it.Err())
	}
	require.NoError(t, ss.Err())
	require.Equal(t, map[string]int{"h": n, "fh": n, "v": n}, got, fmt.Sprint(got))
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
}
