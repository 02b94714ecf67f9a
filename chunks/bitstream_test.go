package chunks

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBitStreamRoundTrip(t *testing.T) {
	const seed = 99
	r := rand.New(rand.NewPCG(seed, 0))
	for round := range 200 {
		type field struct {
			v uint64
			n uint8
		}
		var fields []field
		var w bitWriter
		total := 0
		for range r.IntN(100) {
			n := uint8(r.IntN(65))
			v := r.Uint64() // high bits beyond n must be ignored
			fields = append(fields, field{v, n})
			w.writeBits(v, n)
			total += int(n)
		}
		require.Equal(t, (total+7)/8, len(w.buf), "round %d (seed %d): bytes for %d bits", round, seed, total)
		require.Equal(t, len(w.buf)*8-total, int(w.free), "round %d: free", round)
		var br bitReader
		br.reset(w.buf, 0)
		for i, f := range fields {
			got, ok := br.readWide(f.n)
			want := f.v
			if f.n < 64 {
				want &= 1<<f.n - 1
			}
			require.True(t, ok, "round %d field %d (%d bits)", round, i, f.n)
			require.Equal(t, want, got, "round %d field %d (%d bits): got %#x, want %#x", round, i, f.n, got, want)
		}
		require.Equal(t, total, br.bitPos(), "bitPos")
		// Only padding is left.
		_, ok := br.readWide(uint8(len(w.buf)*8 - total + 1))
		require.False(t, ok, "round %d: read past the end", round)
	}
}

func TestBitWriterKnownBits(t *testing.T) {
	var w bitWriter
	w.writeBits(0b101, 3)
	w.writeBits(0xABCD, 16)
	w.writeBits(1, 1)
	w.writeBits(0, 0)
	w.writeBits(^uint64(0), 4) // only 4 low bits
	// 101 1010101111001101 1 1111 -> 10110101 01111001 10111111
	requireBytes(t, []byte{0xB5, 0x79, 0xBF}, w.buf)
	require.Equal(t, uint8(0), w.free, "free")
	w.writeBits(0b1, 1)
	requireBytes(t, []byte{0xB5, 0x79, 0xBF, 0x80}, w.buf)
	require.Equal(t, uint8(7), w.free, "free")
}

// TestBitWriterFillsZeroByte checks writing after a whole zero last byte
// (free == 8), the state a resumed old-style chunk starts in.
func TestBitWriterFillsZeroByte(t *testing.T) {
	w := bitWriter{buf: []byte{0xAA, 0x00}, free: 8}
	w.writeBits(0b11, 2)
	w.writeBits(0x1FF, 9)
	requireBytes(t, []byte{0xAA, 0xFF, 0xE0}, w.buf)
	require.Equal(t, uint8(5), w.free, "free")
}

// TestBitReaderUsesLastByteCopy checks the concurrency contract: after
// reset, changes to the last byte (and past the length) are not seen.
func TestBitReaderUsesLastByteCopy(t *testing.T) {
	for _, n := range []int{1, 2, 8, 9, 10, 17, 40} {
		data := make([]byte, n, n+8)
		for i := range data {
			data[i] = byte(0x11 * (i%15 + 1))
		}
		want := append([]byte(nil), data...)
		var br bitReader
		br.reset(data, 0)
		data[n-1] = 0xFF     // writer ORs bits into the last byte
		data[:n+1][n] = 0xEE // and appends within capacity
		for i := range n {
			b, ok := br.readBits(8)
			require.True(t, ok, "len %d byte %d", n, i)
			require.Equal(t, want[i], byte(b), "len %d byte %d: got %#x, want %#x", n, i, b, want[i])
		}
		_, ok := br.readBits(1)
		require.False(t, ok, "len %d: read past the captured length", n)
	}
}

func TestBitReaderUnalignedWide(t *testing.T) {
	// 3 bits then a 64-bit value, crossing the fast-path boundary at
	// every offset.
	for pre := range 20 {
		var w bitWriter
		for range pre {
			w.writeBits(1, 1)
		}
		w.writeBits(0x8123456789ABCDEF, 64)
		w.writeBits(0b10, 2)
		var br bitReader
		br.reset(w.buf, 0)
		v, ok := br.readBits(uint8(pre))
		require.True(t, ok, "pre %d: prefix", pre)
		require.Equal(t, uint64(1<<pre-1), v, "pre %d: prefix %#x", pre, v)
		v, ok = br.readWide(64)
		require.True(t, ok, "pre %d", pre)
		require.Equal(t, uint64(0x8123456789ABCDEF), v, "pre %d: got %#x", pre, v)
		v, ok = br.readBits(2)
		require.True(t, ok, "pre %d: suffix", pre)
		require.Equal(t, uint64(0b10), v, "pre %d: suffix %#x", pre, v)
	}
}
