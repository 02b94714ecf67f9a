package chunks

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVarbitIntWidths(t *testing.T) {
	cases := []struct {
		v    int64
		bits int // total encoded size
	}{
		{0, 1},
		{1, 5}, {-3, 5}, {4, 5}, {-4, 9}, {5, 9},
		{32, 9}, {-31, 9}, {33, 13}, {-32, 13},
		{256, 13}, {-255, 13}, {257, 17},
		{2048, 17}, {-2047, 17}, {2049, 24},
		{131072, 24}, {-131071, 24}, {131073, 32},
		{16777216, 32}, {-16777215, 32}, {16777217, 64},
		{1 << 55, 64}, {-(1<<55 - 1), 64}, {1<<55 + 1, 72}, {-(1 << 55), 72},
		{math.MaxInt64, 72}, {math.MinInt64, 72},
	}
	for _, tc := range cases {
		var w bitWriter
		w.putVarbitInt(tc.v)
		require.Equal(t, tc.bits, len(w.buf)*8-int(w.free), "value %d", tc.v)
		var r bitReader
		r.reset(w.buf, 0)
		got, ok := r.readVarbitInt()
		require.True(t, ok)
		require.Equal(t, tc.v, got)
	}
}

func TestVarbitUintWidths(t *testing.T) {
	cases := []struct {
		v    uint64
		bits int
	}{
		{0, 1}, {1, 5}, {7, 5}, {8, 9}, {63, 9}, {64, 13}, {511, 13}, {512, 17},
		{4095, 17}, {4096, 24}, {262143, 24}, {262144, 32}, {1<<25 - 1, 32}, {1 << 25, 64},
		{1<<56 - 1, 64}, {1 << 56, 72}, {math.MaxUint64, 72},
	}
	for _, tc := range cases {
		var w bitWriter
		w.putVarbitUint(tc.v)
		require.Equal(t, tc.bits, len(w.buf)*8-int(w.free), "value %d", tc.v)
		var r bitReader
		r.reset(w.buf, 0)
		got, ok := r.readVarbitUint()
		require.True(t, ok)
		require.Equal(t, tc.v, got)
	}
}

// TestVarbitBits pins a few encodings bit for bit.
func TestVarbitBits(t *testing.T) {
	var w bitWriter
	w.putVarbitInt(-1) // 10 111
	w.putVarbitUint(9) // 110 001001
	w.putVarbitInt(0)  // 0
	// 10111 110001001 0 → 1011 1110 0010 010(0)
	require.Equal(t, []byte{0b1011_1110, 0b0010_0100}, w.buf)
}

func TestVarbitTruncated(t *testing.T) {
	for _, b := range [][]byte{{}, {0b1111_1100}, {0xff}, {0xfe, 0xff}, {0xff, 0, 0, 0, 0, 0, 0, 0}} {
		var r bitReader
		r.reset(b, 0)
		_, ok := r.readVarbitInt()
		require.False(t, ok, "%08b", b)
		r.reset(b, 0)
		_, ok = r.readVarbitUint()
		require.False(t, ok, "%08b", b)
	}
}

func FuzzVarbitRoundTrip(f *testing.F) {
	f.Add(int64(0), uint64(0), int64(-1))
	f.Add(int64(math.MinInt64), uint64(math.MaxUint64), int64(1<<55))
	f.Fuzz(func(t *testing.T, a int64, b uint64, c int64) {
		var w bitWriter
		w.writeBits(1, 3) // start unaligned
		w.putVarbitInt(a)
		w.putVarbitUint(b)
		w.putVarbitInt(c)
		var r bitReader
		r.reset(w.buf, 0)
		_, _ = r.readBits(3)
		ga, ok1 := r.readVarbitInt()
		gb, ok2 := r.readVarbitUint()
		gc, ok3 := r.readVarbitInt()
		require.True(t, ok1 && ok2 && ok3)
		require.Equal(t, a, ga)
		require.Equal(t, b, gb)
		require.Equal(t, c, gc)
		require.Equal(t, len(w.buf)*8-int(w.free), r.bitPos())
	})
}
