package promstorage_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	ourlabels "github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// testOptions are the isotsdb options the tests use. MinBlockDuration is
// 24h, as in Prometheus's own test storage: the head accepts samples down
// to half a block range before its newest one, and the PromQL test files
// load some series after others that reach hours further.
func testOptions() *tsdb.Options {
	o := tsdb.DefaultOptions()
	o.NoWAL = true
	o.NoLockfile = true
	o.MinBlockDuration = 24 * time.Hour
	o.MaxBlockDuration = 24 * time.Hour
	return o
}

// newStorage opens an isotsdb DB in a temporary directory and wraps it. The
// DB is closed at the end of the test (closing it twice is fine).
func newStorage(tb testing.TB) *promstorage.Storage {
	tb.Helper()
	db, err := tsdb.Open(tb.TempDir(), nil, nil, testOptions())
	require.NoError(tb, err)
	s := promstorage.New(db)
	tb.Cleanup(func() { require.NoError(tb, s.Close()) })
	return s
}

// newStorageBlocks is newStorage with blocks of the given range, which a
// DB.Compact cuts from the head.
func newStorageBlocks(tb testing.TB, blockRange time.Duration) *promstorage.Storage {
	tb.Helper()
	o := testOptions()
	o.MinBlockDuration, o.MaxBlockDuration = blockRange, blockRange
	db, err := tsdb.Open(tb.TempDir(), nil, nil, o)
	require.NoError(tb, err)
	s := promstorage.New(db)
	tb.Cleanup(func() { require.NoError(tb, s.Close()) })
	return s
}

// newExemplarStorage is newStorage with room for n exemplars.
func newExemplarStorage(tb testing.TB, n int64) *promstorage.Storage {
	tb.Helper()
	o := testOptions()
	o.MaxExemplars = n
	db, err := tsdb.Open(tb.TempDir(), nil, nil, o)
	require.NoError(tb, err)
	s := promstorage.New(db)
	tb.Cleanup(func() { require.NoError(tb, s.Close()) })
	return s
}

// sample is a float sample as the tests write and read them.
type sample struct {
	t int64
	f float64
}

// querySamples returns the samples of the series ls, read through the
// adapter over all time.
func querySamples(t *testing.T, s *promstorage.Storage, ls labels.Labels) []sample {
	t.Helper()
	q, err := s.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	var ms []*labels.Matcher
	ls.Range(func(l labels.Label) {
		ms = append(ms, labels.MustNewMatcher(labels.MatchEqual, l.Name, l.Value))
	})
	ss := q.Select(context.Background(), true, nil, ms...)
	var out []sample
	for ss.Next() {
		require.Equal(t, ls, ss.At().Labels())
		out = append(out, iterSamples(t, ss.At().Iterator(nil))...)
	}
	require.NoError(t, ss.Err())
	return out
}

// iterSamples drains a float iterator.
func iterSamples(t *testing.T, it chunkenc.Iterator) []sample {
	t.Helper()
	var out []sample
	for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
		require.Equal(t, chunkenc.ValFloat, vt)
		ts, f := it.At()
		require.Equal(t, ts, it.AtT())
		out = append(out, sample{ts, f})
	}
	require.NoError(t, it.Err())
	return out
}

// toOurs converts a Prometheus label set to isotsdb's.
func toOurs(ls labels.Labels) ourlabels.Labels {
	b := ourlabels.NewScratchBuilder(ls.Len())
	ls.Range(func(l labels.Label) { b.Add(l.Name, l.Value) })
	return b.Labels()
}
