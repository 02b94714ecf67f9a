package chunks

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// Every iterator of this package is an Iterator, every chunk a Chunk.
var (
	_ Iterator = (*xorIterator)(nil)
	_ Iterator = (*HistogramIterator)(nil)
	_ Iterator = (*FloatHistogramIterator)(nil)
	_ Iterator = nopIterator{}
	_ Iterator = errIterator{}

	_ Chunk = (*XORChunk)(nil)
	_ Chunk = (*HistogramChunk)(nil)
	_ Chunk = (*FloatHistogramChunk)(nil)
)

func TestValueTypeString(t *testing.T) {
	for vt, want := range map[ValueType]string{
		ValNone: "none", ValFloat: "float", ValHistogram: "histogram",
		ValFloatHistogram: "floathistogram", 9: "ValueType(9)",
	} {
		require.Equal(t, want, vt.String())
	}
}

// TestIteratorValueTypes checks what Next and Seek return for each
// encoding, that AtFloatHistogram converts integer histograms, and that
// accessors that do not fit the sample's type panic.
func TestIteratorValueTypes(t *testing.T) {
	h := &histogram.Histogram{
		Count: 5, ZeroCount: 1, Sum: 7.5, Schema: 0, ZeroThreshold: 0.001,
		PositiveSpans:   []histogram.Span{{Offset: 0, Length: 2}},
		PositiveBuckets: []int64{2, 0},
	}

	xc := NewXORChunk()
	xa, err := xc.Appender()
	require.NoError(t, err)
	xa.Append(10, 1.5)
	xa.Append(20, 2.5)

	hc := NewHistogramChunk()
	ha, err := hc.Appender()
	require.NoError(t, err)
	_, hc, _, err = ha.AppendHistogram(10, h)
	require.NoError(t, err)

	fc := NewFloatHistogramChunk()
	fa, err := fc.Appender()
	require.NoError(t, err)
	_, fc, _, err = fa.AppendFloatHistogram(10, h.ToFloat())
	require.NoError(t, err)

	t.Run("float", func(t *testing.T) {
		it := xc.Iterator(nil)
		require.Equal(t, ValFloat, it.Next())
		require.Equal(t, int64(10), it.AtT())
		require.Equal(t, ValFloat, it.Seek(15))
		ts, v := it.At()
		require.Equal(t, int64(20), ts)
		require.Equal(t, 2.5, v)
		require.Panics(t, func() { it.AtHistogram(nil) })
		require.Panics(t, func() { it.AtFloatHistogram(nil) })
		require.Equal(t, ValNone, it.Next())
		require.Equal(t, ValNone, it.Seek(0))
		require.NoError(t, it.Err())
	})
	t.Run("histogram", func(t *testing.T) {
		it := hc.Iterator(nil)
		require.Equal(t, ValHistogram, it.Seek(5))
		require.Equal(t, int64(10), it.AtT())
		reuse := new(histogram.Histogram)
		ts, got := it.AtHistogram(reuse)
		require.Equal(t, int64(10), ts)
		require.Same(t, reuse, got, "the passed histogram is reused")
		require.True(t, h.Equals(got))
		_, fh := it.AtFloatHistogram(nil)
		require.True(t, h.ToFloat().Equals(fh), "integer histogram converted")
		require.Panics(t, func() { it.At() })
		require.Equal(t, ValNone, it.Next())
		require.NoError(t, it.Err())
	})
	t.Run("float histogram", func(t *testing.T) {
		it := fc.Iterator(nil)
		require.Equal(t, ValFloatHistogram, it.Next())
		reuse := new(histogram.FloatHistogram)
		ts, got := it.AtFloatHistogram(reuse)
		require.Equal(t, int64(10), ts)
		require.Same(t, reuse, got)
		require.True(t, h.ToFloat().Equals(got))
		require.Panics(t, func() { it.At() })
		require.Panics(t, func() { it.AtHistogram(nil) })
		require.Equal(t, ValNone, it.Seek(11))
	})
	t.Run("nop and err", func(t *testing.T) {
		require.Equal(t, ValNone, NewNopIterator().Next())
		require.Equal(t, ValNone, NewNopIterator().Seek(0))
		it := NewErrIterator(ErrCorrupt)
		require.Equal(t, ValNone, it.Next())
		require.ErrorIs(t, it.Err(), ErrCorrupt)
	})
}
