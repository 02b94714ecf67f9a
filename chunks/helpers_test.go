package chunks

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Small assertion helpers that keep failures readable.

func mustAppender(t testing.TB, c Chunk) Appender {
	t.Helper()
	app, err := c.Appender()
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
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
}

// testSample is a sample with its value as raw bits, so that comparisons
// see NaN payloads and signed zeros.
type testSample struct {
	t int64
	v uint64
}

func (s testSample) String() string {
	return fmt.Sprintf("(%d, %#x=%g)", s.t, s.v, math.Float64frombits(s.v))
}

func appendAll(app Appender, ss []testSample) {
	for _, s := range ss {
		app.Append(s.t, math.Float64frombits(s.v))
	}
}

func encode(t testing.TB, ss []testSample) *XORChunk {
	t.Helper()
	c := NewXORChunk()
	appendAll(mustAppender(t, c), ss)
	return c
}

// collect drains it, failing the test on an iteration error.
func collect(t testing.TB, it Iterator) []testSample {
	t.Helper()
	var out []testSample
	for it.Next() {
		ts, v := it.At()
		out = append(out, testSample{ts, math.Float64bits(v)})
	}
	require.NoError(t, it.Err(), "iteration error after %d samples", len(out))
	return out
}

func requireSamples(t testing.TB, want, got []testSample) {
	t.Helper()
	require.Equal(t, len(want), len(got), "number of samples")
	for i := range want {
		require.Equal(t, want[i], got[i], "sample %d", i)
	}
}
