package promstorage_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// floatAppender is what both Prometheus appender interfaces can do with a
// float sample, so that tests run against each.
type floatAppender func(ref storage.SeriesRef, ls labels.Labels, t int64, v float64) (storage.SeriesRef, error)

// appenderKinds opens a transaction of each kind on s; commit ends it.
var appenderKinds = []struct {
	name string
	open func(s *promstorage.Storage) (floatAppender, storage.AppenderTransaction)
}{
	{"v1", func(s *promstorage.Storage) (floatAppender, storage.AppenderTransaction) {
		app := s.Appender(context.Background())
		return app.Append, app
	}},
	{"v2", func(s *promstorage.Storage) (floatAppender, storage.AppenderTransaction) {
		app := s.AppenderV2(context.Background())
		return func(ref storage.SeriesRef, ls labels.Labels, t int64, v float64) (storage.SeriesRef, error) {
			return app.Append(ref, ls, 0, t, v, nil, nil, storage.AOptions{})
		}, app
	}},
}

// commitSamples commits samples of one series in one transaction.
func commitSamples(t *testing.T, s *promstorage.Storage, ls labels.Labels, samples ...sample) {
	t.Helper()
	app := s.Appender(context.Background())
	for _, smp := range samples {
		_, err := app.Append(0, ls, smp.t, smp.f)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
}

func TestAppendErrorMapping(t *testing.T) {
	ls := labels.FromStrings("__name__", "m")
	day := (24 * time.Hour).Milliseconds()
	cases := []struct {
		name      string
		committed []sample // committed first
		t         int64
		v         float64
		ours      error
		prom      error // nil: must match no Prometheus error
	}{
		{"out of order", []sample{{100, 1}}, 50, 1, tsdb.ErrOutOfOrderSample, storage.ErrOutOfOrderSample},
		{"duplicate", []sample{{100, 1}}, 100, 2, tsdb.ErrDuplicateSampleForTimestamp, storage.ErrDuplicateSampleForTimestamp},
		// The head accepts samples down to half a block range (12h here)
		// before its newest.
		{"out of bounds", []sample{{2 * day, 1}}, day, 1, tsdb.ErrOutOfBounds, storage.ErrOutOfBounds},
	}
	promErrs := []error{storage.ErrOutOfOrderSample, storage.ErrDuplicateSampleForTimestamp, storage.ErrOutOfBounds, storage.ErrTooOldSample}
	for _, kind := range appenderKinds {
		for _, tc := range cases {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				s := newStorage(t)
				commitSamples(t, s, ls, tc.committed...)
				app, tx := kind.open(s)
				_, err := app(0, ls, tc.t, tc.v)
				require.ErrorIs(t, err, tc.ours)
				require.ErrorIs(t, err, tc.prom)
				for _, pe := range promErrs {
					if pe != tc.prom {
						require.NotErrorIs(t, err, pe)
					}
				}
				require.Contains(t, err.Error(), "tsdb:", "the isotsdb message is kept")
				// The rejected sample affects nothing else.
				_, err = app(0, ls, tc.committed[len(tc.committed)-1].t+1, 7)
				require.NoError(t, err)
				require.NoError(t, tx.Commit())
				require.Equal(t, append(tc.committed, sample{tc.committed[len(tc.committed)-1].t + 1, 7}), querySamples(t, s, ls))
			})
		}
		t.Run(kind.name+"/invalid labels", func(t *testing.T) {
			s := newStorage(t)
			app, tx := kind.open(s)
			_, err := app(0, labels.EmptyLabels(), 1, 1)
			require.ErrorIs(t, err, tsdb.ErrInvalidSample)
			for _, pe := range promErrs {
				require.NotErrorIs(t, err, pe)
			}
			require.NoError(t, tx.Rollback())
		})
	}
}

func TestSeriesRefs(t *testing.T) {
	for _, kind := range appenderKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newStorage(t)
			a, b := labels.FromStrings("__name__", "a"), labels.FromStrings("__name__", "b")
			app, tx := kind.open(s)
			refA, err := app(0, a, 1, 1)
			require.NoError(t, err)
			require.NotZero(t, refA)
			refB, err := app(0, b, 1, 1)
			require.NoError(t, err)
			require.NotEqual(t, refA, refB)
			// A ref from an earlier Append selects the series.
			again, err := app(refA, a, 2, 2)
			require.NoError(t, err)
			require.Equal(t, refA, again)
			require.NoError(t, tx.Commit())

			// The refs are isotsdb's own.
			direct := s.DB().Appender(context.Background())
			ref, err := direct.Append(0, toOurs(a), 3, 3)
			require.NoError(t, err)
			require.Equal(t, uint64(refA), uint64(ref))
			require.NoError(t, direct.Commit())
			require.Equal(t, []sample{{1, 1}, {2, 2}, {3, 3}}, querySamples(t, s, a))
		})
	}
}

func TestUnsupportedKeepsTransaction(t *testing.T) {
	ls := labels.FromStrings("__name__", "m")
	ex := exemplar.Exemplar{Labels: labels.FromStrings("trace_id", "x"), Value: 1, Ts: 2, HasTs: true}
	cases := []struct {
		name string
		call func(app storage.Appender) (storage.SeriesRef, error)
		ours error
		prom error
	}{
		{"AppendExemplar", func(app storage.Appender) (storage.SeriesRef, error) {
			return app.AppendExemplar(0, ls, ex)
		}, tsdb.ErrExemplarsDisabled, storage.ErrExemplarsDisabled},
		// (UpdateMetadata is supported: metadata_test.go.)
	}
	for _, tc := range cases {
		t.Run("v1/"+tc.name, func(t *testing.T) {
			s := newStorage(t)
			app := s.Appender(context.Background())
			_, err := app.Append(0, ls, 1, 1)
			require.NoError(t, err)
			_, err = tc.call(app)
			require.ErrorIs(t, err, tc.ours)
			if tc.prom != nil {
				require.ErrorIs(t, err, tc.prom)
			}
			require.Contains(t, err.Error(), `{__name__="m"}`, "the error names the series")
			_, err = app.Append(0, ls, 3, 3)
			require.NoError(t, err)
			require.NoError(t, app.Commit())
			require.Equal(t, []sample{{1, 1}, {3, 3}}, querySamples(t, s, ls))
		})
	}

	t.Run("v2/exemplars, metadata and start timestamp", func(t *testing.T) {
		s := newStorage(t)
		app := s.AppenderV2(context.Background())
		opts := storage.AOptions{
			Exemplars: []exemplar.Exemplar{ex, ex},
			Metadata:  metadata.Metadata{Type: "counter", Unit: "seconds", Help: "h"},
		}
		ref, err := app.Append(0, ls, 1, 2, 2, nil, nil, opts)
		require.NotZero(t, ref, "the sample is appended")
		// Exemplars are off (MaxExemplars 0): dropped without error, as
		// Prometheus's head drops them. Metadata is stored without error;
		// the start timestamps are stored with the samples.
		require.NoError(t, err)
		_, err = app.Append(ref, ls, 2, 3, 3, nil, nil, storage.AOptions{Metadata: opts.Metadata})
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		m, ok := seriesMetadata(t, s.DB(), ls)
		require.True(t, ok)
		require.Equal(t, opts.Metadata, promstorage.ToPromMetadata(m))
		require.Equal(t, []sample{{2, 2}, {3, 3}}, querySamples(t, s, ls))
		q, err := s.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		defer q.Close()
		ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", ls.Get("__name__")))
		require.True(t, ss.Next())
		var sts []int64
		it := ss.At().Iterator(nil)
		for it.Next() != chunkenc.ValNone {
			sts = append(sts, it.AtST())
		}
		require.Equal(t, []int64{1, 2}, sts)
	})
}

func TestTransactions(t *testing.T) {
	ls := labels.FromStrings("__name__", "m")
	for _, kind := range appenderKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newStorage(t)
			app, tx := kind.open(s)
			_, err := app(0, ls, 1, 1)
			require.NoError(t, err)
			require.Empty(t, querySamples(t, s, ls), "nothing is visible before Commit")
			require.NoError(t, tx.Rollback())
			require.Empty(t, querySamples(t, s, ls), "nothing is visible after Rollback")
			require.ErrorIs(t, tx.Commit(), tsdb.ErrAppenderClosed)

			app, tx = kind.open(s)
			_, err = app(0, ls, 2, 2)
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
			_, err = app(0, ls, 3, 3)
			require.ErrorIs(t, err, tsdb.ErrAppenderClosed, "an Appender is not reusable")
			require.Equal(t, []sample{{2, 2}}, querySamples(t, s, ls))

			require.NoError(t, s.Close())
			app, tx = kind.open(s)
			_, err = app(0, ls, 4, 4)
			require.ErrorIs(t, err, tsdb.ErrClosed)
			require.ErrorIs(t, tx.Commit(), tsdb.ErrClosed)
		})
	}
}

func TestStaleMarkersStored(t *testing.T) {
	// PromQL's staleness handling relies on the exact NaN bit pattern
	// surviving storage.
	s := newStorage(t)
	ls := labels.FromStrings("__name__", "m")
	commitSamples(t, s, ls, sample{1, 1}, sample{2, math.Float64frombits(value.StaleNaN)})
	got := querySamples(t, s, ls)
	require.Len(t, got, 2)
	require.True(t, value.IsStaleNaN(got[1].f))
}

// TestSTZeroSample: AppendSTZeroSample and AppendHistogramSTZeroSample add
// the zero sample at the start timestamp before the first sample of a
// cumulative count, as Prometheus's head does; for later samples of the
// same count it would be out of order and gets storage.ErrOutOfOrderST
// (nothing appended, the transaction unaffected); a start timestamp not
// before the sample gets storage.ErrSTNewerThanSample.
func TestSTZeroSample(t *testing.T) {
	s := newStorage(t)
	ls, hl, fl := labels.FromStrings("__name__", "c"), labels.FromStrings("__name__", "h"), labels.FromStrings("__name__", "fh")
	h := &histogram.Histogram{Schema: 1, Count: 2, ZeroCount: 2, Sum: 1, ZeroThreshold: 0.01}
	fh := h.ToFloat(nil)
	app := s.Appender(context.Background())
	for _, ts := range []int64{2000, 3000} {
		_, err := app.AppendSTZeroSample(0, ls, ts, 1000)
		if ts == 2000 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, storage.ErrOutOfOrderST)
		}
		_, err = app.Append(0, ls, ts, float64(ts))
		require.NoError(t, err)
		_, err = app.AppendHistogramSTZeroSample(0, hl, ts, 1000, h, nil)
		if ts == 2000 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, storage.ErrOutOfOrderST)
		}
		_, err = app.AppendHistogram(0, hl, ts, h, nil)
		require.NoError(t, err)
		_, err = app.AppendHistogramSTZeroSample(0, fl, ts, 1000, nil, fh)
		if ts == 2000 {
			require.NoError(t, err)
		}
		_, err = app.AppendHistogram(0, fl, ts, nil, fh)
		require.NoError(t, err)
	}
	_, err := app.AppendSTZeroSample(0, ls, 4000, 4000)
	require.ErrorIs(t, err, storage.ErrSTNewerThanSample)
	_, err = app.AppendHistogramSTZeroSample(0, hl, 4000, 5000, h, nil)
	require.ErrorIs(t, err, storage.ErrSTNewerThanSample)
	require.NoError(t, app.Commit())
	require.Equal(t, []sample{{1000, 0}, {2000, 2000}, {3000, 3000}}, querySamples(t, s, ls))

	q, err := s.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	for _, l := range []labels.Labels{hl, fl} {
		ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", l.Get("__name__")))
		require.True(t, ss.Next())
		it := ss.At().Iterator(nil)
		require.NotEqual(t, chunkenc.ValNone, it.Next())
		ts, zero := it.AtFloatHistogram(nil)
		require.Equal(t, int64(1000), ts)
		require.Zero(t, zero.Count, "%s: the zero histogram", l)
		require.Equal(t, h.Schema, zero.Schema)
		require.Equal(t, h.ZeroThreshold, zero.ZeroThreshold)
		for _, want := range []int64{2000, 3000} {
			require.NotEqual(t, chunkenc.ValNone, it.Next())
			ts, got := it.AtFloatHistogram(nil)
			require.Equal(t, want, ts)
			require.Equal(t, fh.Count, got.Count)
		}
		require.Equal(t, chunkenc.ValNone, it.Next())
	}
}

// TestAppendOverwrittenLabels appends through label sets whose memory
// Prometheus reuses (ScratchBuilder.Overwrite, as its remote-write and
// scrape code can): the series the first append created must keep its own
// labels after the memory now holds another set's.
func TestAppendOverwrittenLabels(t *testing.T) {
	for _, kind := range appenderKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newStorage(t)
			app, tx := kind.open(s)
			var sb labels.ScratchBuilder
			var ls labels.Labels
			for i, job := range []string{"aaa", "bbb", "ccc"} { // same sizes: the buffer is reused
				sb.Reset()
				sb.Add("__name__", "m")
				sb.Add("job", job)
				sb.Overwrite(&ls)
				_, err := app(0, ls, int64(1000*(i+1)), float64(i))
				require.NoError(t, err)
			}
			require.NoError(t, tx.Commit())
			for i, job := range []string{"aaa", "bbb", "ccc"} {
				require.Equal(t, []sample{{t: int64(1000 * (i + 1)), f: float64(i)}},
					querySamples(t, s, labels.FromStrings("__name__", "m", "job", job)), job)
			}
		})
	}
}
