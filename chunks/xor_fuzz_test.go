package chunks

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzSeedChunks returns valid chunks of assorted shapes for seeding.
func fuzzSeedChunks(t testing.TB) [][]byte {
	r := rand.New(rand.NewPCG(11, 11))
	var out [][]byte
	for _, ss := range [][]testSample{
		nil,
		{{T: 1000, V: math.Float64bits(1)}},
		{{T: 1000, V: math.Float64bits(1)}, {T: 16000, V: math.Float64bits(1)}, {T: 31010, V: math.Float64bits(2)}},
		genScrape(r, 30, 1_700_000_000_000, 100, gaugeValues),
		genScrape(r, 30, -5000, 0, specialValues),
		genJumps(r, 20),
	} {
		out = append(out, bytes.Clone(encode(t, ss).Bytes()))
	}
	return out
}

// FuzzXORRoundTrip encodes arbitrary samples and checks they decode to the
// same bits, and that resuming the chunk at any point from its bytes yields
// the same encoding.
func FuzzXORRoundTrip(f *testing.F) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, ss := range [][]testSample{
		genScrape(r, 10, 1_700_000_000_000, 100, gaugeValues),
		genScrape(r, 10, 0, 0, specialValues),
		genJumps(r, 10),
	} {
		var b []byte
		for _, s := range ss {
			b = binary.LittleEndian.AppendUint64(b, uint64(s.T))
			b = binary.LittleEndian.AppendUint64(b, s.V)
		}
		f.Add(uint8(3), b)
	}
	f.Fuzz(func(t *testing.T, split uint8, data []byte) {
		ss := samplesFromFuzz(data)
		c := encode(t, ss)
		requireSamples(t, ss, collect(t, c.Iterator(nil)))

		k := min(int(split), len(ss))
		fd, err := FromData(EncXOR, bytes.Clone(encode(t, ss[:k]).Bytes()))
		require.NoError(t, err)
		appendAll(mustAppender(t, fd), ss[k:])
		requireBytes(t, c.Bytes(), fd.Bytes())
	})
}

// FuzzXORDecode feeds arbitrary bytes to the decoder: it must not panic,
// must stop after at most the header's count of samples, and when Appender
// accepts the bytes, an appended sample must decode after the old ones.
func FuzzXORDecode(f *testing.F) {
	for _, b := range fuzzSeedChunks(f) {
		f.Add(b)
	}
	f.Add([]byte{0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := FromData(EncXOR, data)
		if err != nil {
			require.Less(t, len(data), headerSize, "FromData rejected %d bytes: %v", len(data), err)
			return
		}
		var got []testSample
		it := c.Iterator(nil)
		for it.Next() != ValNone {
			ts, v := it.At()
			got = append(got, testSample{T: ts, V: math.Float64bits(v)})
			require.LessOrEqual(t, len(got), c.NumSamples(), "decoded more than the header's samples")
		}
		decodeErr := it.Err()
		if decodeErr == nil {
			require.Equal(t, c.NumSamples(), len(got), "samples decoded without error")
		}
		require.False(t, it.Next() != ValNone || it.Seek(math.MinInt64) != ValNone, "iterator moved after its end")
		// Seek agrees with Next on the same bytes.
		if len(got) > 0 {
			target := got[len(got)/2].T
			it = c.Iterator(it)
			ok := it.Seek(target) != ValNone
			require.True(t, ok, "Seek(%d) failed: %v", target, it.Err())
		}

		orig := bytes.Clone(data)
		app, err := c.(*XORChunk).Appender()
		require.Equal(t, orig, data, "Appender modified the FromData bytes")
		if err != nil {
			requireCorrupt(t, err)
			return
		}
		require.NoError(t, decodeErr, "Appender accepted bytes the iterator rejected")
		if len(got) == MaxSamples || (len(got) > 0 && got[len(got)-1].T == math.MaxInt64) {
			return
		}
		next := testSample{T: math.MinInt64, V: staleNaN}
		if len(got) > 0 {
			next.T = got[len(got)-1].T + 1
		}
		app.Append(next.T, math.Float64frombits(next.V))
		requireSamples(t, append(got, next), collect(t, c.Iterator(nil)))
	})
}
