package check_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// staleNaN is the bit pattern of Prometheus's stale marker.
const staleNaN = 0x7ff0000000000002

// histChunk encodes hs at ts into one integer histogram chunk; the
// samples must fit one chunk.
func histChunk(t *testing.T, ts []int64, hs []*histogram.Histogram) chunks.Chunk {
	t.Helper()
	c := chunks.NewHistogramChunk()
	app, err := c.Appender()
	require.NoError(t, err)
	for i, h := range hs {
		var res chunks.HistogramAppendResult
		res, c, app, err = app.AppendHistogram(ts[i], h)
		require.NoError(t, err)
		require.True(t, i == 0 || res != chunks.CutNewChunk, "sample %d cuts a new chunk", i)
	}
	return c
}

// floatHistChunk encodes hs at ts into one float histogram chunk; the
// samples must fit one chunk.
func floatHistChunk(t *testing.T, ts []int64, hs []*histogram.FloatHistogram) chunks.Chunk {
	t.Helper()
	c := chunks.NewFloatHistogramChunk()
	app, err := c.Appender()
	require.NoError(t, err)
	for i, h := range hs {
		var res chunks.HistogramAppendResult
		res, c, app, err = app.AppendFloatHistogram(ts[i], h)
		require.NoError(t, err)
		require.True(t, i == 0 || res != chunks.CutNewChunk, "sample %d cuts a new chunk", i)
	}
	return c
}

// steadyHistograms returns n histograms of a generator that neither resets
// nor changes its schema, nor goes stale, so that they fit one chunk.
func steadyHistograms(seed uint64, custom bool, n int) ([]int64, []*histogram.Histogram) {
	g := histogramtest.NewGen(seed, custom, false)
	g.ResetPct, g.SchemaPct, g.StalePct, g.HintPct = 0, 0, 0, 0
	ts, hs := histogramtest.Seq(g, n)
	if custom {
		// The generator's custom bounds are not all increasing, which
		// the chunk encoding does not mind but Validate does.
		bounds := []float64{0.005, 0.1, 0.25, 1, 2.5, 10, 1e6, 1e7}
		for _, h := range hs {
			require.Len(nil, h.CustomValues, len(bounds))
			h.CustomValues = bounds
		}
	}
	return ts, hs
}

// histogramBlock returns the series of a block holding every kind of
// chunk: integer histograms (exponential, with a stale marker at the end,
// and custom buckets), float histograms, and floats.
func histogramBlock(t *testing.T) []chunkSeries {
	t.Helper()
	ts, hs := steadyHistograms(1, false, 20)
	ts = append(ts, ts[len(ts)-1]+15000)
	hs = append(hs, &histogram.Histogram{Sum: math.Float64frombits(staleNaN)})
	cts, chs := steadyHistograms(2, true, 20)
	fts, fhs := steadyHistograms(3, false, 20)
	var ffhs []*histogram.FloatHistogram
	for _, h := range fhs {
		ffhs = append(ffhs, h.ToFloat())
	}
	xor := chunks.NewXORChunk()
	app, err := xor.Appender()
	require.NoError(t, err)
	for _, t := range fts {
		app.Append(t, 1)
	}
	return []chunkSeries{
		{labels.FromStrings("__name__", "custom"), histChunk(t, cts, chs), cts[0], cts[len(cts)-1]},
		{labels.FromStrings("__name__", "exp"), histChunk(t, ts, hs), ts[0], ts[len(ts)-1]},
		{labels.FromStrings("__name__", "float"), xor, fts[0], fts[len(fts)-1]},
		{labels.FromStrings("__name__", "floathist"), floatHistChunk(t, fts, ffhs), fts[0], fts[len(fts)-1]},
	}
}

// histogramBlockRange is a block range that holds every sample of
// histogramBlock (the generator starts at 1,700,000,000,000).
const histMint, histMaxt = int64(1_699_999_000_000), int64(1_700_100_000_000)

func TestHistogramBlock(t *testing.T) {
	for _, split := range []bool{true, false} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			series := histogramBlock(t)
			writeChunkBlock(t, fsys, histMint, histMaxt, series, split)
			rep := runCheck(t, fsys)
			require.Empty(t, rep.Problems, reportText(rep))
			require.Len(t, rep.Blocks, 1)
			b := rep.Blocks[0]
			require.Equal(t, uint64(4), b.Series)
			require.Equal(t, uint64(4), b.Chunks)
			require.Equal(t, uint64(3), b.HistogramChunks)
			require.Equal(t, uint64(21+20+20+20), b.Samples)
			require.Equal(t, uint64(21+20+20), b.HistogramSamples)
		})
	}
}

// patchRecord changes the chunk record at off of the segment file at path
// with f, which gets the encoding byte followed by the chunk's bytes, and
// then recomputes the record's checksum, so that the change is seen by the
// decoding and not by the CRC.
func patchRecord(t *testing.T, fsys *vfs.MemFS, path string, off int, f func(rec []byte)) {
	t.Helper()
	rewrite(t, fsys, path, func(b []byte) []byte {
		n, k := binary.Uvarint(b[off:])
		require.Positive(t, k)
		rec := b[off+k : off+k+1+int(n)]
		f(rec)
		binary.BigEndian.PutUint32(b[off+k+1+int(n):], crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli)))
		return b
	})
}

// TestHistogramChunkDamage damages the histogram chunks of a good
// histogram block and checks that the problem is an error naming the
// segment file and the chunk's offset.
func TestHistogramChunkDamage(t *testing.T) {
	const (
		custom    = 0
		exp       = 1
		floatHist = 3
	)
	for _, tc := range []struct {
		name string
		// series is the series whose chunk is damaged.
		series int
		// replace replaces the chunk of series before the block is
		// written, if not nil.
		replace func(t *testing.T) chunkSeries
		// damage changes the written record (encoding byte and chunk
		// bytes) and fixes its checksum, if not nil.
		damage   func(rec []byte)
		flip     bool // flip a byte of the chunk without fixing the checksum
		contains []string
	}{
		{
			name: "flipped byte", series: exp, flip: true,
			contains: []string{"does not read", "checksum"},
		},
		{
			name: "flipped bytes behind the checksum", series: floatHist,
			damage: func(rec []byte) {
				for i := 4; i < len(rec); i += 3 {
					rec[i] ^= 0x5a
				}
			},
			contains: []string{"chunk 0"},
		},
		{
			name: "count too large", series: exp,
			damage: func(rec []byte) {
				binary.BigEndian.PutUint16(rec[1:], binary.BigEndian.Uint16(rec[1:])+1)
			},
			// The padding decodes as one more sample, or fails to.
			contains: []string{"chunk 0: sample 21"},
		},
		{
			name: "count too small", series: custom,
			damage: func(rec []byte) {
				binary.BigEndian.PutUint16(rec[1:], binary.BigEndian.Uint16(rec[1:])-1)
			},
			contains: []string{"chunk 0: its 19 samples decode, but the chunk is malformed", "unexpected bits after the last sample"},
		},
		{
			name: "unknown encoding", series: floatHist,
			damage: func(rec []byte) {
				rec[0] = 9
			},
			contains: []string{"does not read", "unknown chunk encoding: 9"},
		},
		{
			name: "negative bucket count", series: exp,
			replace: func(t *testing.T) chunkSeries {
				// Running sums 1, then -1: a negative bucket.
				h := &histogram.Histogram{Schema: 0, PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []int64{1, -2}}
				ts := []int64{histMint + 1000, histMint + 2000}
				return chunkSeries{labels.FromStrings("__name__", "exp"), histChunk(t, ts, []*histogram.Histogram{h, h}), ts[0], ts[1]}
			},
			contains: []string{"histogram sample 0 at", "is not a valid histogram", "negative"},
		},
		{
			name: "negative float bucket count", series: floatHist,
			replace: func(t *testing.T) chunkSeries {
				fh := &histogram.FloatHistogram{Schema: 0, Count: 0.5, PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []float64{-0.5, 1}}
				ts := []int64{histMint + 1000, histMint + 2000}
				return chunkSeries{labels.FromStrings("__name__", "floathist"), floatHistChunk(t, ts, []*histogram.FloatHistogram{fh, fh}), ts[0], ts[1]}
			},
			contains: []string{"floathistogram sample 0 at", "is not a valid histogram", "negative"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			series := histogramBlock(t)
			if tc.replace != nil {
				series[tc.series] = tc.replace(t)
			}
			dir, refs := writeChunkBlock(t, fsys, histMint, histMaxt, series, true)
			seg, off := chunkseg.SplitBlockRef(refs[tc.series])
			require.Equal(t, uint32(0), seg)
			path := filepath.Join(dir, "chunks", "000001")
			switch {
			case tc.flip:
				flip(t, fsys, path, int(off)+6)
			case tc.damage != nil:
				patchRecord(t, fsys, path, int(off), tc.damage)
			}
			rep := runCheck(t, fsys)
			require.ErrorIs(t, rep.Err(), check.ErrInconsistent)
			p := requireProblem(t, rep, check.Error, "chunks/000001",
				append([]string{fmt.Sprintf("at offset %d", off), "series " + series[tc.series].lset.String()}, tc.contains...)...)
			require.Equal(t, int64(off), p.Offset)
		})
	}
}

// TestHistogramStats checks the comparison of meta.json's float and
// histogram sample counts with what the block holds.
func TestHistogramStats(t *testing.T) {
	fsys := vfs.NewMemFS()
	dir, _ := writeChunkBlock(t, fsys, histMint, histMaxt, histogramBlock(t), true)
	rewrite(t, fsys, filepath.Join(dir, "meta.json"), func(b []byte) []byte {
		require.Contains(t, string(b), `"numHistogramSamples":61`)
		return bytes.Replace(b, []byte(`"numHistogramSamples":61`), []byte(`"numHistogramSamples":60,"numFloatSamples":21`), 1)
	})
	rep := runCheck(t, fsys)
	requireProblem(t, rep, check.Error, "meta.json", "stats say 60 histogram samples, the block holds 61")
	requireProblem(t, rep, check.Error, "meta.json", "float samples")
	require.Equal(t, 2, rep.Count(check.Error), reportText(rep))
}

// TestUnreferencedUnknownEncoding checks that a chunk record no series
// refers to is checked for its encoding too.
func TestUnreferencedUnknownEncoding(t *testing.T) {
	fsys := vfs.NewMemFS()
	dir, refs := writeChunkBlock(t, fsys, histMint, histMaxt, histogramBlock(t), true)
	path := filepath.Join(dir, "chunks", "000001")
	b, err := fsys.ReadFile(path)
	require.NoError(t, err)
	// Append a record of encoding 7 that no series refers to.
	rec := []byte{7, 0, 0}
	extra := binary.AppendUvarint(nil, uint64(len(rec)-1))
	extra = append(extra, rec...)
	extra = binary.BigEndian.AppendUint32(extra, crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli)))
	require.NoError(t, fsys.WriteFile(path, append(b, extra...), 0o666))
	require.NotEmpty(t, refs)

	rep := runCheck(t, fsys)
	requireProblem(t, rep, check.Error, "chunks/000001", fmt.Sprintf("at offset %d", len(b)), "unknown encoding 7")
	for _, p := range rep.Problems {
		require.False(t, p.Severity == check.Error && !strings.Contains(p.Msg, "unknown encoding"), "unexpected: %s", p)
	}
}

// TestHistogramRecordsWithoutIndex checks that when the index cannot be
// read, so that every chunk record is checked by the scan of the segment
// files, the records of both histogram encodings pass.
func TestHistogramRecordsWithoutIndex(t *testing.T) {
	fsys := vfs.NewMemFS()
	dir, _ := writeChunkBlock(t, fsys, histMint, histMaxt, histogramBlock(t), true)
	flip(t, fsys, filepath.Join(dir, "index"), 5+8+1)
	rep := runCheck(t, fsys)
	requireProblem(t, rep, check.Error, "index", "index does not open")
	for _, p := range rep.Problems {
		require.NotContains(t, p.Path, "chunks", "%s", p)
	}
}
