package chunks

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSizeClassMatchesRuntime checks the size-class table against the
// runtime: append rounds a new slice's capacity up to its size class.
func TestSizeClassMatchesRuntime(t *testing.T) {
	for n := 1; n <= 4096; n++ {
		want := cap(append([]byte(nil), make([]byte, n)...))
		require.Equal(t, want, sizeClass(n), "sizeClass(%d), runtime rounds to %d", n, want)
	}
	require.Equal(t, 5000, sizeClass(5000), "sizeClass(5000)")
}

// TestOpenChunkSlack checks that a growing chunk never holds more capacity
// than a quarter more than its length needs (rounded to a size class), once
// past its initial capacity: not append's doubling.
func TestOpenChunkSlack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, vals := range []func(int) float64{
		func(i int) float64 { return rng.Float64() },          // full-entropy mantissas
		func(i int) float64 { return float64(i * 17) },        // counter
		func(i int) float64 { return float64(rng.IntN(100)) }, // small integers
	} {
		c := NewXORChunk()
		app, err := c.XORAppender()
		require.NoError(t, err)
		for i := range 1000 {
			app.Append(int64(i)*15000, vals(i))
			n, capacity := len(c.Bytes()), cap(c.Bytes())
			require.False(t, capacity > initialCapacity && capacity > sizeClass(n+8+n/4),
				"sample %d: %d bytes in a slice of capacity %d", i, n, capacity)
		}
	}
}
