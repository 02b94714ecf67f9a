package headchunks

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/vfs"
)

// update rewrites testdata/golden from what the Writer writes now.
var update = flag.Bool("update", false, "rewrite testdata/golden")

// The golden workload, shared with prom/interop (headchunks_test.go there
// recomputes it with Prometheus's chunkenc; keep the two in step): series
// 1..goldenSeries each get goldenChunks XOR chunks of goldenSamples
// samples, written chunk by chunk, series by series within a chunk round.
// Prometheus writes the same records into testdata/prom (each round in a
// file of its own) plus one out-of-order chunk.
const (
	goldenSeries      = 3
	goldenChunks      = 4
	goldenSamples     = 30
	goldenBase        = int64(1_700_000_000_000)
	goldenMaxFileSize = 512
)

// goldenSample returns sample i of chunk k of series s.
func goldenSample(s, k, i int) (int64, float64) {
	n := k*goldenSamples + i
	return goldenBase + int64(n)*15_000 + int64(s), float64(s)*1000 + float64(n)*0.25
}

// goldenRecs returns the golden records in write order, encoded by
// package chunks.
func goldenRecs(t testing.TB) []rec {
	t.Helper()
	var recs []rec
	for k := range goldenChunks {
		for s := 1; s <= goldenSeries; s++ {
			c := chunks.NewXORChunk()
			app, err := c.Appender()
			require.NoError(t, err)
			for i := range goldenSamples {
				app.Append(goldenSample(s, k, i))
			}
			c.Compact()
			mint, _ := goldenSample(s, k, 0)
			maxt, _ := goldenSample(s, k, goldenSamples-1)
			recs = append(recs, recOf(uint64(s), mint, maxt, c))
		}
	}
	return recs
}

// readDir returns a MemFS whose testDir holds copies of the files of the
// OS directory dir.
func readDir(t *testing.T, dir string) *vfs.MemFS {
	t.Helper()
	fsys := vfs.NewMemFS()
	require.NoError(t, fsys.MkdirAll(testDir, 0o755))
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, es, "no files in %s", dir)
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, fsys.WriteFile(filepath.Join(testDir, e.Name()), b, 0o644))
	}
	return fsys
}

// TestGolden checks that the Writer writes the golden workload byte for
// byte as testdata/golden holds it (which prom/interop opens with
// Prometheus), and that Open reads those files back.
func TestGolden(t *testing.T) {
	const dir = "testdata/golden"
	recs := goldenRecs(t)
	fsys := vfs.NewMemFS()
	writeRecs(t, fsys, Options{MaxFileSize: goldenMaxFileSize}, recs)
	written := filesIn(t, fsys)
	require.Len(t, written, 3, "the workload should span a few files")

	if *update {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for name := range written {
			b, err := fsys.ReadFile(filepath.Join(testDir, name))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
		}
	}
	golden := readDir(t, dir)
	require.Equal(t, written, filesIn(t, golden), "files written differ from %s (go test -update rewrites it)", dir)
	for name := range written {
		want, err := golden.ReadFile(filepath.Join(testDir, name))
		require.NoError(t, err)
		got, err := fsys.ReadFile(filepath.Join(testDir, name))
		require.NoError(t, err)
		require.Equal(t, want, got, "%s differs from %s (go test -update rewrites it)", name, dir)
	}

	_, res, got := openAll(t, golden, Options{})
	require.Nil(t, res.Repaired)
	requireRecs(t, recs, got)
	requireGoldenSamples(t, got)
}

// TestReadPrometheusFiles opens the files Prometheus's ChunkDiskMapper
// wrote for the golden workload (testdata/prom, written by prom/interop
// with -update): every in-order record must load with the golden samples
// and bytes identical to package chunks' encoding; the out-of-order one
// is skipped; Prometheus's zero tails are left alone and not reported.
func TestReadPrometheusFiles(t *testing.T) {
	fsys := readDir(t, "testdata/prom")
	before := filesIn(t, fsys)
	require.Len(t, before, goldenChunks)
	_, res, got := openAll(t, fsys, Options{})
	require.Nil(t, res.Repaired)
	require.Equal(t, 1, res.OutOfOrder)
	require.Equal(t, goldenChunks, res.Files)
	requireRecs(t, goldenRecs(t), got)
	requireGoldenSamples(t, got)
	require.Equal(t, before, filesIn(t, fsys), "Open wrote to undamaged files (their zero tails stay)")
	reopenClean(t, fsys, Options{}, goldenRecs(t))
}

// requireGoldenSamples checks the loaded chunks against the formula.
func requireGoldenSamples(t *testing.T, got []loaded) {
	t.Helper()
	require.Len(t, got, goldenSeries*goldenChunks)
	for j, l := range got {
		k, s := j/goldenSeries, 1+j%goldenSeries
		require.Equal(t, uint64(s), l.series)
		require.Equal(t, chunks.EncXOR, l.c.Encoding())
		require.Equal(t, goldenSamples, l.c.NumSamples())
		it := l.c.Iterator(nil)
		for i := range goldenSamples {
			require.Equal(t, chunks.ValFloat, it.Next())
			wt, wv := goldenSample(s, k, i)
			gt, gv := it.At()
			require.Equal(t, wt, gt)
			require.Equal(t, wv, gv)
		}
		require.Equal(t, chunks.ValNone, it.Next())
		require.NoError(t, it.Err())
	}
}
