package headchunks

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	"github.com/isotsdb/tsdb/internal/chunktest"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// testDir is where tests put head chunk files in a MemFS.
const testDir = "/db/chunks_head"

// fileName returns the path of file seq in testDir.
func fileName(seq int) string { return filepath.Join(testDir, FileName(seq)) }

// rec is a record as a test writes it and expects to read it back.
type rec struct {
	series     uint64
	mint, maxt int64
	enc        chunks.Encoding
	data       []byte
	ref        uint64 // set when written
}

// recOf returns the rec of a chunk.
func recOf(series uint64, mint, maxt int64, c chunks.Chunk) rec {
	return rec{series: series, mint: mint, maxt: maxt, enc: c.Encoding(), data: append([]byte(nil), c.Bytes()...)}
}

// genRecs returns n records of 1..maxSamples samples each, of the XOR,
// XOR2 and histogram encodings in turn, over a few series, in time order
// per series.
func genRecs(t testing.TB, r *rand.Rand, n, maxSamples int) []rec {
	t.Helper()
	recs := make([]rec, 0, n)
	next := map[uint64]int64{} // series -> time of its next sample
	gen := histogramtest.NewGen(r.Uint64(), false, false)
	gen.ResetPct, gen.SchemaPct, gen.StalePct, gen.HintPct = 0, 0, 0, 0
	for i := range n {
		series := 1 + r.Uint64N(5)
		t0 := next[series] + int64(r.IntN(1000))
		k := 1 + r.IntN(maxSamples)
		var c chunks.Chunk
		var mint, maxt int64
		switch i % 3 {
		case 0:
			ss := chunktest.GenScrape(r, k, t0, 50, chunktest.GaugeValues)
			xc := chunks.NewXORChunk()
			app, err := xc.Appender()
			require.NoError(t, err)
			chunktest.AppendAll(app, ss)
			c, mint, maxt = xc, ss[0].T, ss[len(ss)-1].T
		case 1:
			ss := chunktest.GenScrape(r, k, t0, 0, chunktest.CounterValues())
			xc := chunks.NewXOR2Chunk()
			app, err := xc.XOR2Appender()
			require.NoError(t, err)
			for _, s := range ss {
				app.AppendST(s.T-100, s.T, math.Float64frombits(s.V))
			}
			c, mint, maxt = xc, ss[0].T, ss[len(ss)-1].T
		default:
			hc := chunks.NewHistogramChunk()
			app, err := hc.Appender()
			require.NoError(t, err)
			mint = -1
			for range k {
				ts, h := gen.Next()
				ts += t0 - 1_700_000_000_000
				res, nc, na, err := app.AppendHistogram(ts, h)
				require.NoError(t, err)
				if res == chunks.CutNewChunk {
					break
				}
				hc, app = nc, na
				if mint < 0 {
					mint = ts
				}
				maxt = ts
			}
			c = hc
		}
		if mint < 0 {
			mint = t0
			maxt = t0
		}
		c.Compact()
		next[series] = maxt + 1
		recs = append(recs, recOf(series, mint, maxt, c))
	}
	return recs
}

// chunkOf returns a chunk holding r's bytes.
func chunkOf(t testing.TB, r rec) chunks.Chunk {
	t.Helper()
	c, err := chunks.FromData(r.enc, r.data)
	require.NoError(t, err)
	return c
}

// addAll adds recs to w, setting their refs.
func addAll(t testing.TB, w *Writer, recs []rec) {
	t.Helper()
	for i := range recs {
		ref, err := w.Add(recs[i].series, recs[i].mint, recs[i].maxt, chunkOf(t, recs[i]))
		require.NoError(t, err)
		recs[i].ref = ref
	}
}

// writeRecs opens testDir on fsys, adds recs (setting their refs) with
// a Flush every few records, and closes the writer.
func writeRecs(t testing.TB, fsys vfs.FS, opts Options, recs []rec) {
	t.Helper()
	w, _, err := Open(fsys, testDir, opts, nil)
	require.NoError(t, err)
	for i := 0; i < len(recs); i += 7 {
		addAll(t, w, recs[i:min(i+7, len(recs))])
		require.NoError(t, w.Flush())
	}
	require.NoError(t, w.Close())
}

// loaded is a record Open passed to fn, with its chunk.
type loaded struct {
	rec
	c chunks.Chunk
}

// openAll opens testDir on fsys and returns what Open loaded. The writer
// is closed at the end of the test.
func openAll(t testing.TB, fsys vfs.FS, opts Options) (*Writer, LoadResult, []loaded) {
	t.Helper()
	var got []loaded
	w, res, err := Open(fsys, testDir, opts, func(series uint64, mint, maxt int64, c chunks.Chunk) error {
		got = append(got, loaded{rec: recOf(series, mint, maxt, c), c: c})
		return nil
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	require.Equal(t, len(got), res.Chunks)
	return w, res, got
}

// requireRecs checks that got holds exactly want's records, in order,
// each chunk decoding to the same samples.
func requireRecs(t testing.TB, want []rec, got []loaded) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i].rec
		require.Equal(t, w.series, g.series, "record %d", i)
		require.Equal(t, w.mint, g.mint, "record %d", i)
		require.Equal(t, w.maxt, g.maxt, "record %d", i)
		require.Equal(t, w.enc, g.enc, "record %d", i)
		require.Equal(t, w.data, g.data, "record %d", i)
		requireSameSamples(t, chunkOf(t, w), got[i].c)
	}
}

// requireSameSamples checks that two chunks hold the same samples (times
// and float values; histogram chunks by time only).
func requireSameSamples(t testing.TB, want, got chunks.Chunk) {
	t.Helper()
	require.Equal(t, want.NumSamples(), got.NumSamples())
	wi, gi := want.Iterator(nil), got.Iterator(nil)
	for {
		wt, gt := wi.Next(), gi.Next()
		require.Equal(t, wt, gt)
		if wt == chunks.ValNone {
			break
		}
		require.Equal(t, wi.AtT(), gi.AtT())
		require.Equal(t, wi.AtST(), gi.AtST())
		if wt == chunks.ValFloat {
			_, wv := wi.At()
			_, gv := gi.At()
			require.Equal(t, math.Float64bits(wv), math.Float64bits(gv))
		}
	}
	require.NoError(t, wi.Err())
	require.NoError(t, gi.Err())
}

// requireDamage checks that err is a *corrupt.Error about file at off.
func requireDamage(t testing.TB, err *corrupt.Error, file string, off int64) {
	t.Helper()
	require.NotNil(t, err, "want damage in %s at %d", file, off)
	require.ErrorIs(t, err, corrupt.ErrCorrupt)
	var ce *corrupt.Error
	require.True(t, errors.As(error(err), &ce))
	require.Equal(t, file, ce.File, "file in %v", err)
	require.Equal(t, off, ce.Offset, "offset in %v", err)
}

// filesIn returns the names of the head chunk files in testDir with
// their sizes.
func filesIn(t testing.TB, fsys vfs.FS) map[string]int64 {
	t.Helper()
	es, err := fsys.ReadDir(testDir)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, e := range es {
		fi, err := e.Info()
		require.NoError(t, err)
		out[e.Name()] = fi.Size()
	}
	return out
}

// reopenClean checks that a second Open of fsys repairs nothing and loads
// want.
func reopenClean(t testing.TB, fsys vfs.FS, opts Options, want []rec) {
	t.Helper()
	_, res, got := openAll(t, fsys, opts)
	require.Nil(t, res.Repaired)
	requireRecs(t, want, got)
}

// mustReadName returns the contents of the file name of testDir.
func mustReadName(t testing.TB, fsys vfs.FS, name string) []byte {
	t.Helper()
	f, err := fsys.Open(filepath.Join(testDir, name))
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return b
}
