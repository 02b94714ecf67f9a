package check_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/vfs"
)

// FuzzHistogramChunks: whatever bytes a chunk of the histogram block holds
// (its checksum fixed, so that they are decoded), the checker never panics
// and reports every damage as a problem naming a file.
func FuzzHistogramChunks(f *testing.F) {
	f.Add(uint8(1), 0, []byte{0x00, 0x30})
	f.Add(uint8(1), 2, []byte{0xc0})
	f.Add(uint8(0), 3, []byte{0xff, 0xff, 0xff})
	f.Add(uint8(3), 40, []byte{0x00, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, which uint8, at int, data []byte) {
		fsys := vfs.NewMemFS()
		series := histogramBlock(t)
		dir, refs := writeChunkBlock(t, fsys, histMint, histMaxt, series, true)
		_, off := chunkseg.SplitBlockRef(refs[int(which)%len(refs)])
		patchRecord(t, fsys, filepath.Join(dir, "chunks", "000001"), int(off), func(rec []byte) {
			// rec[0] is the encoding: overwrite the chunk from at on, as far
			// as it goes.
			c := rec[1:]
			if at < 0 || at >= len(c) {
				at = 0
			}
			copy(c[at:], data)
		})
		rep := runCheck(t, fsys)
		for _, p := range rep.Problems {
			require.NotEmpty(t, p.Path)
			require.NotEmpty(t, p.Msg)
		}
	})
}
