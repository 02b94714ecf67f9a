package chunks

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// TestStartHistogramChunk: a chunk started with a start time takes the ST
// encoding and any later sample; one started without takes only samples
// without start times. The sample reads back with its start time.
func TestStartHistogramChunk(t *testing.T) {
	h := &histogram.Histogram{Count: 3, ZeroCount: 3, Sum: 1, ZeroThreshold: 0.001}
	for _, tc := range []struct {
		st                int64
		enc, fenc         Encoding
		takesST, takesNot bool
	}{
		{0, EncHistogram, EncFloatHistogram, false, true},
		{500, EncHistogramST, EncFloatHistogramST, true, true},
	} {
		app, err := StartHistogramChunk(nil, tc.st, 1000, h)
		require.NoError(t, err)
		require.Equal(t, tc.enc, app.Chunk().Encoding())
		require.Equal(t, tc.takesST, app.TakesST(7))
		require.Equal(t, tc.takesNot, app.TakesST(0))
		it := app.Chunk().Iterator(nil)
		require.Equal(t, ValHistogram, it.Next())
		require.Equal(t, tc.st, it.AtST())

		fapp, err := StartFloatHistogramChunk(nil, tc.st, 1000, h.ToFloat())
		require.NoError(t, err)
		require.Equal(t, tc.fenc, fapp.Chunk().Encoding())
		require.Equal(t, tc.takesST, fapp.TakesST(7))
		require.Equal(t, tc.takesNot, fapp.TakesST(0))
		it = fapp.Chunk().Iterator(it)
		require.Equal(t, ValFloatHistogram, it.Next())
		require.Equal(t, tc.st, it.AtST())
	}
}
