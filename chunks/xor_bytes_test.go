package chunks

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestXORExactBytes checks encoder output against byte sequences derived by
// hand from the format description (tsdb/docs/format/chunks.md), bit by bit.
func TestXORExactBytes(t *testing.T) {
	one, two := math.Float64bits(1.0), math.Float64bits(2.0) // 0x3FF0..., 0x4000...
	cases := []struct {
		name    string
		samples []testSample
		want    []byte
	}{
		{
			name: "empty",
			want: []byte{0x00, 0x00},
		},
		{
			// header 1; varint(1000) = zigzag 2000 = D0 0F; 1.0 raw.
			name:    "one sample",
			samples: []testSample{{T: 1000, V: one}},
			want: []byte{0x00, 0x01, 0xD0, 0x0F,
				0x3F, 0xF0, 0, 0, 0, 0, 0, 0},
		},
		{
			// ... then uvarint(15000) = 98 75, value unchanged: bit '0'
			// in a new byte.
			name:    "two samples same value",
			samples: []testSample{{T: 1000, V: one}, {T: 16000, V: one}},
			want: []byte{0x00, 0x02, 0xD0, 0x0F,
				0x3F, 0xF0, 0, 0, 0, 0, 0, 0,
				0x98, 0x75, 0x00},
		},
		{
			// third sample: delta 15010, dod +10 -> '10' 00000000001010;
			// 2.0 ^ 1.0 = 0x7FF0...: leading 1, trailing 52, 11
			// significant bits; no window yet -> '11' 00001 001011
			// 11111111111. Bits after 98 75:
			// 0 10 00000000001010 1 1 00001 001011 11111111111
			// = 01000000 00000101 01100001 00101111 11111111 1(0000000)
			name:    "three samples dod and new value",
			samples: []testSample{{T: 1000, V: one}, {T: 16000, V: one}, {T: 31010, V: two}},
			want: []byte{0x00, 0x03, 0xD0, 0x0F,
				0x3F, 0xF0, 0, 0, 0, 0, 0, 0,
				0x98, 0x75,
				0x40, 0x05, 0x61, 0x2F, 0xFF, 0x80},
		},
		{
			// t 0, 10, 20; v bits 0, 0x0FF0<<48, 0x07E0<<48.
			// s1: uvarint 10 = 0A; xor 0x0FF0...: leading 4, trailing
			// 52, 8 sig bits -> '11' 00100 001000 11111111 (21 bits).
			// s2: dod 0 -> '0'; xor 0x0810... fits the window -> '10'
			// and 8 bits 10000001. 32 bits in all, ending aligned:
			// no padding at all (older Prometheus versions added a zero
			// byte here).
			name:    "whole-byte field ends aligned",
			samples: []testSample{{T: 0, V: 0}, {T: 10, V: 0x0FF0 << 48}, {T: 20, V: 0x07E0 << 48}},
			want: []byte{0x00, 0x03, 0x00,
				0, 0, 0, 0, 0, 0, 0, 0,
				0x0A, 0xC8, 0x47, 0xFA, 0x81},
		},
		{
			// Same first two samples as above: the 8-bit field ends at
			// bit 5 of a byte: 11001000 01000111 11111(000).
			name:    "two samples new window",
			samples: []testSample{{T: 0, V: 0}, {T: 10, V: 0x0FF0 << 48}},
			want: []byte{0x00, 0x02, 0x00,
				0, 0, 0, 0, 0, 0, 0, 0,
				0x0A, 0xC8, 0x47, 0xF8},
		},
		{
			// Negative time: varint(-1) = zigzag 1 = 01. Second sample at
			// +1 ms, value with all 64 bits significant (0 ^ 0x8000..01):
			// '11' 00000 000000 (64 written as 0), then 64 bits; the 13
			// header bits leave it unaligned: 1100 0000 0000 0 | 1 then
			// 62 zeros then 1.
			name:    "negative time, 64 significant bits",
			samples: []testSample{{T: -1, V: 0}, {T: 0, V: 0x8000000000000001}},
			want: []byte{0x00, 0x02, 0x01,
				0, 0, 0, 0, 0, 0, 0, 0,
				0x01,
				0xC0, 0x04, 0, 0, 0, 0, 0, 0, 0x00, 0x08},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := encode(t, tc.samples)
			requireBytes(t, tc.want, c.Bytes())
			require.Equal(t, len(tc.samples), c.NumSamples(), "NumSamples")
			requireSamples(t, tc.samples, collect(t, c.Iterator(nil)))
		})
	}
}
