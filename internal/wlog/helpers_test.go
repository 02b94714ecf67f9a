package wlog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/vfs"
)

const testDir = "wal"

// smallSegment is a segment size that makes tests cross segments often.
const smallSegment = 3 * PageSize

// openTest opens a WL on fsys/testDir and closes it at cleanup if the test
// did not.
func openTest(t testing.TB, fsys vfs.FS, opts Options) *WL {
	t.Helper()
	w, err := Open(nil, nil, fsys, testDir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// readAll reads every record of the segments in dir. The records are
// copies.
func readAll(t testing.TB, fsys vfs.FS, dir string) ([][]byte, error) {
	t.Helper()
	sr, err := NewSegmentsReader(fsys, dir)
	require.NoError(t, err)
	defer sr.Close()
	return collect(NewReader(sr))
}

func collect(r *Reader) ([][]byte, error) {
	var out [][]byte
	for r.Next() {
		out = append(out, bytes.Clone(r.Record()))
	}
	return out, r.Err()
}

// testRecord returns a record of n bytes that identifies i and compresses
// somewhat (it repeats a short pattern with noise).
func testRecord(rng *rand.Rand, i, n int) []byte {
	rec := make([]byte, n)
	for j := range rec {
		rec[j] = byte(i + j%13)
		if rng.IntN(4) == 0 {
			rec[j] = byte(rng.Uint32())
		}
	}
	if n >= 4 {
		copy(rec, fmt.Sprintf("%04d", i%10000))
	}
	return rec
}

func requireRecords(t testing.TB, want, got [][]byte) {
	t.Helper()
	require.Equal(t, len(want), len(got), "number of records")
	for i := range want {
		require.True(t, bytes.Equal(want[i], got[i]), "record %d differs: want %d bytes, got %d bytes", i, len(want[i]), len(got[i]))
	}
}

// segmentBytes returns the current contents of segment i of testDir.
func segmentBytes(t testing.TB, fsys *vfs.MemFS, i int) []byte {
	t.Helper()
	b, err := fsys.ReadFile(SegmentName(testDir, i))
	require.NoError(t, err)
	return b
}
