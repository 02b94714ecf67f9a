package corrupt

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestError(t *testing.T) {
	cause := errors.New("checksum mismatch")
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{At("d/index", 5, cause), "corrupt data in d/index at offset 5: checksum mismatch"},
		{At("d/meta.json", -1, cause), "corrupt data in d/meta.json: checksum mismatch"},
		{At("", 7, cause), "corrupt data at offset 7: checksum mismatch"},
		{At("", -1, cause), "corrupt data: checksum mismatch"},
		{Errorf("f", 0, "bad magic %#x: %w", 3, cause), "corrupt data in f at offset 0: bad magic 0x3: checksum mismatch"},
	} {
		require.Equal(t, tc.want, tc.err.Error())
		wrapped := fmt.Errorf("open: %w", tc.err)
		require.ErrorIs(t, wrapped, ErrCorrupt)
		require.ErrorIs(t, wrapped, cause)
		require.NotErrorIs(t, wrapped, io.EOF)
		var e *Error
		require.ErrorAs(t, wrapped, &e)
		require.Same(t, tc.err, e)
		file, off, ok := Locate(wrapped)
		require.True(t, ok)
		require.Equal(t, tc.err.File, file)
		require.Equal(t, tc.err.Offset, off)
	}
	_, _, ok := Locate(io.EOF)
	require.False(t, ok)
}
