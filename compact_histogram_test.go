package tsdb

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	"github.com/isotsdb/tsdb/labels"
)

// hsample is one sample of any type, for histogram block tests.
type hsample struct {
	t  int64
	st int64 // start time, 0 for none
	f  float64
	h  *histogram.Histogram
	fh *histogram.FloatHistogram
}

// key describes s by value: its type, time, and the float, or the
// histogram in Prometheus's notation with its schema (which leaves out
// empty buckets, which recoding may add).
func (s hsample) key() string {
	st := ""
	if s.st != 0 {
		st = fmt.Sprintf(" st=%d", s.st)
	}
	switch {
	case s.h != nil:
		return fmt.Sprintf("%d%s h s%d %s", s.t, st, s.h.Schema, s.h)
	case s.fh != nil:
		return fmt.Sprintf("%d%s fh s%d %s", s.t, st, s.fh.Schema, s.fh)
	}
	return fmt.Sprintf("%d%s f %x", s.t, st, math.Float64bits(s.f))
}

func keys(ss []hsample) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.key()
	}
	return out
}

// encodeChunks encodes ss (all of one type) into chunks with the chunk
// appenders directly, following their cuts and recodings.
func encodeChunks(t *testing.T, ss []hsample) []chunks.Meta {
	t.Helper()
	var (
		metas []chunks.Meta
		xa    chunks.Appender
		ha    *chunks.HistogramAppender
		fa    *chunks.FloatHistogramAppender
	)
	for _, s := range ss {
		var (
			res = chunks.CutNewChunk
			c   chunks.Chunk
			err error
		)
		switch {
		case s.h != nil && ha == nil:
			hc := chunks.NewHistogramChunk()
			ha, err = hc.Appender()
			require.NoError(t, err)
			_, c, ha, err = ha.AppendHistogram(s.t, s.h)
		case s.h != nil:
			res, c, ha, err = ha.AppendHistogram(s.t, s.h)
		case s.fh != nil && fa == nil:
			fc := chunks.NewFloatHistogramChunk()
			fa, err = fc.Appender()
			require.NoError(t, err)
			_, c, fa, err = fa.AppendFloatHistogram(s.t, s.fh)
		case s.fh != nil:
			res, c, fa, err = fa.AppendFloatHistogram(s.t, s.fh)
		default:
			if len(metas) == 0 || metas[len(metas)-1].Chunk.NumSamples() >= 120 {
				xc := chunks.NewXORChunk()
				xa, err = xc.Appender()
				c = xc
			} else {
				res = chunks.AppendedInPlace
			}
			xa.Append(s.t, s.f)
		}
		require.NoError(t, err)
		switch res {
		case chunks.CutNewChunk:
			metas = append(metas, chunks.Meta{Chunk: c, MinTime: s.t})
		case chunks.Recoded:
			metas[len(metas)-1].Chunk = c
		}
		metas[len(metas)-1].MaxTime = s.t
	}
	return metas
}

// histogramSeries returns n samples from 15s after base on: integer
// histograms of gen if kind is "h", float ones if "fh", floats if "f".
func histogramSeries(gen *histogramtest.Gen, kind string, base int64, n int) []hsample {
	ss := make([]hsample, n)
	for i := range ss {
		t := base + int64(i+1)*15000
		_, h := gen.Next()
		switch kind {
		case "h":
			ss[i] = hsample{t: t, h: h}
		case "fh":
			ss[i] = hsample{t: t, fh: h.ToFloat()}
		default:
			ss[i] = hsample{t: t, f: float64(h.Count)}
		}
	}
	return ss
}

// readSeries returns the samples of every series matching name=~re in
// [mint, maxt], by series labels.
func readSeries(t *testing.T, db *DB, mint, maxt int64, re string) map[string][]hsample {
	t.Helper()
	q, err := db.Querier(mint, maxt)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	out := map[string][]hsample{}
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchRegexp, "__name__", re))
	var it chunks.Iterator
	for ss.Next() {
		it = ss.At().Iterator(it)
		out[ss.At().Labels().Get("__name__")] = readSamples(t, it)
	}
	require.NoError(t, ss.Err())
	return out
}

// readSamples returns the samples of it, of every type.
func readSamples(t *testing.T, it chunks.Iterator) []hsample {
	t.Helper()
	var got []hsample
	for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
		var s hsample
		switch vt {
		case chunks.ValFloat:
			s.t, s.f = it.At()
		case chunks.ValHistogram:
			s.t, s.h = it.AtHistogram(nil)
		case chunks.ValFloatHistogram:
			s.t, s.fh = it.AtFloatHistogram(nil)
		}
		s.st = it.AtST()
		got = append(got, s)
	}
	require.NoError(t, it.Err())
	return got
}

// TestCompactHistogramBlocks writes three adjacent 2h blocks holding
// integer, float and custom-bucket histograms (with counter resets, schema
// changes, new buckets and stale markers) and a series that switches
// between floats and histograms from block to block; compaction merges
// them into one 6h block that holds every sample, counted by type in its
// meta, and deleting a range then cleaning tombstones re-encodes the
// histograms without losing the rest.
func TestCompactHistogramBlocks(t *testing.T) {
	dir := t.TempDir()
	const blockRange = 2 * 3600 * 1000
	kinds := map[string][3]string{
		"h":    {"h", "h", "h"},
		"fh":   {"fh", "fh", "fh"},
		"nhcb": {"h", "h", "h"},
		"mix":  {"f", "h", "fh"},
	}
	gens := map[string]*histogramtest.Gen{
		"h":    histogramtest.NewGen(1, false, false),
		"fh":   histogramtest.NewGen(2, false, true),
		"nhcb": histogramtest.NewGen(3, true, false),
		"mix":  histogramtest.NewGen(4, false, false),
	}
	want := map[string][]hsample{}
	var wantHist, wantFloat uint64
	for b := range 3 {
		var series []Series
		for _, name := range []string{"fh", "h", "mix", "nhcb"} { // sorted
			kind := kinds[name][b]
			ss := histogramSeries(gens[name], kind, int64(b)*blockRange, 479)
			want[name] = append(want[name], ss...)
			if kind == "f" {
				wantFloat += uint64(len(ss))
			} else {
				wantHist += uint64(len(ss))
			}
			series = append(series, &chunkSeries{
				lset: labels.FromStrings("__name__", name), metas: encodeChunks(t, ss), n: len(ss),
			})
		}
		writeTestBlock(t, dir, int64(b)*blockRange, int64(b+1)*blockRange, series...)
	}

	o := DefaultOptions()
	o.MinBlockDuration = 2 * time.Hour
	db, err := Open(dir, nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.Len(t, db.Blocks(), 3)
	before := readSeries(t, db, 0, 3*blockRange, ".+")
	for name, ss := range want {
		require.Equal(t, keys(ss), keys(before[name]), "%s before compaction", name)
	}

	require.NoError(t, db.Compact(ctx))
	blocks := db.Blocks()
	require.Len(t, blocks, 1)
	require.Equal(t, 2, blocks[0].Compaction.Level)
	require.Equal(t, wantHist+wantFloat, blocks[0].Stats.NumSamples)
	require.Equal(t, wantHist, blocks[0].Stats.NumHistogramSamples)
	require.Equal(t, wantFloat, blocks[0].Stats.NumFloatSamples)
	after := readSeries(t, db, 0, 3*blockRange, ".+")
	for name, ss := range want {
		require.Equal(t, keys(ss), keys(after[name]), "%s after compaction", name)
	}

	// Delete the middle hour of the h and mix series, then rewrite.
	del := [2]int64{blockRange + blockRange/4, blockRange + 3*blockRange/4}
	require.NoError(t, db.Delete(ctx, del[0], del[1], labels.MustNewMatcher(labels.MatchRegexp, "__name__", "h|mix")))
	require.NoError(t, db.CleanTombstones(ctx))
	blocks = db.Blocks()
	require.Len(t, blocks, 1)
	require.Zero(t, blocks[0].Stats.NumTombstones)
	after = readSeries(t, db, 0, 3*blockRange, ".+")
	for name, ss := range want {
		if name == "h" || name == "mix" {
			var kept []hsample
			for _, s := range ss {
				if s.t < del[0] || s.t > del[1] {
					kept = append(kept, s)
				}
			}
			require.Less(t, len(kept), len(ss))
			ss = kept
		}
		require.Equal(t, keys(ss), keys(after[name]), "%s after delete", name)
	}
}
