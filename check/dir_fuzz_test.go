package check_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/vfs"
)

// FuzzDir: whatever bytes one file of a database holds (meta.json, index,
// chunks, tombstones, a WAL segment, a checkpoint segment), the checker
// never panics and reports every damage as a problem naming a file.
func FuzzDir(f *testing.F) {
	f.Add(uint8(0), 0, []byte("{}"))
	f.Add(uint8(1), 20, []byte{0xff, 0x00, 0x13})
	f.Add(uint8(2), 9, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Add(uint8(3), 5, []byte{0x01})
	f.Add(uint8(4), 0, []byte{0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	f.Add(uint8(5), 100, []byte{0x02, 0x7f, 0xff})
	f.Fuzz(func(t *testing.T, which uint8, at int, data []byte) {
		fsys := testDB(t)
		files := fuzzTargets(t, fsys)
		path := files[int(which)%len(files)]
		rewrite(t, fsys, path, func(b []byte) []byte {
			// Overwrite from at, extending the file if needed; a negative at
			// replaces the whole file.
			if at < 0 || at > len(b) {
				return data
			}
			end := min(len(b), at+len(data))
			out := slices.Clone(b)
			copy(out[at:end], data)
			return append(out, data[end-at:]...)
		})
		rep, err := check.Dir(fsys, dbDir)
		require.NoError(t, err)
		for _, p := range rep.Problems {
			require.NotEmpty(t, p.Path)
			require.NotEmpty(t, p.Msg)
		}
	})
}

// fuzzTargets lists the files FuzzDir may change, in a fixed order.
func fuzzTargets(t *testing.T, fsys *vfs.MemFS) []string {
	b := blocks(t, fsys)[0]
	segs := walSegments(t, fsys)
	return []string{
		filepath.Join(b, "meta.json"),
		filepath.Join(b, "index"),
		filepath.Join(b, "chunks", "000001"),
		filepath.Join(b, "tombstones"),
		segs[len(segs)-2],
		checkpointSegment(t, fsys),
	}
}
