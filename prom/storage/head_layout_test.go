package promstorage_test

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram/histogramtest"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// TestHeadHistogramsMatchPrometheus appends histogramtest sequences (layout,
// schema, zero threshold and custom bound changes, resets, stale markers;
// integer and float, counter and gauge) to isotsdb's head through the
// adapter and to Prometheus's head, and requires the same samples up to
// empty buckets and the unknown/not-a-reset hint (canonicalSample).
//
// The exact samples differ for some sequences: the two heads do not always
// recode and cut histogram chunks at the same samples, so a sample may come
// back with other empty buckets or another hint (known, not yet fixed).
// The count is logged; with ISOTSDB_EXACT_HEAD_HISTOGRAMS=1 the test
// requires exact equality, to reproduce it.
func TestHeadHistogramsMatchPrometheus(t *testing.T) {
	data := map[string][]tsample{}
	for i := range 24 {
		g := histogramtest.NewGen(uint64(i), i%3 == 1, i%3 == 2)
		name := fmt.Sprintf("gen_%d", i)
		for k := range 300 {
			_, h := g.Next()
			s := tsample{t: int64(k) * 60_000}
			if i%2 == 0 {
				s.fh = promstorage.ToPromFloatHistogram(h.ToFloat())
			} else {
				s.h = promstorage.ToPromHistogram(h)
			}
			data[name] = append(data[name], s)
		}
	}
	pdb := newPrometheus(t)
	papp := pdb.Appender(t.Context())
	appendAll(t, v1Sample(papp), papp, data)
	s := newStorage(t)
	add, tx := sampleAppenderKinds[0].open(s)
	appendAll(t, add, tx, data)

	want := queryTyped(t, pdb)
	got := queryTyped(t, s)
	differ := map[string]int{}
	for k, w := range want {
		require.Len(t, got[k], len(w), k)
		for i := range w {
			require.Equal(t, canonicalSample(w[i]), canonicalSample(got[k][i]), "%s, sample %d", k, i)
			if w[i].String() != got[k][i].String() {
				differ[k]++
			}
		}
	}
	t.Logf("series whose exact samples differ from Prometheus's (empty buckets, hints): %v", differ)
	if os.Getenv("ISOTSDB_EXACT_HEAD_HISTOGRAMS") == "1" {
		requireSameSamples(t, "exact", queryBoth(t, pdb, math.MinInt64, math.MaxInt64, nil), queryBoth(t, s, math.MinInt64, math.MaxInt64, nil))
	}
}

// queryTyped reads every series of q over all time.
func queryTyped(t *testing.T, q storage.Queryable) map[string][]tsample {
	t.Helper()
	qr, err := q.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, qr.Close()) }()
	out := map[string][]tsample{}
	ss := qr.Select(t.Context(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	for ss.Next() {
		out[ss.At().Labels().String()] = drainTyped(t, ss.At().Iterator(nil))
	}
	require.NoError(t, ss.Err())
	return out
}

// canonicalSample describes s with its histogram's empty buckets dropped,
// adjacent spans merged and the not-a-reset hint written as unknown.
func canonicalSample(s tsample) string {
	switch {
	case s.h != nil:
		s.h = s.h.Copy().Compact(0)
		if s.h.CounterResetHint == histogram.NotCounterReset {
			s.h.CounterResetHint = histogram.UnknownCounterReset
		}
	case s.fh != nil:
		s.fh = s.fh.Copy().Compact(0)
		if s.fh.CounterResetHint == histogram.NotCounterReset {
			s.fh.CounterResetHint = histogram.UnknownCounterReset
		}
	}
	return s.String()
}
