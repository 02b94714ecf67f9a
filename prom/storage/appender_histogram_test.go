package promstorage_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/exemplar"
	phistogram "github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/tsdbutil"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/histogram"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// sampleAppenderKinds opens a transaction of each appender kind on s.
var sampleAppenderKinds = []struct {
	name string
	open func(s *promstorage.Storage) (sampleAppender, storage.AppenderTransaction)
}{
	{"v1", func(s *promstorage.Storage) (sampleAppender, storage.AppenderTransaction) {
		app := s.Appender(context.Background())
		return v1Sample(app), app
	}},
	{"v2", func(s *promstorage.Storage) (sampleAppender, storage.AppenderTransaction) {
		app := s.AppenderV2(context.Background())
		return v2Sample(app), app
	}},
}

// TestAppendHistogramReadBack appends integer, float, custom-bucket and
// gauge histograms, stale markers and a series that changes type through
// each appender kind, and through Prometheus's own TSDB, and requires the
// two to return identical samples, bucket for bucket, through Prometheus's
// Querier interface, with and without a narrowed selector range.
func TestAppendHistogramReadBack(t *testing.T) {
	data := histogramSeries()
	pdb := newPrometheus(t)
	papp := pdb.Appender(context.Background())
	appendAll(t, v1Sample(papp), papp, data)
	for _, kind := range sampleAppenderKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newStorage(t)
			add, tx := kind.open(s)
			appendAll(t, add, tx, data)
			for _, r := range []struct {
				name       string
				mint, maxt int64
				hints      *storage.SelectHints
			}{
				{"all", math.MinInt64, math.MaxInt64, nil},
				{"range", 1_000_000, 3_000_000, nil},
				{"hints", math.MinInt64, math.MaxInt64, &storage.SelectHints{Start: 1_500_000, End: 2_200_000}},
				{"histograms only", 1_600_000, math.MaxInt64, nil},
			} {
				want := queryBoth(t, pdb, r.mint, r.maxt, r.hints)
				got := queryBoth(t, s, r.mint, r.maxt, r.hints)
				require.NotEmpty(t, want, r.name)
				requireSameSamples(t, r.name, want, got)
			}
		})
	}
}

// queryBoth reads every series of q in [mint, maxt] with hints.
func queryBoth(t *testing.T, q storage.Queryable, mint, maxt int64, hints *storage.SelectHints) seriesSamples {
	t.Helper()
	qr, err := q.Querier(mint, maxt)
	require.NoError(t, err)
	defer func() { require.NoError(t, qr.Close()) }()
	return readAll(t, qr, hints)
}

// TestAppendHistogramCopies checks that the adapter does not keep the
// caller's histogram: Prometheus's scrape loop reuses them.
func TestAppendHistogramCopies(t *testing.T) {
	for _, kind := range sampleAppenderKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newStorage(t)
			ls := labels.FromStrings("__name__", "h")
			h := tsdbutil.GenerateTestHistogram(3)
			fh := tsdbutil.GenerateTestFloatHistogram(4)
			want := []tsample{{t: 1, h: h.Copy()}, {t: 2, fh: fh.Copy()}}
			add, tx := kind.open(s)
			_, err := add(0, ls, tsample{t: 1, h: h})
			require.NoError(t, err)
			_, err = add(0, ls, tsample{t: 2, fh: fh})
			require.NoError(t, err)
			h.PositiveBuckets[0] += 5
			h.Count += 5
			fh.PositiveBuckets[0] = 100
			require.NoError(t, tx.Commit())

			q, err := s.Querier(math.MinInt64, math.MaxInt64)
			require.NoError(t, err)
			defer func() { require.NoError(t, q.Close()) }()
			got := readAll(t, q, nil)[ls.String()]
			require.Len(t, got, 2)
			// Each sample starts a chunk (the type changes), so it keeps
			// the generator's unknown counter reset hint.
			for i, w := range want {
				require.Equal(t, w.String(), got[i])
			}
		})
	}
}

// promHistogramErrors are Prometheus's histogram validation errors.
var promHistogramErrors = []error{
	phistogram.ErrHistogramCountNotBigEnough,
	phistogram.ErrHistogramCountMismatch,
	phistogram.ErrHistogramNegativeCount,
	phistogram.ErrHistogramNegativeBucketCount,
	phistogram.ErrHistogramSpanNegativeOffset,
	phistogram.ErrHistogramSpansBucketsMismatch,
	phistogram.ErrHistogramSpanIndexOutOfRange,
	phistogram.ErrHistogramCustomBucketsMismatch,
	phistogram.ErrHistogramCustomBucketsInvalid,
	phistogram.ErrHistogramCustomBucketsInfinite,
	phistogram.ErrHistogramCustomBucketsNaN,
	phistogram.ErrHistogramsIncompatibleSchema,
	phistogram.ErrHistogramCustomBucketsZeroCount,
	phistogram.ErrHistogramCustomBucketsZeroThresh,
	phistogram.ErrHistogramCustomBucketsNegSpans,
	phistogram.ErrHistogramCustomBucketsNegBuckets,
	phistogram.ErrHistogramExpSchemaCustomBounds,
	phistogram.ErrHistogramsInvalidSchema,
	phistogram.ErrHistogramsUnknownSchema,
}

// matchedPromErrors lists which of promHistogramErrors err matches.
func matchedPromErrors(err error) []error {
	var out []error
	for _, pe := range promHistogramErrors {
		if errors.Is(err, pe) {
			out = append(out, pe)
		}
	}
	return out
}

// TestAppendInvalidHistogram appends every invalid histogram of the
// validation parity cases, integer and float, through each appender kind:
// the error must match tsdb.ErrInvalidSample, histogram.ErrInvalid and the
// Prometheus validation error that Prometheus's own Validate reports for the
// same histogram, and the transaction must go on unaffected.
func TestAppendInvalidHistogram(t *testing.T) {
	type invalid struct {
		h  *histogram.Histogram
		fh *histogram.FloatHistogram
	}
	var cases []invalid
	for _, h := range parityCases() {
		if h.Validate() != nil {
			cases = append(cases, invalid{h: h}, invalid{fh: h.ToFloat()})
		}
		fh := h.ToFloat()
		fh.Count = -1
		cases = append(cases, invalid{fh: fh})
		if len(fh.PositiveBuckets) > 0 {
			fh = h.ToFloat()
			fh.PositiveBuckets[0] = -1
			cases = append(cases, invalid{fh: fh})
		}
	}
	ls := labels.FromStrings("__name__", "h")
	for _, kind := range sampleAppenderKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newStorage(t)
			add, tx := kind.open(s)
			checked := 0
			for i, c := range cases {
				ph, pfh := promstorage.ToPromHistogram(c.h), promstorage.ToPromFloatHistogram(c.fh)
				var promErr error
				if ph != nil {
					promErr = ph.Validate()
				} else {
					promErr = pfh.Validate()
				}
				if promErr == nil {
					continue // a float form that is valid after all
				}
				checked++
				ref, err := add(0, ls, tsample{t: int64(i), h: ph, fh: pfh})
				require.Zero(t, ref)
				require.ErrorIs(t, err, tsdb.ErrInvalidSample, "case %d", i)
				require.ErrorIs(t, err, histogram.ErrInvalid, "case %d", i)
				want := matchedPromErrors(promErr)
				require.NotEmpty(t, want, "case %d: Prometheus's error %v is not in the list", i, promErr)
				require.Equal(t, want, matchedPromErrors(err), "case %d: isotsdb says %v, Prometheus %v", i, err, promErr)
			}
			require.Greater(t, checked, 30)
			_, err := add(0, ls, tsample{t: 1000, h: tsdbutil.GenerateTestHistogram(1)})
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
			q, err := s.Querier(math.MinInt64, math.MaxInt64)
			require.NoError(t, err)
			defer func() { require.NoError(t, q.Close()) }()
			require.Len(t, readAll(t, q, nil)[ls.String()], 1)
		})
	}

	t.Run("v1/neither or both", func(t *testing.T) {
		s := newStorage(t)
		app := s.Appender(context.Background())
		h := tsdbutil.GenerateTestHistogram(1)
		_, err := app.AppendHistogram(0, ls, 1, nil, nil)
		require.ErrorIs(t, err, tsdb.ErrInvalidSample)
		_, err = app.AppendHistogram(0, ls, 1, h, h.ToFloat(nil))
		require.ErrorIs(t, err, tsdb.ErrInvalidSample)
		require.NoError(t, app.Rollback())
	})
}

// TestAppendHistogramErrorMapping is TestAppendErrorMapping for histogram
// samples: the isotsdb error and Prometheus's both match.
func TestAppendHistogramErrorMapping(t *testing.T) {
	ls := labels.FromStrings("__name__", "h")
	day := (24 * time.Hour).Milliseconds()
	h := tsdbutil.GenerateTestHistogram(1)
	h2 := tsdbutil.GenerateTestHistogram(2)
	cases := []struct {
		name      string
		committed []tsample
		s         tsample
		ours      error
		prom      error
	}{
		{"out of order", []tsample{{t: 100, h: h}}, tsample{t: 50, h: h}, tsdb.ErrOutOfOrderSample, storage.ErrOutOfOrderSample},
		{"duplicate", []tsample{{t: 100, h: h}}, tsample{t: 100, h: h2}, tsdb.ErrDuplicateSampleForTimestamp, storage.ErrDuplicateSampleForTimestamp},
		{"duplicate float", []tsample{{t: 100, f: 1}}, tsample{t: 100, h: h}, tsdb.ErrDuplicateSampleForTimestamp, storage.ErrDuplicateSampleForTimestamp},
		{"duplicate of a histogram", []tsample{{t: 100, fh: h.ToFloat(nil)}}, tsample{t: 100, f: 1}, tsdb.ErrDuplicateSampleForTimestamp, storage.ErrDuplicateSampleForTimestamp},
		{"out of bounds", []tsample{{t: 2 * day, h: h}}, tsample{t: day, fh: h.ToFloat(nil)}, tsdb.ErrOutOfBounds, storage.ErrOutOfBounds},
	}
	for _, kind := range sampleAppenderKinds {
		for _, tc := range cases {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				s := newStorage(t)
				add, tx := kind.open(s)
				appendAll(t, add, tx, map[string][]tsample{"h": tc.committed})
				add, tx = kind.open(s)
				_, err := add(0, ls, tc.s)
				require.ErrorIs(t, err, tc.ours)
				require.ErrorIs(t, err, tc.prom)
				last := tc.committed[len(tc.committed)-1].t
				_, err = add(0, ls, tsample{t: last + 1, h: h2})
				require.NoError(t, err)
				require.NoError(t, tx.Commit())
				q, err := s.Querier(math.MinInt64, math.MaxInt64)
				require.NoError(t, err)
				defer func() { require.NoError(t, q.Close()) }()
				require.Len(t, readAll(t, q, nil)[ls.String()], len(tc.committed)+1)
			})
		}
	}
}

// TestChunkQuerierHistograms reads the histogram workload through the
// ChunkQuerier: every chunk has the encoding of its samples' type (XOR,
// histogram or float histogram), its MinTime and MaxTime are its first and
// last sample's, and decoding the chunks gives the Querier's samples. The
// chunks are re-encoded, so counter reset hints are compared as Prometheus
// re-encoding keeps them: an explicit counter reset or gauge stays one, the
// unknown and not-a-reset hints may trade places.
func TestChunkQuerierHistograms(t *testing.T) {
	data := histogramSeries()
	s := newStorage(t)
	add, tx := sampleAppenderKinds[0].open(s)
	appendAll(t, add, tx, data)

	for _, r := range []struct {
		name       string
		mint, maxt int64
		hints      *storage.SelectHints
	}{
		{"all", math.MinInt64, math.MaxInt64, nil},
		{"hints", math.MinInt64, math.MaxInt64, &storage.SelectHints{Start: 1_500_000, End: 2_200_000}},
	} {
		q, err := s.Querier(r.mint, r.maxt)
		require.NoError(t, err)
		want := readAll(t, q, r.hints)
		require.NoError(t, q.Close())

		cq, err := s.ChunkQuerier(r.mint, r.maxt)
		require.NoError(t, err)
		got := seriesSamples{}
		encodings := map[chunkenc.Encoding]int{}
		css := cq.Select(context.Background(), true, r.hints, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
		for css.Next() {
			var samples []string
			it := css.At().Iterator(nil)
			for it.Next() {
				meta := it.At()
				encodings[meta.Chunk.Encoding()]++
				smps := drainTyped(t, meta.Chunk.Iterator(nil))
				require.Len(t, smps, meta.Chunk.NumSamples())
				require.Equal(t, meta.MinTime, smps[0].t)
				require.Equal(t, meta.MaxTime, smps[len(smps)-1].t)
				for _, smp := range smps {
					switch meta.Chunk.Encoding() {
					case chunkenc.EncXOR:
						require.True(t, smp.h == nil && smp.fh == nil)
					case chunkenc.EncHistogram:
						require.NotNil(t, smp.h)
					case chunkenc.EncFloatHistogram:
						require.NotNil(t, smp.fh)
					default:
						require.Failf(t, "unexpected chunk encoding", "%v", meta.Chunk.Encoding())
					}
					samples = append(samples, smp.String())
				}
			}
			require.NoError(t, it.Err())
			got[css.At().Labels().String()] = samples
		}
		require.NoError(t, css.Err())
		require.NoError(t, cq.Close())
		if r.hints == nil {
			for _, enc := range []chunkenc.Encoding{chunkenc.EncXOR, chunkenc.EncHistogram, chunkenc.EncFloatHistogram} {
				require.Positive(t, encodings[enc], "%s: no %s chunk", r.name, enc)
			}
		}
		requireSameSamples(t, r.name, normalizeHints(want), normalizeHints(got))
	}
}

// normalizeHints rewrites the not-a-counter-reset hint in sample
// descriptions to the unknown one (see TestChunkQuerierHistograms).
func normalizeHints(ss seriesSamples) seriesSamples {
	out := seriesSamples{}
	for ls, samples := range ss {
		for _, s := range samples {
			out[ls] = append(out[ls], strings.Replace(s, "CounterResetHint:2 ", "CounterResetHint:0 ", 1))
		}
	}
	return out
}

// TestAppendV2HistogramExemplars checks that AppenderV2 stores a histogram
// sample with its exemplars, and reports an exemplar it rejects in a
// partial error while storing the sample.
func TestAppendV2HistogramExemplars(t *testing.T) {
	s := newExemplarStorage(t, 10)
	ls := labels.FromStrings("__name__", "h")
	app := s.AppenderV2(context.Background())
	opts := storage.AOptions{Exemplars: []exemplar.Exemplar{
		{Labels: labels.FromStrings("trace_id", "x"), Value: 1, Ts: 1, HasTs: true},
		{Labels: labels.FromStrings("trace_id", "x"), Value: 1, Ts: 1, HasTs: true}, // duplicate: dropped silently
		{Labels: labels.FromStrings("trace_id", "y"), Value: 1, Ts: 0, HasTs: true}, // out of order
	}}
	ref, err := app.Append(0, ls, 0, 1, 0, tsdbutil.GenerateTestHistogram(1), nil, opts)
	require.NotZero(t, ref, "the sample is appended")
	var pe *storage.AppendPartialError
	require.ErrorAs(t, err, &pe)
	require.Len(t, pe.ExemplarErrors, 1)
	require.Equal(t, 2, pe.ExemplarErrors[0].Index)
	require.ErrorIs(t, pe.ExemplarErrors[0], storage.ErrOutOfOrderExemplar)
	require.ErrorIs(t, pe.ExemplarErrors[0], tsdb.ErrOutOfOrderExemplar)
	require.NoError(t, app.Commit())
	eq, err := s.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	res, err := eq.Select(0, 10, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "h")})
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Len(t, res[0].Exemplars, 1)
	require.Equal(t, "x", res[0].Exemplars[0].Labels.Get("trace_id"))
	q, err := s.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	require.Len(t, readAll(t, q, nil)[ls.String()], 1)
}
