package record

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// TestCommitGroup: the record round-trips its count; a group of no record,
// a count beyond int32, trailing bytes, a truncated varint and another
// record type are refused with typed errors.
func TestCommitGroup(t *testing.T) {
	var enc Encoder
	var dec Decoder
	for _, n := range []int{1, 2, 5, 1 << 20} {
		rec := enc.CommitGroup(n, nil)
		require.Equal(t, CommitGroup, RecordType(rec))
		got, err := dec.CommitGroup(rec)
		require.NoError(t, err)
		require.Equal(t, n, got)
	}
	for _, tc := range []struct {
		name string
		rec  []byte
		want error
	}{
		{"no record in the group", []byte{200, 0}, corrupt.ErrCorrupt},
		{"beyond int32", []byte{200, 0x80, 0x80, 0x80, 0x80, 0x10}, corrupt.ErrCorrupt},
		{"trailing bytes", []byte{200, 2, 0}, corrupt.ErrCorrupt},
		{"truncated varint", []byte{200, 0x80}, corrupt.ErrCorrupt},
		{"samples record", []byte{2}, ErrWrongType},
		{"empty", nil, ErrWrongType},
	} {
		_, err := dec.CommitGroup(tc.rec)
		require.ErrorIs(t, err, tc.want, tc.name)
	}
}
