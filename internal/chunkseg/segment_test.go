package chunkseg

import (
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunktest"
)

func TestBlockRef(t *testing.T) {
	for _, tc := range []struct {
		seg, off uint32
		ref      uint64
	}{
		{0, 0, 0},
		{0, 8, 8},
		{1, 8, 1<<32 | 8},
		{2, 0xdeadbeef, 2<<32 | 0xdeadbeef},
		{math.MaxUint32, math.MaxUint32, math.MaxUint64},
	} {
		require.Equal(t, tc.ref, BlockRef(tc.seg, tc.off))
		seg, off := SplitBlockRef(tc.ref)
		require.Equal(t, tc.seg, seg)
		require.Equal(t, tc.off, off)
	}
}

func TestSegmentFileName(t *testing.T) {
	for seq, want := range map[int]string{1: "000001", 2: "000002", 999999: "999999", 1234567: "1234567"} {
		require.Equal(t, want, SegmentFileName(seq))
		require.True(t, isSegmentFileName(want))
	}
	for name, want := range map[string]bool{
		"": false, "000001.tmp": false, "+1": false, "-1": false, "1_0": false, "0x1": false,
		"index": false, " 1": false, "1": true, "0": true,
		"18446744073709551615": true, "18446744073709551616": false,
	} {
		require.Equal(t, want, isSegmentFileName(name), "%q", name)
	}
}

// goldenSegment is a segment file with two XOR chunks, derived by hand from
// Prometheus's tsdb/docs/format/chunks.md:
//
//	85 BD 40 DD  magic
//	01           version
//	00 00 00     padding
//	chunk at offset 8: samples (1, 1.0)
//	  0B         len 11
//	  01         encoding XOR
//	  00 01      1 sample
//	  02         t0 = 1 (zigzag varint)
//	  3F F0 00 00 00 00 00 00  v0 = 1.0
//	  23 1B DD CF  CRC-32C of 01 + data
//	chunk at offset 25: samples (1000, 2.0), (1015, 2.0)
//	  0E         len 14
//	  01         encoding XOR
//	  00 02      2 samples
//	  D0 0F      t0 = 1000 (zigzag varint 2000)
//	  40 00 00 00 00 00 00 00  v0 = 2.0
//	  0F         t1-t0 = 15 (uvarint)
//	  00         value unchanged: one 0 bit, then padding
//	  7D CD A7 EB  CRC-32C of 01 + data
const goldenSegment = "85BD40DD" + "01" + "000000" +
	"0B" + "01" + "0001" + "02" + "3FF0000000000000" + "231BDDCF" +
	"0E" + "01" + "0002" + "D00F" + "4000000000000000" + "0F" + "00" + "7DCDA7EB"

func goldenBytes(t testing.TB) []byte {
	t.Helper()
	b, err := hex.DecodeString(goldenSegment)
	require.NoError(t, err)
	return b
}

// goldenMetas returns the chunks of goldenSegment.
func goldenMetas(t testing.TB) []chunks.Meta {
	t.Helper()
	a := encode(t, []chunktest.Sample{{T: 1, V: math.Float64bits(1)}})
	b := encode(t, []chunktest.Sample{{T: 1000, V: math.Float64bits(2)}, {T: 1015, V: math.Float64bits(2)}})
	return []chunks.Meta{{Chunk: a, MinTime: 1, MaxTime: 1}, {Chunk: b, MinTime: 1000, MaxTime: 1015}}
}

func TestSegmentGolden(t *testing.T) {
	golden := goldenBytes(t)

	// The checksums in the golden bytes agree with an independent CRC-32C.
	require.Equal(t, uint32(0xE3069283), crc32cBitwise([]byte("123456789")), "CRC-32C check value")
	require.Equal(t, uint32(0x231BDDCF), crc32cBitwise(golden[9:21]))
	require.Equal(t, uint32(0x7DCDA7EB), crc32cBitwise(golden[26:41]))

	// Writing the chunks yields exactly the golden bytes and refs.
	fsys := memFSWith(t)
	metas := goldenMetas(t)
	w, err := NewSegmentWriter(fsys, testChunksDir)
	require.NoError(t, err)
	require.NoError(t, w.WriteChunks(metas...))
	require.NoError(t, w.Close())
	got, err := fsys.ReadFile(segName(1))
	require.NoError(t, err)
	require.Equal(t, strings.ToUpper(goldenSegment), strings.ToUpper(hex.EncodeToString(got)))
	require.Equal(t, uint64(8), metas[0].Ref)
	require.Equal(t, uint64(25), metas[1].Ref)
	entries, err := fsys.ReadDir(testChunksDir)
	require.NoError(t, err)
	require.Len(t, entries, 1)

	// Reading the golden bytes yields the chunks.
	r := openReader(t, memFSWith(t, golden))
	require.Equal(t, int64(len(golden)), r.Size())
	for _, m := range metas {
		c, err := r.Chunk(m.Ref)
		require.NoError(t, err)
		requireSameChunk(t, m.Chunk, c)
	}
}
