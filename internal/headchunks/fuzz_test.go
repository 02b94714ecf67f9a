package headchunks

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/vfs"
)

// FuzzOpen treats arbitrary bytes as one or two head chunk files (a second
// file only if b is not empty). Open must not panic or fail, must report
// any repair as damage in one of the files, and a second Open must find
// nothing to repair and load the same records. Every chunk loaded must
// iterate without panicking.
func FuzzOpen(f *testing.F) {
	recs := genRecs(f, rand.New(rand.NewPCG(17, 17)), 12, 30)
	fsys := vfs.NewMemFS()
	writeRecs(f, fsys, Options{MaxFileSize: 600}, recs)
	one, err := fsys.ReadFile(fileName(1))
	require.NoError(f, err)
	two, err := fsys.ReadFile(fileName(2))
	require.NoError(f, err)
	f.Add(one, two)
	f.Add(one, []byte{})
	f.Add(one[:len(one)-3], two)
	f.Add(append(append([]byte{}, one...), make([]byte, 40)...), two[:HeaderSize])
	f.Add(appendHeader(nil), []byte{})
	f.Add([]byte{}, one)
	f.Add(append(appendHeader(nil), rawRecord(1, 1, 2, byte(chunks.EncXOR)|OutOfOrderFlag, recs[0].data)...), []byte{})

	f.Fuzz(func(t *testing.T, a, b []byte) {
		fsys := vfs.NewMemFS()
		require.NoError(t, fsys.MkdirAll(testDir, 0o755))
		require.NoError(t, fsys.WriteFile(fileName(1), a, 0o644))
		if len(b) > 0 {
			require.NoError(t, fsys.WriteFile(fileName(2), b, 0o644))
		}
		_, res, got := openAll(t, fsys, Options{})
		if res.Repaired != nil {
			require.Equal(t, testDir, filepath.Dir(res.Repaired.File))
		}
		for _, l := range got {
			it := l.c.Iterator(nil)
			for it.Next() != chunks.ValNone {
			}
		}
		_, res2, got2 := openAll(t, fsys, Options{})
		require.Nil(t, res2.Repaired)
		require.Equal(t, len(got), len(got2))
		for i := range got {
			require.Equal(t, got[i].rec, got2[i].rec)
		}
		require.Equal(t, res.OutOfOrder, res2.OutOfOrder)
	})
}
