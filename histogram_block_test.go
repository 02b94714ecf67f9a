package tsdb

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// chunkSeries is a Series whose chunks writeBlock writes as they are.
type chunkSeries struct {
	lset  labels.Labels
	metas []chunks.Meta
	n     int // samples in metas
}

func (s *chunkSeries) Labels() labels.Labels { return s.lset }
func (s *chunkSeries) Iterator(chunks.Iterator) chunks.Iterator {
	return chunks.NewErrIterator(errors.New("chunkSeries is written whole"))
}
func (s *chunkSeries) wholeChunks(_, _ int64, _ int, buf []chunks.Meta) ([]chunks.Meta, int, bool) {
	return append(buf, s.metas...), s.n, true
}

type listSeriesSet struct {
	ss []Series
	i  int
}

func (l *listSeriesSet) Next() bool { l.i++; return l.i <= len(l.ss) }
func (l *listSeriesSet) At() Series { return l.ss[l.i-1] }
func (l *listSeriesSet) Err() error { return nil }

// unknownChunk is a chunk of an encoding no reader knows.
type unknownChunk struct{}

func (unknownChunk) Bytes() []byte                            { return []byte{0, 1, 0xAB} }
func (unknownChunk) Encoding() chunks.Encoding                { return 99 }
func (unknownChunk) NumSamples() int                          { return 1 }
func (unknownChunk) Iterator(chunks.Iterator) chunks.Iterator { return chunks.NewNopIterator() }
func (unknownChunk) Compact()                                 {}

func testHistogram(i int) *histogram.Histogram {
	return &histogram.Histogram{
		Count: uint64(3 + 2*i), ZeroCount: 1, Sum: 1.5 * float64(i+1), ZeroThreshold: 0.001,
		PositiveSpans:    []histogram.Span{{Offset: 0, Length: 2}},
		PositiveBuckets:  []int64{1, int64(2 * i)},
		CounterResetHint: histogram.UnknownCounterReset,
	}
}

// writeTestBlock writes a block of ss over [mint, maxt) into dir.
func writeTestBlock(t *testing.T, dir string, mint, maxt int64, ss ...Series) {
	t.Helper()
	meta := BlockMeta{ULID: newULID(), MinTime: mint, MaxTime: maxt}
	meta.Compaction.Level = 1
	ok, err := writeBlock(vfs.OS(), dir, meta, &listSeriesSet{ss: ss}, 120)
	require.NoError(t, err)
	require.True(t, ok)
}

// TestBlockHistogramChunks writes a block holding an integer and a float
// histogram chunk and reads them back through the DB's Querier, merged with
// float samples of the same series in the head.
func TestBlockHistogramChunks(t *testing.T) {
	dir := t.TempDir()
	hc := chunks.NewHistogramChunk()
	ha, err := hc.Appender()
	require.NoError(t, err)
	fc := chunks.NewFloatHistogramChunk()
	fa, err := fc.Appender()
	require.NoError(t, err)
	var want []*histogram.Histogram
	for i := range 10 {
		h := testHistogram(i)
		want = append(want, h)
		_, hc, ha, err = ha.AppendHistogram(int64(i*1000), h)
		require.NoError(t, err)
		_, fc, fa, err = fa.AppendFloatHistogram(int64(i*1000), h.ToFloat())
		require.NoError(t, err)
	}
	require.Equal(t, 10, hc.NumSamples())
	require.Equal(t, 10, fc.NumSamples())
	hl := labels.FromStrings("__name__", "h")
	fl := labels.FromStrings("__name__", "fh")
	writeTestBlock(t, dir, 0, 10_000,
		&chunkSeries{lset: fl, metas: []chunks.Meta{{Chunk: fc, MinTime: 0, MaxTime: 9000}}, n: 10},
		&chunkSeries{lset: hl, metas: []chunks.Meta{{Chunk: hc, MinTime: 0, MaxTime: 9000}}, n: 10},
	)

	db, err := Open(dir, nil, nil, DefaultOptions())
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.Len(t, db.Blocks(), 1)
	app := db.Appender(ctx)
	_, err = app.Append(0, hl, 20_000, 42)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	q, err := db.Querier(0, 30_000)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchRegexp, "__name__", "h|fh"))

	require.True(t, ss.Next())
	require.Equal(t, fl, ss.At().Labels())
	it := ss.At().Iterator(nil)
	for i, h := range want {
		require.Equal(t, chunks.ValFloatHistogram, it.Next(), "sample %d", i)
		ts, got := it.AtFloatHistogram(nil)
		require.Equal(t, int64(i*1000), ts)
		require.True(t, h.ToFloat().Equals(got), "sample %d: %s", i, got)
	}
	require.Equal(t, chunks.ValNone, it.Next())
	require.NoError(t, it.Err())

	require.True(t, ss.Next())
	require.Equal(t, hl, ss.At().Labels())
	it = ss.At().Iterator(it)
	require.Equal(t, chunks.ValHistogram, it.Seek(3000), "block and head merged")
	reuse := new(histogram.Histogram)
	for i := 3; i < len(want); i++ {
		if i > 3 {
			require.Equal(t, chunks.ValHistogram, it.Next(), "sample %d", i)
		}
		ts, got := it.AtHistogram(reuse)
		require.Equal(t, int64(i*1000), ts)
		require.Same(t, reuse, got)
		require.True(t, want[i].Equals(got), "sample %d: %s", i, got)
		_, fh := it.AtFloatHistogram(nil)
		require.True(t, want[i].ToFloat().Equals(fh), "sample %d converted", i)
	}
	require.Equal(t, chunks.ValFloat, it.Next(), "the head's float follows")
	ts, v := it.At()
	require.Equal(t, int64(20_000), ts)
	require.Equal(t, 42.0, v)
	require.Equal(t, chunks.ValNone, it.Next())
	require.NoError(t, it.Err())
	require.False(t, ss.Next())
	require.NoError(t, ss.Err())
}

// TestBlockUnknownChunkEncoding checks that a chunk of an unknown encoding
// is reported as corrupt data naming the segment file and offset, not
// skipped.
func TestBlockUnknownChunkEncoding(t *testing.T) {
	dir := t.TempDir()
	writeTestBlock(t, dir, 0, 10_000, &chunkSeries{
		lset:  labels.FromStrings("__name__", "x"),
		metas: []chunks.Meta{{Chunk: unknownChunk{}, MinTime: 0, MaxTime: 0}},
		n:     1,
	})
	db, err := Open(dir, nil, nil, DefaultOptions())
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.Len(t, db.Blocks(), 1)
	q, err := db.Querier(0, 10_000)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, "__name__", "x"))
	require.False(t, ss.Next(), "series of an unknown encoding returned")
	err = ss.Err()
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, chunks.ErrUnknownEncoding)
	var ce *CorruptionError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "000001", filepath.Base(ce.File))
	require.Equal(t, int64(8), ce.Offset, "the first chunk, after the segment header")
	require.Contains(t, err.Error(), "unknown chunk encoding: 99")
}

// TestBlockStartTimestamps reads XOR2 and HistogramST chunks (the encodings
// Prometheus writes for samples with start times) from a block through
// the DB's Querier, merged with the head: AtST returns each sample's start
// time, and 0 for the head's samples, which have none.
func TestBlockStartTimestamps(t *testing.T) {
	dir := t.TempDir()
	xc := chunks.NewXOR2Chunk()
	xa, err := xc.XOR2Appender()
	require.NoError(t, err)
	hc := chunks.NewHistogramSTChunk()
	ha, err := hc.Appender()
	require.NoError(t, err)
	st := func(i int) int64 { return int64(i/4) * 4000 } // a reset every 4 samples
	for i := range 10 {
		xa.AppendST(st(i), int64(i*1000), float64(i))
		_, hc, ha, err = ha.AppendHistogramST(st(i), int64(i*1000), testHistogram(i))
		require.NoError(t, err)
	}
	xl, hl := labels.FromStrings("__name__", "x"), labels.FromStrings("__name__", "y")
	writeTestBlock(t, dir, 0, 10_000,
		&chunkSeries{lset: xl, metas: []chunks.Meta{{Chunk: xc, MinTime: 0, MaxTime: 9000}}, n: 10},
		&chunkSeries{lset: hl, metas: []chunks.Meta{{Chunk: hc, MinTime: 0, MaxTime: 9000}}, n: 10},
	)
	db, err := Open(dir, nil, nil, DefaultOptions())
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	app := db.Appender(ctx)
	_, err = app.Append(0, xl, 20_000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	q, err := db.Querier(0, 30_000)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchRegexp, "__name__", "x|y"))
	var it chunks.Iterator
	for _, want := range []struct {
		lset labels.Labels
		vt   chunks.ValueType
		head bool
	}{{xl, chunks.ValFloat, true}, {hl, chunks.ValHistogram, false}} {
		require.True(t, ss.Next())
		require.Equal(t, want.lset, ss.At().Labels())
		it = ss.At().Iterator(it)
		for i := range 10 {
			require.Equal(t, want.vt, it.Next(), "%s sample %d", want.lset, i)
			require.Equal(t, int64(i*1000), it.AtT())
			require.Equal(t, st(i), it.AtST(), "%s sample %d start time", want.lset, i)
		}
		if want.head {
			require.Equal(t, chunks.ValFloat, it.Next())
			require.Equal(t, int64(20_000), it.AtT())
			require.Zero(t, it.AtST(), "the head's sample has no start time")
		}
		require.Equal(t, chunks.ValNone, it.Next())
		require.NoError(t, it.Err())
	}
	require.False(t, ss.Next())
}
