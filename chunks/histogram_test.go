package chunks

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// histHead appends a sequence the way a head does: it follows the chunk
// and appender each append returns, keeps the chunks that were cut, and
// cuts a chunk itself (continuing from the previous appender) every
// cutEvery samples.
type histHead struct {
	t        testing.TB
	done     []*HistogramChunk
	cur      *HistogramChunk
	app      *HistogramAppender
	cutEvery int
	results  map[HistogramAppendResult]int
}

func newHistHead(t testing.TB, cutEvery int) *histHead {
	c := NewHistogramChunk()
	app, err := c.Appender()
	require.NoError(t, err)
	return &histHead{t: t, cur: c, app: app, cutEvery: cutEvery, results: map[HistogramAppendResult]int{}}
}

func (hh *histHead) append(ts int64, h *histogram.Histogram) {
	var prev *HistogramAppender
	if hh.cutEvery > 0 && hh.cur.NumSamples() >= hh.cutEvery {
		hh.done = append(hh.done, hh.cur)
		prev = hh.app
		hh.cur = NewHistogramChunk()
		var err error
		hh.app, err = hh.cur.Appender()
		require.NoError(hh.t, err)
	}
	res, c, app, err := hh.app.AppendHistogramAfter(prev, ts, h)
	require.NoError(hh.t, err)
	hh.results[res]++
	if res == CutNewChunk {
		hh.done = append(hh.done, hh.cur)
	}
	hh.cur, hh.app = c, app
}

func (hh *histHead) chunks() []*HistogramChunk { return append(hh.done, hh.cur) }

// bucketMap returns the non-empty buckets of an integer histogram side.
func bucketMap(spans []histogram.Span, deltas []int64) map[int64]int64 {
	m := map[int64]int64{}
	c := newBucketCursor(spans)
	var cur int64
	for _, d := range deltas {
		idx, ok := c.advance()
		if !ok {
			break
		}
		cur += d
		if cur != 0 {
			m[idx] = cur
		}
	}
	return m
}

// requireSameHistogram checks that got represents the same observations as
// want: equal fields and the same non-empty buckets, whatever the spans.
func requireSameHistogram(t testing.TB, want, got *histogram.Histogram, msg string) {
	t.Helper()
	require.Equal(t, math.Float64bits(want.Sum), math.Float64bits(got.Sum), msg)
	if isStale(want.Sum) {
		return
	}
	require.Equal(t, want.Schema, got.Schema, msg)
	require.Equal(t, want.ZeroThreshold, got.ZeroThreshold, msg)
	require.Equal(t, want.ZeroCount, got.ZeroCount, msg)
	require.Equal(t, want.Count, got.Count, msg)
	require.Equal(t, bucketMap(want.PositiveSpans, want.PositiveBuckets), bucketMap(got.PositiveSpans, got.PositiveBuckets), msg)
	require.Equal(t, bucketMap(want.NegativeSpans, want.NegativeBuckets), bucketMap(got.NegativeSpans, got.NegativeBuckets), msg)
	if histogram.IsCustomBucketsSchema(want.Schema) {
		require.Equal(t, want.CustomValues, got.CustomValues, msg)
	}
}

func TestHistogramChunkRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name          string
		custom, gauge bool
	}{{"exponential", false, false}, {"custom", true, false}, {"gauge", false, true}, {"custom gauge", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(8) {
				g := newHistGen(seed, tc.custom, tc.gauge)
				ts, hs := histSeq(g, 600)
				hh := newHistHead(t, 120)
				for i := range ts {
					hh.append(ts[i], hs[i])
				}
				i := 0
				var it Iterator
				var got histogram.Histogram
				for ci, c := range hh.chunks() {
					it = c.Iterator(it)
					for j := 0; it.Next() != ValNone; j++ {
						require.Less(t, i, len(ts))
						require.Equal(t, ts[i], it.AtT())
						it.AtHistogram(&got)
						requireSameHistogram(t, hs[i], &got, fmt.Sprintf("seed %d sample %d", seed, i))
						if !isStale(got.Sum) {
							require.Equal(t, sampleHint(c.CounterResetHeader(), j), got.CounterResetHint)
							_, fh := it.AtFloatHistogram(nil)
							require.True(t, got.ToFloat().Equals(fh))
						}
						i++
					}
					require.NoError(t, it.Err(), "chunk %d", ci)
				}
				require.Equal(t, len(ts), i)
				if seed == 0 {
					t.Logf("results: %v, %d chunks", hh.results, len(hh.chunks()))
				}
			}
		})
	}
}
