package tsdb

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/vfs"
)

// BenchmarkWALReplay opens a DB whose WAL holds 1M samples (20,000 series
// × 50 scrapes), with and without snappy.
func BenchmarkWALReplay(b *testing.B) {
	lsets := loadSeries(b, 20000)
	for _, snappy := range []bool{false, true} {
		b.Run(fmt.Sprintf("snappy=%v", snappy), func(b *testing.B) {
			fsys := vfs.NewMemFS()
			o := DefaultOptions()
			o.FS, o.WALCompression = fsys, snappy
			db, err := Open("data", nil, nil, o)
			require.NoError(b, err)
			ingestScrapes(b, db, lsets, 50)
			require.NoError(b, db.Close())
			const samples = 20000 * 50
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				db, err := Open("data", nil, nil, o)
				require.NoError(b, err)
				require.Equal(b, int64(20000), db.Head().NumSeries(), "replayed series")
				require.NoError(b, db.Close())
			}
			b.ReportMetric(float64(samples*b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkAppendWAL is BenchmarkAppendScrape with the WAL on and off
// (isolation on), on the real filesystem.
func BenchmarkAppendWAL(b *testing.B) {
	lsets := loadSeries(b, 20000)
	for _, wal := range []bool{true, false} {
		b.Run(fmt.Sprintf("wal=%v", wal), func(b *testing.B) {
			o := DefaultOptions()
			o.NoWAL = !wal
			db, err := Open(b.TempDir(), nil, nil, o)
			require.NoError(b, err)
			defer db.Close()
			benchScrapes(b, db, lsets)
		})
	}
}
