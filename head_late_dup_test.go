package tsdb

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
)

// layoutHist returns an integer histogram with n positive buckets holding
// counts (deltas from them), the rest of its n buckets empty.
func layoutHist(n int, counts ...int64) *histogram.Histogram {
	h := &histogram.Histogram{Schema: 1, ZeroThreshold: 0.001, ZeroCount: 2, Sum: 10,
		PositiveSpans: []histogram.Span{{Offset: -1, Length: uint32(n)}}}
	h.Count = h.ZeroCount
	prev := int64(0)
	for i := range n {
		c := int64(0)
		if i < len(counts) {
			c = counts[i]
		}
		h.PositiveBuckets = append(h.PositiveBuckets, c-prev)
		prev = c
		h.Count += uint64(c)
	}
	return h
}

// TestLateDuplicateHistogramLayout: a histogram appended again as a late
// sample, exactly as it was appended before, is a no-op also when its
// chunk has since grown its bucket layout, so that the stored sample reads
// back with empty buckets it was not appended with. (It was
// ErrDuplicateSampleForTimestamp; Prometheus accepts such a re-append.) A
// histogram that differs in a non-empty bucket is still a duplicate.
func TestLateDuplicateHistogramLayout(t *testing.T) {
	db, reg := openTestDB(t, lateOpts(nil, 30*time.Minute))
	ls := labels.FromStrings("__name__", "h")
	fls := labels.FromStrings("__name__", "fh")
	app := db.Appender(context.Background())
	for i := range int64(10) {
		n := 4
		if i >= 5 {
			n = 6 // the layout grows: the chunk's earlier samples get 2 empty buckets
		}
		h := layoutHist(n, 1+i, 2+i, 3+i, 4+i)
		_, err := app.AppendHistogram(0, ls, i*15_000, h, nil)
		require.NoError(t, err)
		_, err = app.AppendHistogram(0, fls, i*15_000, nil, h.ToFloat())
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())

	app = db.Appender(context.Background())
	_, err := app.AppendHistogram(0, ls, 30_000, layoutHist(4, 3, 4, 5, 6), nil)
	require.NoError(t, err, "the same histogram again")
	_, err = app.AppendHistogram(0, fls, 30_000, nil, layoutHist(4, 3, 4, 5, 6).ToFloat())
	require.NoError(t, err, "the same float histogram again")
	_, err = app.AppendHistogram(0, ls, 45_000, layoutHist(6, 4, 5, 6, 7), nil)
	require.NoError(t, err, "the same counts in the grown layout")
	_, err = app.AppendHistogram(0, ls, 15_000, layoutHist(4, 2, 3, 4, 6), nil)
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "another count in a bucket")
	_, err = app.AppendHistogram(0, fls, 15_000, nil, layoutHist(5, 2, 3, 4, 5, 1).ToFloat())
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "one more non-empty bucket")
	require.NoError(t, app.Commit())
	require.Equal(t, 0.0, gauge(t, reg, "tsdb_head_late_samples_appended_total"), "re-appends are no-ops")

	// A late chunk: late samples encoded together (the open buffer is cut
	// into a chunk when it is full), the first with 4 buckets, the rest
	// with 6; the first reads back with 6.
	late := labels.FromStrings("__name__", "late")
	app = db.Appender(context.Background())
	for i := range int64(lateOpenMax + 2) {
		_, err = app.AppendHistogram(0, late, i*15_000, layoutHist(6, 10+i, 10+i, 10+i, 10+i), nil)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	app = db.Appender(context.Background())
	for i := range int64(lateOpenMax + 1) {
		n := 6
		if i == 0 {
			n = 4
		}
		_, err = app.AppendHistogram(0, late, i*15_000+7_000, layoutHist(n, 1+i, 1+i, 1+i, 1+i), nil)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	require.Equal(t, float64(lateOpenMax+1), gauge(t, reg, "tsdb_head_late_samples_appended_total"))
	app = db.Appender(context.Background())
	_, err = app.AppendHistogram(0, late, 7_000, layoutHist(4, 1, 1, 1, 1), nil)
	require.NoError(t, err, "the same late histogram again, from a late chunk")
	require.NoError(t, app.Commit())
	require.Equal(t, float64(lateOpenMax+1), gauge(t, reg, "tsdb_head_late_samples_appended_total"))
}
