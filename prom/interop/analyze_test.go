package interop

import (
	"context"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/tsdb/index"
	"github.com/prometheus/prometheus/tsdb/tombstones"
	"github.com/stretchr/testify/require"
)

// blockReport is what analyzeDir found in one block.
type blockReport struct {
	meta       promtsdb.BlockMeta
	series     []series // in index order, tombstoned samples removed, empty ones dropped
	labelNames int
	labelPairs int
	chunks     int
	samples    int // in the chunks, before tombstones
	tombstoned int // series with tombstones
}

// analyzeDir opens dir with Prometheus's OpenDBReadOnly and walks every
// block the way `promtool tsdb analyze` does, and further: symbols, label
// names and values, the postings of every label pair and of all series,
// every series entry, and every sample of every chunk, with the block's
// tombstones applied. It fails the test on anything Prometheus rejects or
// on any inconsistency between these structures and meta.json.
func analyzeDir(t *testing.T, dir string) []blockReport {
	t.Helper()
	logger, logs := newLogCapture(slog.LevelWarn)
	db, err := promtsdb.OpenDBReadOnly(dir, "", logger)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	blocks, err := db.Blocks()
	require.NoError(t, err, "Prometheus rejected a block")
	require.Len(t, blocks, countBlockDirs(t, dir), "Prometheus loaded fewer blocks than there are block directories")
	var out []blockReport
	for _, b := range blocks {
		out = append(out, analyzeBlock(t, b))
	}
	logs.requireQuiet(t, "Prometheus (analyze)")
	return out
}

// countBlockDirs counts the directories of dir named by a ULID.
func countBlockDirs(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if _, err := ulid.ParseStrict(e.Name()); err == nil && e.IsDir() {
			n++
		}
	}
	return n
}

func analyzeBlock(t *testing.T, b promtsdb.BlockReader) blockReport {
	t.Helper()
	ctx := context.Background()
	meta := b.Meta()
	rep := blockReport{meta: meta}
	where := "block " + meta.ULID.String()

	ir, err := b.Index()
	require.NoError(t, err, where)
	defer func() { require.NoError(t, ir.Close()) }()
	cr, err := b.Chunks()
	require.NoError(t, err, where)
	defer func() { require.NoError(t, cr.Close()) }()
	tr, err := b.Tombstones()
	require.NoError(t, err, where)
	defer func() { require.NoError(t, tr.Close()) }()

	// Symbols: strictly increasing.
	symbols := map[string]struct{}{}
	var last *string
	for it := ir.Symbols(); it.Next(); {
		s := it.At()
		require.True(t, last == nil || *last < s, "%s: symbols not sorted: %q after %q", where, s, derefOr(last))
		symbols[s] = struct{}{}
		last = &s
		require.NoError(t, it.Err(), where)
	}

	// Label names and values, and the postings of every pair.
	names, err := ir.LabelNames(ctx)
	require.NoError(t, err, where)
	require.True(t, slices.IsSorted(names), "%s: label names not sorted", where)
	rep.labelNames = len(names)
	pairs := map[string][]storage.SeriesRef{}
	for _, n := range names {
		vals, err := ir.SortedLabelValues(ctx, n, nil)
		require.NoError(t, err, where)
		require.NotEmpty(t, vals, "%s: label %q has no values", where, n)
		for _, v := range vals {
			p, err := ir.Postings(ctx, n, v)
			require.NoError(t, err, where)
			refs, err := index.ExpandPostings(p)
			require.NoError(t, err, "%s: postings %s=%q", where, n, v)
			require.NotEmpty(t, refs, "%s: postings %s=%q are empty", where, n, v)
			require.True(t, slices.IsSorted(refs), "%s: postings %s=%q not sorted", where, n, v)
			pairs[n+"\xff"+v] = refs
		}
	}
	rep.labelPairs = len(pairs)

	// Every series, through the all-series postings.
	allName, allValue := index.AllPostingsKey()
	p, err := ir.Postings(ctx, allName, allValue)
	require.NoError(t, err, where)
	all, err := index.ExpandPostings(p)
	require.NoError(t, err, where)
	seen := map[string]int{}
	var (
		builder labels.ScratchBuilder
		metas   []chunks.Meta
		it      chunkenc.Iterator
		prev    labels.Labels
	)
	for i, ref := range all {
		require.NoError(t, ir.Series(ref, &builder, &metas), "%s: series %d", where, ref)
		lset := builder.Labels()
		sw := where + " series " + lset.String()
		require.True(t, i == 0 || labels.Compare(prev, lset) < 0, "%s: series not in label order after %s", sw, prev)
		prev = lset
		lset.Range(func(l labels.Label) {
			_, okn := symbols[l.Name]
			_, okv := symbols[l.Value]
			require.True(t, okn && okv, "%s: label %s not in the symbol table", sw, l)
			require.Contains(t, pairs[l.Name+"\xff"+l.Value], ref, "%s: not in the postings of %s", sw, l)
			seen[l.Name+"\xff"+l.Value]++
		})
		require.NotEmpty(t, metas, "%s: no chunks", sw)
		itvs, err := tr.Get(ref)
		require.NoError(t, err, sw)
		if len(itvs) > 0 {
			rep.tombstoned++
		}
		s := series{lset: lset}
		for ci, m := range metas {
			require.LessOrEqual(t, m.MinTime, m.MaxTime, "%s: chunk %d", sw, ci)
			require.True(t, m.MinTime >= meta.MinTime && m.MaxTime < meta.MaxTime,
				"%s: chunk %d [%d, %d] outside the block [%d, %d)", sw, ci, m.MinTime, m.MaxTime, meta.MinTime, meta.MaxTime)
			require.True(t, ci == 0 || metas[ci-1].MaxTime < m.MinTime, "%s: chunk %d overlaps the previous one", sw, ci)
			c, iterable, err := cr.ChunkOrIterable(m)
			require.NoError(t, err, "%s: chunk %d ref %d", sw, ci, m.Ref)
			require.Nil(t, iterable, sw)
			require.Equal(t, chunkenc.EncXOR, c.Encoding(), "%s: chunk %d", sw, ci)
			rep.chunks++
			n := 0
			it = c.Iterator(it)
			lastT := int64(math.MinInt64)
			for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
				require.Equal(t, chunkenc.ValFloat, vt, sw)
				ts, v := it.At()
				require.Greater(t, ts, lastT, "%s: chunk %d: timestamps not increasing", sw, ci)
				require.True(t, ts >= m.MinTime && ts <= m.MaxTime, "%s: chunk %d: sample at %d outside its meta [%d, %d]", sw, ci, ts, m.MinTime, m.MaxTime)
				if n == 0 {
					require.Equal(t, m.MinTime, ts, "%s: chunk %d: first sample is not at MinTime", sw, ci)
				}
				lastT = ts
				n++
				if !deleted(itvs, ts) {
					s.samples = append(s.samples, sample{t: ts, v: math.Float64bits(v)})
				}
			}
			require.NoError(t, it.Err(), "%s: chunk %d", sw, ci)
			require.Equal(t, m.MaxTime, lastT, "%s: chunk %d: last sample is not at MaxTime", sw, ci)
			require.Equal(t, c.NumSamples(), n, "%s: chunk %d: sample count", sw, ci)
			rep.samples += n
		}
		if len(s.samples) > 0 {
			rep.series = append(rep.series, s)
		}
	}
	require.NoError(t, p.Err(), where)
	for k, refs := range pairs {
		require.Len(t, refs, seen[k], "%s: postings of %s list series that do not have the label",
			where, strings.Replace(k, "\xff", "=", 1))
	}
	require.Equal(t, meta.Stats.NumSeries, uint64(len(all)), "%s: meta.json numSeries", where)
	require.Equal(t, meta.Stats.NumChunks, uint64(rep.chunks), "%s: meta.json numChunks", where)
	require.Equal(t, meta.Stats.NumSamples, uint64(rep.samples), "%s: meta.json numSamples", where)
	return rep
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// deleted reports whether t lies in one of itvs.
func deleted(itvs tombstones.Intervals, t int64) bool {
	for _, iv := range itvs {
		if iv.InBounds(t) {
			return true
		}
	}
	return false
}
