package check_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/check"
)

// BenchmarkDir checks the test database (5 blocks, 20 series each, and a
// WAL of 4 segments and a checkpoint) per iteration.
func BenchmarkDir(b *testing.B) {
	fsys, err := testDBCopy()
	require.NoError(b, err)
	b.ReportAllocs()
	var samples uint64
	for b.Loop() {
		rep, err := check.Dir(fsys, dbDir)
		if err != nil {
			b.Fatal(err)
		}
		samples = 0
		for _, bl := range rep.Blocks {
			samples += bl.Samples
		}
		samples += uint64(rep.WAL.Samples)
	}
	b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
