package promstorage_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/tsdbutil"
	"github.com/stretchr/testify/require"
)

// tsample is a sample of any type as the histogram tests write and read
// them: a float f unless h or fh is set.
type tsample struct {
	t  int64
	f  float64
	h  *histogram.Histogram
	fh *histogram.FloatHistogram
}

// String describes every field of the sample, floats by their bits too, so
// that two samples describe the same iff they are identical (a NaN sum or a
// stale marker included).
func (s tsample) String() string {
	switch {
	case s.h != nil:
		return fmt.Sprintf("%d H %+v sum=%x", s.t, *s.h, math.Float64bits(s.h.Sum))
	case s.fh != nil:
		fh := s.fh
		return fmt.Sprintf("%d FH %+v sum=%x count=%x zero=%x", s.t, *fh,
			math.Float64bits(fh.Sum), math.Float64bits(fh.Count), math.Float64bits(fh.ZeroCount))
	default:
		return fmt.Sprintf("%d F %x", s.t, math.Float64bits(s.f))
	}
}

// seriesSamples maps a series' labels (String) to the descriptions of its
// samples.
type seriesSamples map[string][]string

// readAll returns every series q selects with ms, read through Prometheus's
// storage.Querier interface.
func readAll(t *testing.T, q storage.Querier, hints *storage.SelectHints, ms ...*labels.Matcher) seriesSamples {
	t.Helper()
	if len(ms) == 0 {
		ms = []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+")}
	}
	out := seriesSamples{}
	ss := q.Select(context.Background(), true, hints, ms...)
	var it chunkenc.Iterator
	for ss.Next() {
		it = ss.At().Iterator(it)
		var got []string
		for _, s := range drainTyped(t, it) {
			got = append(got, s.String())
		}
		out[ss.At().Labels().String()] = got
	}
	require.NoError(t, ss.Err())
	return out
}

// drainTyped reads every sample of it, whatever its type.
func drainTyped(t *testing.T, it chunkenc.Iterator) []tsample {
	t.Helper()
	var out []tsample
	for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
		var s tsample
		switch vt {
		case chunkenc.ValFloat:
			s.t, s.f = it.At()
		case chunkenc.ValHistogram:
			s.t, s.h = it.AtHistogram(nil)
		case chunkenc.ValFloatHistogram:
			s.t, s.fh = it.AtFloatHistogram(nil)
		default:
			require.Failf(t, "unexpected value type", "%v", vt)
		}
		require.Equal(t, s.t, it.AtT())
		out = append(out, s)
	}
	require.NoError(t, it.Err())
	return out
}

// newPrometheus opens Prometheus's own TSDB in a temporary directory, to
// compare the adapter with. Its block range is testOptions' (the head cuts
// chunks at times that depend on it).
func newPrometheus(t *testing.T) *promtsdb.DB {
	t.Helper()
	opts := promtsdb.DefaultOptions()
	opts.MinBlockDuration = testOptions().MinBlockDuration.Milliseconds()
	opts.MaxBlockDuration = testOptions().MaxBlockDuration.Milliseconds()
	db, err := promtsdb.Open(t.TempDir(), nil, nil, opts, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

// histogramSeries is a workload of every sample type: for each series, its
// samples in time order. The integer and float histograms come from
// Prometheus's test generators, so their layouts change between samples;
// a series switches type once (floats, then histograms), and stale markers
// of each type appear.
func histogramSeries() map[string][]tsample {
	const n = 300 // histogram chunks are cut after 120 samples at most
	out := map[string][]tsample{}
	add := func(name string, gen func(i int) tsample) {
		for i := range n {
			s := gen(i)
			s.t = int64(i) * 15_000
			out[name] = append(out[name], s)
		}
	}
	stale := math.Float64frombits(value.StaleNaN)
	add("int", func(i int) tsample { return tsample{h: tsdbutil.GenerateTestHistogram(int64(i))} })
	add("float", func(i int) tsample { return tsample{fh: tsdbutil.GenerateTestFloatHistogram(int64(i))} })
	add("custom", func(i int) tsample { return tsample{h: tsdbutil.GenerateTestCustomBucketsHistogram(int64(i))} })
	add("custom_float", func(i int) tsample {
		return tsample{fh: tsdbutil.GenerateTestCustomBucketsFloatHistogram(int64(i))}
	})
	add("gauge", func(i int) tsample { return tsample{h: tsdbutil.GenerateTestGaugeHistogram(int64(i % 7))} })
	add("gauge_float", func(i int) tsample {
		return tsample{fh: tsdbutil.GenerateTestGaugeFloatHistogram(int64(i % 5))}
	})
	add("resets", func(i int) tsample { return tsample{h: tsdbutil.GenerateTestHistogram(int64(i % 50))} })
	add("mixed", func(i int) tsample {
		switch {
		case i < 100:
			return tsample{f: float64(i)}
		case i%40 == 39:
			return tsample{h: &histogram.Histogram{Sum: stale}}
		case i < 200:
			return tsample{h: tsdbutil.GenerateTestHistogram(int64(i))}
		case i%40 == 19:
			return tsample{fh: &histogram.FloatHistogram{Sum: stale}}
		default:
			return tsample{fh: tsdbutil.GenerateTestFloatHistogram(int64(i))}
		}
	})
	return out
}

// sampleAppender appends one sample of any type.
type sampleAppender func(ref storage.SeriesRef, ls labels.Labels, s tsample) (storage.SeriesRef, error)

// v1Sample is a sampleAppender over app.
func v1Sample(app storage.Appender) sampleAppender {
	return func(ref storage.SeriesRef, ls labels.Labels, s tsample) (storage.SeriesRef, error) {
		if s.h != nil || s.fh != nil {
			return app.AppendHistogram(ref, ls, s.t, s.h, s.fh)
		}
		return app.Append(ref, ls, s.t, s.f)
	}
}

// v2Sample is a sampleAppender over app.
func v2Sample(app storage.AppenderV2) sampleAppender {
	return func(ref storage.SeriesRef, ls labels.Labels, s tsample) (storage.SeriesRef, error) {
		return app.Append(ref, ls, 0, s.t, s.f, s.h, s.fh, storage.AOptions{})
	}
}

// appendAll appends the workload with add, in one transaction that it
// commits.
func appendAll(t *testing.T, add sampleAppender, tx storage.AppenderTransaction, data map[string][]tsample) {
	t.Helper()
	for name, samples := range data {
		ls := labels.FromStrings("__name__", name)
		var ref storage.SeriesRef
		for _, s := range samples {
			var err error
			ref, err = add(ref, ls, s)
			require.NoError(t, err, "%s at %d", name, s.t)
		}
	}
	require.NoError(t, tx.Commit())
}

// requireSameSamples requires want and got to hold the same series with the
// same samples, and reports the first difference only.
func requireSameSamples(t *testing.T, what string, want, got seriesSamples) {
	t.Helper()
	for ls, w := range want {
		g, ok := got[ls]
		require.True(t, ok, "%s: series %s missing", what, ls)
		for i := range min(len(w), len(g)) {
			require.Equal(t, w[i], g[i], "%s: series %s, sample %d of %d", what, ls, i, len(w))
		}
		require.Len(t, g, len(w), "%s: series %s", what, ls)
	}
	for ls := range got {
		_, ok := want[ls]
		require.True(t, ok, "%s: series %s not expected", what, ls)
	}
}
