package interop

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/prometheus/tsdb/chunkenc"
	promchunks "github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/stretchr/testify/require"
)

// Head chunk files (chunks_head/) across the two programs. The root
// module's internal/headchunks cannot be imported from here, so the two
// directions meet in checked-in files, both made from one workload that
// each side recomputes (keep it in step with
// internal/headchunks/golden_test.go):
//
//   - testdata/golden there is what isotsdb's Writer writes; Prometheus's
//     ChunkDiskMapper must iterate and read every record of it.
//   - testdata/prom there is what Prometheus's ChunkDiskMapper writes
//     (this test, -update-headchunks rewrites it); isotsdb's Open must load
//     every record of it.
const (
	hcDir         = "../../internal/headchunks/testdata"
	hcSeries      = 3
	hcChunks      = 4
	hcSamples     = 30
	hcBase        = int64(1_700_000_000_000)
	hcMaxFileSize = 512 // the Writer's MaxFileSize for testdata/golden
	hcHeaderSize  = 8
)

var updateHeadChunks = flag.Bool("update-headchunks", false, "rewrite internal/headchunks/testdata/prom")

// hcSample returns sample i of chunk k of series s.
func hcSample(s, k, i int) (int64, float64) {
	n := k*hcSamples + i
	return hcBase + int64(n)*15_000 + int64(s), float64(s)*1000 + float64(n)*0.25
}

// hcChunk returns chunk k of series s encoded by Prometheus.
func hcChunk(t *testing.T, s, k int) chunkenc.Chunk {
	t.Helper()
	c := chunkenc.NewXORChunk()
	app, err := c.Appender()
	require.NoError(t, err)
	for i := range hcSamples {
		ts, v := hcSample(s, k, i)
		app.Append(0, ts, v)
	}
	c.Compact()
	return c
}

// hcRecordSize is the size of the record of a chunk of n bytes.
func hcRecordSize(n int) uint64 {
	return 8 + 8 + 8 + 1 + uint64(len(binary.AppendUvarint(nil, uint64(n)))) + uint64(n) + 4
}

// requireHCSamples checks that c holds chunk k of series s.
func requireHCSamples(t *testing.T, c chunkenc.Chunk, s, k int) {
	t.Helper()
	require.Equal(t, hcSamples, c.NumSamples())
	it := c.Iterator(nil)
	for i := range hcSamples {
		require.Equal(t, chunkenc.ValFloat, it.Next())
		wt, wv := hcSample(s, k, i)
		gt, gv := it.At()
		require.Equal(t, wt, gt)
		require.Equal(t, wv, gv)
	}
	require.Equal(t, chunkenc.ValNone, it.Next())
	require.NoError(t, it.Err())
}

// copyDir copies the files of src into a new directory and returns it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "chunks_head")
	require.NoError(t, os.MkdirAll(dst, 0o755))
	es, err := os.ReadDir(src)
	require.NoError(t, err)
	require.NotEmpty(t, es)
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
	return dst
}

// TestPrometheusReadsHeadChunks opens isotsdb's head chunk files with
// Prometheus's ChunkDiskMapper: IterateAllChunks must see every record
// (series ref, reference, mint, maxt, sample count, encoding, in order)
// with no error, and Chunk must return each chunk with the bytes
// Prometheus's own encoder makes for the same samples.
func TestPrometheusReadsHeadChunks(t *testing.T) {
	dir := copyDir(t, filepath.Join(hcDir, "golden"))
	cdm, err := promchunks.NewChunkDiskMapper(nil, dir, chunkenc.NewPool(), promchunks.DefaultWriteBufferSize, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, cdm.Close()) }()

	type seen struct {
		series     promchunks.HeadSeriesRef
		ref        promchunks.ChunkDiskMapperRef
		mint, maxt int64
		n          uint16
		enc        chunkenc.Encoding
		ooo        bool
	}
	var got []seen
	require.NoError(t, cdm.IterateAllChunks(func(series promchunks.HeadSeriesRef, ref promchunks.ChunkDiskMapperRef, mint, maxt int64, n uint16, enc chunkenc.Encoding, ooo bool) error {
		got = append(got, seen{series, ref, mint, maxt, n, enc, ooo})
		return nil
	}))
	require.Len(t, got, hcSeries*hcChunks)

	// References: records back to back from the first file's header; a
	// new file when the next record would pass the Writer's size limit.
	seq, off := 1, uint64(hcHeaderSize)
	for j, g := range got {
		k, s := j/hcSeries, 1+j%hcSeries
		want := hcChunk(t, s, k)
		size := hcRecordSize(len(want.Bytes()))
		if off > hcHeaderSize && off+size > hcMaxFileSize {
			seq, off = seq+1, hcHeaderSize
		}
		mint, _ := hcSample(s, k, 0)
		maxt, _ := hcSample(s, k, hcSamples-1)
		require.Equal(t, seen{
			series: promchunks.HeadSeriesRef(s),
			ref:    promchunks.ChunkDiskMapperRef(uint64(seq)<<32 | off),
			mint:   mint, maxt: maxt, n: hcSamples, enc: chunkenc.EncXOR,
		}, g, "record %d", j)
		off += size

		c, err := cdm.Chunk(g.ref)
		require.NoError(t, err)
		require.Equal(t, want.Bytes(), c.Bytes(), "record %d", j)
		requireHCSamples(t, c, s, k)
	}
}

// hcTails are the zero tails testdata/prom keeps of Prometheus's
// preallocated files (128 KiB, too much to check in): one longer than a
// record's fixed fields, one shorter, in turn, so that both ways a reader
// finds the end of a file are covered.
var hcTails = []int{64, 20}

// TestPrometheusWritesHeadChunks has Prometheus's ChunkDiskMapper write the
// workload, one chunk round per file, plus an out-of-order chunk, and
// checks (or, with -update-headchunks, rewrites) testdata/prom, which
// internal/headchunks opens. Each file is cut hcTails bytes after its last
// record; the bytes before are Prometheus's.
func TestPrometheusWritesHeadChunks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chunks_head")
	cdm, err := promchunks.NewChunkDiskMapper(nil, dir, chunkenc.NewPool(), promchunks.DefaultWriteBufferSize, 0)
	require.NoError(t, err)
	write := func(s int, mint, maxt int64, c chunkenc.Chunk, ooo bool) promchunks.ChunkDiskMapperRef {
		var werr error
		ref := cdm.WriteChunk(promchunks.HeadSeriesRef(s), mint, maxt, c, ooo, func(err error) { werr = err })
		require.NoError(t, werr)
		return ref
	}
	ends := map[int]uint64{} // file -> end of its last record
	for k := range hcChunks {
		for s := 1; s <= hcSeries; s++ {
			c := hcChunk(t, s, k)
			mint, _ := hcSample(s, k, 0)
			maxt, _ := hcSample(s, k, hcSamples-1)
			seq, off := write(s, mint, maxt, c, false).Unpack()
			ends[seq] = uint64(off) + hcRecordSize(len(c.Bytes()))
		}
		if k == hcChunks-1 {
			// An out-of-order chunk: older than the last in-order one.
			c := hcChunk(t, 2, 0)
			seq, off := write(2, hcBase+2, hcBase+2+29*15_000, c, true).Unpack()
			ends[seq] = uint64(off) + hcRecordSize(len(c.Bytes()))
		}
		cdm.CutNewFile()
	}
	require.NoError(t, cdm.Close())
	require.Len(t, ends, hcChunks)

	out := filepath.Join(hcDir, "prom")
	if *updateHeadChunks {
		require.NoError(t, os.RemoveAll(out))
		require.NoError(t, os.MkdirAll(out, 0o755))
	}
	for seq, end := range ends {
		name := filepath.Join(dir, fmt.Sprintf("%06d", seq))
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		keep := end + uint64(hcTails[seq%len(hcTails)])
		require.Greater(t, uint64(len(b)), keep, "Prometheus preallocates %s", name)
		for _, x := range b[end:] {
			require.Zero(t, x)
		}
		b = b[:keep]
		golden := filepath.Join(out, filepath.Base(name))
		if *updateHeadChunks {
			require.NoError(t, os.WriteFile(golden, b, 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		require.Equal(t, want, b, "%s differs from what Prometheus writes (-update-headchunks rewrites it)", golden)
	}

	// Prometheus reads the trimmed files back.
	cdm, err = promchunks.NewChunkDiskMapper(nil, copyDir(t, out), chunkenc.NewPool(), promchunks.DefaultWriteBufferSize, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, cdm.Close()) }()
	n, ooo := 0, 0
	require.NoError(t, cdm.IterateAllChunks(func(_ promchunks.HeadSeriesRef, _ promchunks.ChunkDiskMapperRef, _, _ int64, _ uint16, _ chunkenc.Encoding, isOOO bool) error {
		if isOOO {
			ooo++
		} else {
			n++
		}
		return nil
	}))
	require.Equal(t, hcSeries*hcChunks, n)
	require.Equal(t, 1, ooo)
}
