package chunks

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/chunktest"
	"github.com/isotsdb/tsdb/internal/corrupt"
)

// Small assertion helpers that keep failures readable.

func mustAppender(t testing.TB, c Chunk) Appender {
	t.Helper()
	xc, ok := c.(*XORChunk)
	require.True(t, ok, "%T is not an XOR chunk", c)
	app, err := xc.Appender()
	require.NoError(t, err, "Appender")
	return app
}

func requireBytes(t testing.TB, want, got []byte) {
	t.Helper()
	require.Equal(t, want, got, "bytes differ")
}

func requireCorrupt(t testing.TB, err error) {
	t.Helper()
	require.ErrorIs(t, err, ErrCorrupt)
	// The chunk-level error knows no file; a segment reader's error wraps
	// it in one that does.
	var ce *corrupt.Error
	for e := err; errors.As(e, &ce); e = ce.Err {
		if ce.File == "" {
			return
		}
	}
	require.Failf(t, "no *corrupt.Error without a file", "got %T: %v", err, err)
}

// testSample is a sample with its value as raw bits, so that comparisons
// see NaN payloads and signed zeros.
type testSample = chunktest.Sample

// Generators shared with internal/chunkseg's tests.
var (
	genScrape       = chunktest.GenScrape
	counterValues   = chunktest.CounterValues
	gaugeValues     = chunktest.GaugeValues
	constValues     = chunktest.ConstValues
	specialValues   = chunktest.SpecialValues
	randomBits      = chunktest.RandomBits
	genJumps        = chunktest.GenJumps
	requireSamples  = chunktest.RequireSamples
	collect         = chunktest.Collect[ValueType]
	samplesFromFuzz = chunktest.SamplesFromBytes
)

const staleNaN = chunktest.StaleNaN

func appendAll(app Appender, ss []testSample) { chunktest.AppendAll(app, ss) }

func encode(t testing.TB, ss []testSample) *XORChunk {
	t.Helper()
	c := NewXORChunk()
	appendAll(mustAppender(t, c), ss)
	return c
}
