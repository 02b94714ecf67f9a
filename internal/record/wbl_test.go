package record

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// TestWBLCopy: the record round-trips its count, is told apart from a
// CommitGroup record with the same count, and a count of zero or beyond
// int32, trailing bytes, a truncated varint and another record type are
// refused with typed errors.
func TestWBLCopy(t *testing.T) {
	var enc Encoder
	var dec Decoder
	for _, n := range []int{1, 2, 5, 1 << 20} {
		rec := enc.WBLCopy(n, nil)
		require.Equal(t, WBLCopy, RecordType(rec))
		require.Equal(t, "wbl_copy", RecordType(rec).String())
		got, err := dec.WBLCopy(rec)
		require.NoError(t, err)
		require.Equal(t, n, got)
		_, err = dec.CommitGroup(rec)
		require.ErrorIs(t, err, ErrWrongType)
		_, err = dec.WBLCopy(enc.CommitGroup(n, nil))
		require.ErrorIs(t, err, ErrWrongType)
	}
	for _, tc := range []struct {
		name string
		rec  []byte
		want error
	}{
		{"no record announced", []byte{201, 0}, corrupt.ErrCorrupt},
		{"beyond int32", []byte{201, 0x80, 0x80, 0x80, 0x80, 0x10}, corrupt.ErrCorrupt},
		{"trailing bytes", []byte{201, 2, 0}, corrupt.ErrCorrupt},
		{"truncated varint", []byte{201, 0x80}, corrupt.ErrCorrupt},
		{"samples record", []byte{2}, ErrWrongType},
		{"empty", nil, ErrWrongType},
	} {
		_, err := dec.WBLCopy(tc.rec)
		require.ErrorIs(t, err, tc.want, tc.name)
	}
}

// TestMmapMarkers: markers round-trip in Prometheus's layout (two be64 per
// marker), an empty record holds none, and a partial marker or another
// record type is refused with typed errors.
func TestMmapMarkers(t *testing.T) {
	var enc Encoder
	var dec Decoder
	want := []RefMmapMarker{{Ref: 1, MmapRef: 2}, {Ref: 1 << 60, MmapRef: 1<<32 | 77}}
	rec := enc.MmapMarkers(want, nil)
	require.Len(t, rec, 1+16*len(want))
	require.Equal(t, []byte{5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2}, rec[:17], "Prometheus's byte layout")
	got, err := dec.MmapMarkers(rec, nil)
	require.NoError(t, err)
	require.Equal(t, want, got)

	got, err = dec.MmapMarkers([]byte{5}, nil)
	require.NoError(t, err)
	require.Empty(t, got)

	out := []RefMmapMarker{{Ref: 9}}
	out, err = dec.MmapMarkers(rec[:len(rec)-1], out)
	require.ErrorIs(t, err, corrupt.ErrCorrupt)
	require.Len(t, out, 1, "out is returned unchanged on error")
	_, err = dec.MmapMarkers([]byte{2}, nil)
	require.ErrorIs(t, err, ErrWrongType)
}
