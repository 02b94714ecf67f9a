package wlog

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/vfs"
)

// TestLogAfter: first runs before the records are in the log (it sees the
// log without them) and before the next Log; it does not run when the WL
// is closed, and a nil first is Log.
func TestLogAfter(t *testing.T) {
	fsys := vfs.NewMemFS()
	w, err := Open(nil, nil, fsys, "wal", Options{})
	require.NoError(t, err)
	var order []string
	require.NoError(t, w.LogAfter(func() {
		// Called with the lock held: the segment's write position shows
		// whether the records went in yet.
		require.Zero(t, w.donePages*PageSize+w.page.alloc, "first runs before the records are written")
		order = append(order, "first")
	}, []byte("a"), []byte("b")))
	require.NoError(t, w.LogAfter(nil, []byte("c")))
	recs, err := readAll(t, fsys, "wal")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, recs)
	require.Equal(t, []string{"first"}, order)

	require.NoError(t, w.Close())
	called := false
	require.Error(t, w.LogAfter(func() { called = true }, []byte("d")))
	require.False(t, called, "first ran on a closed WL")
}
