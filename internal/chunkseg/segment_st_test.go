package chunkseg

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/vfs"
)

// TestSegmentSTEncodings writes chunks of the encodings with start
// timestamps (XOR2, HistogramST, FloatHistogramST) to segment files and
// reads them back with their encodings, bytes and start timestamps.
func TestSegmentSTEncodings(t *testing.T) {
	xc := chunks.NewXOR2Chunk()
	xa, err := xc.XOR2Appender()
	require.NoError(t, err)
	hc := chunks.NewHistogramSTChunk()
	ha, err := hc.Appender()
	require.NoError(t, err)
	fc := chunks.NewFloatHistogramSTChunk()
	fa, err := fc.Appender()
	require.NoError(t, err)
	for i := range int64(50) {
		st := 1000 * (i / 20)
		xa.AppendST(st, 15000*i, float64(i))
		h := &histogram.Histogram{Count: uint64(i), ZeroCount: uint64(i)}
		_, _, _, err = ha.AppendHistogramST(st, 15000*i, h)
		require.NoError(t, err)
		_, _, _, err = fa.AppendFloatHistogramST(st, 15000*i, h.ToFloat())
		require.NoError(t, err)
	}
	metas := []chunks.Meta{
		{Chunk: xc, MinTime: 0, MaxTime: 15000 * 49},
		{Chunk: hc, MinTime: 0, MaxTime: 15000 * 49},
		{Chunk: fc, MinTime: 0, MaxTime: 15000 * 49},
	}
	fsys := vfs.NewMemFS()
	writeSegments(t, rand.New(rand.NewPCG(1, 2)), fsys, testChunksDir, metas)
	rd := openReader(t, fsys)
	for i, m := range metas {
		c, err := rd.Chunk(m.Ref)
		require.NoError(t, err, "chunk %d", i)
		require.Equal(t, m.Chunk.Encoding(), c.Encoding())
		requireBytes(t, m.Chunk.Bytes(), c.Bytes())
		it := c.Iterator(nil)
		n := int64(0)
		for it.Next() != chunks.ValNone {
			require.Equal(t, 15000*n, it.AtT())
			require.Equal(t, 1000*(n/20), it.(interface{ AtST() int64 }).AtST(), "chunk %d sample %d", i, n)
			n++
		}
		require.NoError(t, it.Err())
		require.Equal(t, int64(50), n)
	}
}
