package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
	"github.com/isotsdb/tsdb/vfs"
)

// Out-of-order blocks, both ways. Each DB is fed a stream in which a
// fifth of the samples of the first 2h20m (floats, integer, float and custom-bucket
// histograms) arrive up to 85 minutes late, with 30-minute blocks, a window
// of 90 minutes and a compaction every 30 simulated minutes: most late
// samples fall behind the head's range, into ranges already written into
// blocks. isotsdb writes them with its next head compaction into blocks
// overlapping the ones there, Prometheus with its out-of-order head
// compaction; each then merges the overlapping blocks unless told not to.
// The other DB must read the directory, overlapping blocks or merged ones,
// and return exactly what the writer's own querier returns, and both must
// return what was written; isotsdb's check must find no error in it (only
// warnings, among them the overlaps).
//
// The stream ends with an in-order tail longer than the head keeps after
// compaction, so that every late sample is in a block when the writer
// closes: neither reader replays the other's record of late samples still
// in a head (Prometheus's WBL, or isotsdb's WAL with the window off).

const (
	directionLateBlocks = "out-of-order blocks"

	lbBase   = int64(1_700_006_400_000) // a multiple of 2h
	lbStep   = int64(30_000)
	lbBlock  = 30 * time.Minute
	lbWindow = 90 * time.Minute
	// lbScrapes scrapes (5h) of lbSeries series; late samples are
	// delivered lbMinDelay to lbMaxDelay scrapes late, and none during the
	// last lbTail scrapes (75 minutes).
	lbScrapes    = 600
	lbSeries     = 24
	lbMinDelay   = 2
	lbMaxDelay   = 170
	lbTail       = 150
	lbCompaction = 60 // commits (30 minutes) between compactions
)

// lbKinds are the kinds of series of the workload, by series number modulo
// their count.
var lbKinds = [...]string{"float", "int", "float_hist", "custom"}

// lbSample is one sample of the workload, in isotsdb's types.
type lbSample struct {
	series int
	t      int64
	f      float64
	h      *histogram.Histogram
	fh     *histogram.FloatHistogram
}

// lbWorkload is the stream: commits of samples, late ones among them.
type lbWorkload struct {
	sets    []labels.Labels
	commits [][]lbSample
	late    int // samples delivered late
	// lateAt holds, per series (labels String), the times of the samples
	// delivered late.
	lateAt map[string]map[int64]bool
	// lines is the model: per series (labels String) the psample.line of
	// every sample in time order.
	lines map[string][]string
}

// buildLBWorkload returns the deterministic stream.
func buildLBWorkload() *lbWorkload {
	rng := rand.New(rand.NewPCG(20261205, 7))
	w := &lbWorkload{lines: map[string][]string{}, lateAt: map[string]map[int64]bool{}}
	hists := make([][]*histogram.Histogram, lbSeries)
	for i := range lbSeries {
		kind := lbKinds[i%len(lbKinds)]
		w.sets = append(w.sets, labels.FromStrings(metricName, "interop_late_"+kind, "i", fmt.Sprint(i)))
		if kind != "float" {
			_, hists[i] = histogramtest.Seq(histogramtest.NewGen(uint64(100+i), kind == "custom", false), lbScrapes)
		}
	}
	w.commits = make([][]lbSample, lbScrapes)
	for k := range lbScrapes {
		for i, ls := range w.sets {
			s := lbSample{series: i, t: lbBase + int64(k)*lbStep + int64(i)*100}
			var p psample
			switch lbKinds[i%len(lbKinds)] {
			case "float":
				s.f = float64(i*100_000+k) + 0.25
				p = psample{vt: chunkenc.ValFloat, t: s.t, f: s.f}
			case "float_hist":
				s.fh = hists[i][k].ToFloat()
				p = psample{vt: chunkenc.ValFloatHistogram, t: s.t, fh: promstorage.ToPromFloatHistogram(s.fh)}
			default:
				s.h = hists[i][k]
				p = psample{vt: chunkenc.ValHistogram, t: s.t, h: promstorage.ToPromHistogram(s.h)}
			}
			w.lines[ls.String()] = append(w.lines[ls.String()], p.line())
			c := k
			if k > 0 && k+lbMaxDelay < lbScrapes-lbTail && rng.IntN(5) == 0 {
				c += lbMinDelay + rng.IntN(lbMaxDelay-lbMinDelay+1)
				w.late++
				if w.lateAt[ls.String()] == nil {
					w.lateAt[ls.String()] = map[int64]bool{}
				}
				w.lateAt[ls.String()][s.t] = true
			}
			w.commits[c] = append(w.commits[c], s)
		}
	}
	for _, c := range w.commits {
		rng.Shuffle(len(c), func(a, b int) { c[a], c[b] = c[b], c[a] })
	}
	return w
}

// errMergeRefused is what mergeRefusingFS returns for a compacted block.
var errMergeRefused = errors.New("interop: publishing a compacted block refused")

// mergeRefusingFS is the OS file system, except that it refuses, while
// refuse is set, to rename a block directory being written into place if
// its meta.json says it is compacted (level 2 or more): isotsdb's head
// compactions go through, its block compactions fail, so the overlapping
// blocks its head compactions write stay unmerged.
type mergeRefusingFS struct {
	vfs.FS
	refuse  atomic.Bool
	refused atomic.Int64
}

func (f *mergeRefusingFS) Rename(oldname, newname string) error {
	if f.refuse.Load() && strings.HasPrefix(filepath.Base(oldname), ".tmp") {
		if level, ok := f.blockLevel(oldname); ok && level >= 2 {
			f.refused.Add(1)
			return errMergeRefused
		}
	}
	return f.FS.Rename(oldname, newname)
}

// blockLevel reads the compaction level from dir's meta.json.
func (f *mergeRefusingFS) blockLevel(dir string) (int, bool) {
	file, err := f.Open(filepath.Join(dir, "meta.json"))
	if err != nil {
		return 0, false
	}
	defer file.Close()
	b, err := io.ReadAll(file)
	if err != nil {
		return 0, false
	}
	var m struct {
		Compaction struct {
			Level int `json:"level"`
		} `json:"compaction"`
	}
	if json.Unmarshal(b, &m) != nil {
		return 0, false
	}
	return m.Compaction.Level, true
}

// lbOptions are isotsdb's options for the workload: 30-minute blocks,
// compacted no further than merging overlaps, and the window.
func lbOptions(fsys vfs.FS) *tsdb.Options {
	o := tsdb.DefaultOptions()
	o.FS = fsys
	o.MinBlockDuration = lbBlock
	o.MaxBlockDuration = lbBlock
	o.OutOfOrderTimeWindow = lbWindow
	o.WALSegmentSize = 256 << 10
	return o
}

// overlappingPairs counts the pairs of blocks whose ranges overlap.
func overlappingPairs(spans [][2]int64) int {
	n := 0
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if a[0] < b[1] && b[0] < a[1] {
				n++
			}
		}
	}
	return n
}

func isotsdbSpans(blocks []tsdb.BlockMeta) [][2]int64 {
	var out [][2]int64
	for _, b := range blocks {
		out = append(out, [2]int64{b.MinTime, b.MaxTime})
	}
	return out
}

func promSpans(blocks []*promtsdb.Block) [][2]int64 {
	var out [][2]int64
	for _, b := range blocks {
		out = append(out, [2]int64{b.MinTime(), b.MaxTime()})
	}
	return out
}

// lbFeedStats is what a writer saw while fed.
type lbFeedStats struct {
	behind   int // late samples accepted behind the head's range
	overlaps int // most overlapping pairs of blocks after a compaction
	// merged counts the blocks, after the last compaction, compacted from
	// parents that overlap each other.
	merged int
}

// parentsOverlap reports whether two of the ranges overlap.
func parentsOverlap(spans [][2]int64) bool { return overlappingPairs(spans) > 0 }

// writeIsotsdbLB feeds w to isotsdb in dir; with refuse its block
// compactions fail (fsys refuses them), so the overlapping blocks stay.
func writeIsotsdbLB(t *testing.T, dir string, w *lbWorkload, fsys *mergeRefusingFS) lbFeedStats {
	t.Helper()
	ctx := context.Background()
	db, err := tsdb.Open(dir, nil, nil, lbOptions(fsys))
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	var st lbFeedStats
	compact := func() {
		err := db.Compact(ctx)
		if !fsys.refuse.Load() || !errors.Is(err, errMergeRefused) {
			require.NoError(t, err)
		}
		st.overlaps = max(st.overlaps, overlappingPairs(isotsdbSpans(db.Blocks())))
	}
	refs := make([]tsdb.SeriesRef, len(w.sets))
	for c, commit := range w.commits {
		end := lastBlockEnd(db.Blocks())
		app := db.Appender(ctx)
		for _, s := range commit {
			var err error
			if s.h == nil && s.fh == nil {
				refs[s.series], err = app.Append(refs[s.series], toOurLabels(w.sets[s.series]), s.t, s.f)
			} else {
				refs[s.series], err = app.AppendHistogram(refs[s.series], toOurLabels(w.sets[s.series]), s.t, s.h, s.fh)
			}
			require.NoError(t, err, "commit %d: append %s at %d", c, w.sets[s.series], s.t)
			if s.t < end && s.t < lbBase+int64(c-1)*lbStep {
				st.behind++
			}
		}
		require.NoError(t, app.Commit())
		if c%lbCompaction == lbCompaction-1 {
			compact()
		}
	}
	compact()
	for _, b := range db.Blocks() {
		var ps [][2]int64
		for _, p := range b.Compaction.Parents {
			ps = append(ps, [2]int64{p.MinTime, p.MaxTime})
		}
		if parentsOverlap(ps) {
			st.merged++
		}
	}
	return st
}

// writePrometheusLB feeds w to Prometheus's DB in dir, merging
// overlapping blocks (Prometheus's default) or not.
func writePrometheusLB(t *testing.T, dir string, w *lbWorkload, merge bool) lbFeedStats {
	t.Helper()
	ctx := context.Background()
	opts := promtsdb.DefaultOptions()
	opts.MinBlockDuration = lbBlock.Milliseconds()
	opts.MaxBlockDuration = lbBlock.Milliseconds()
	opts.OutOfOrderTimeWindow = lbWindow.Milliseconds()
	opts.EnableOverlappingCompaction = merge
	opts.WALSegmentSize = 256 << 10
	db, err := promtsdb.Open(dir, nil, nil, opts, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	db.DisableCompactions() // compactions when the feed says
	var st lbFeedStats
	compact := func() {
		require.NoError(t, db.Compact(ctx))
		st.overlaps = max(st.overlaps, overlappingPairs(promSpans(db.Blocks())))
	}
	refs := make([]storage.SeriesRef, len(w.sets))
	for c, commit := range w.commits {
		mint := db.Head().MinTime()
		app := db.Appender(ctx)
		for _, s := range commit {
			var err error
			switch {
			case s.h != nil:
				refs[s.series], err = app.AppendHistogram(refs[s.series], w.sets[s.series], s.t, promstorage.ToPromHistogram(s.h), nil)
			case s.fh != nil:
				refs[s.series], err = app.AppendHistogram(refs[s.series], w.sets[s.series], s.t, nil, promstorage.ToPromFloatHistogram(s.fh))
			default:
				refs[s.series], err = app.Append(refs[s.series], w.sets[s.series], s.t, s.f)
			}
			require.NoError(t, err, "commit %d: append %s at %d", c, w.sets[s.series], s.t)
			if s.t < mint && s.t < lbBase+int64(c-1)*lbStep {
				st.behind++
			}
		}
		require.NoError(t, app.Commit())
		if c%lbCompaction == lbCompaction-1 {
			compact()
		}
	}
	compact()
	for _, b := range db.Blocks() {
		var ps [][2]int64
		for _, p := range b.Meta().Compaction.Parents {
			ps = append(ps, [2]int64{p.MinTime, p.MaxTime})
		}
		if parentsOverlap(ps) {
			st.merged++
		}
	}
	return st
}

// readBoth reads dir with Prometheus's OpenDBReadOnly and isotsdb's
// OpenReadOnly and requires both to return what was written, and the same
// samples of the blocks: the in-order ones exactly (but for counter-reset
// hints Prometheus's querier forgets where it merges blocks, see
// requireSameLines), the late ones by value (canon). A late sample of the
// blocks can have a second copy in each reader's head: the writer's WAL
// (isotsdb's replay takes the samples of the WAL before the head's range
// as late ones while the window is on) or WBL (Prometheus's) keeps it
// until a checkpoint or truncation removes its segment. Each head encodes
// its own chunks, and each reader picks one of two equal copies, so their
// empty buckets and hints may differ. The samples after the blocks are
// compared as what was written only, for the same reason. It returns the
// number of samples of the blocks compared, of those compared by value
// and of hints forgotten.
func readBoth(t *testing.T, dir string, w *lbWorkload, wantBlocks int) (samples, byValue, forgotten int) {
	t.Helper()
	pdb, err := promtsdb.OpenDBReadOnly(dir, "", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pdb.Close()) }()
	pblocks, err := pdb.Blocks()
	require.NoError(t, err)
	require.Len(t, pblocks, wantBlocks, "blocks Prometheus opened")
	blocksEnd := int64(math.MinInt64)
	for _, b := range pblocks {
		blocksEnd = max(blocksEnd, b.Meta().MaxTime)
	}
	q, err := pdb.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	// One querier only: a second one of a DBReadOnly reloads its blocks
	// and waits, in Close, for the readers of the first.
	promAll, promLines := readExact(t, q)
	promCanon := readCanon(t, q)

	db, err := tsdb.OpenReadOnly(dir, nil, lbOptions(nil))
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.Len(t, db.Blocks(), wantBlocks, "blocks isotsdb opened")
	ourAll, ourLines := isotsdbAsProm(t, db, math.MinInt64, math.MaxInt64)
	ourCanon := isotsdbCanon(t, db)

	requireSameLines(t, "what was written, Prometheus", "model", w.lines, "Prometheus", promLines, nil)
	requireSameLines(t, "what was written, isotsdb", "model", w.lines, "isotsdb", ourLines, nil)
	promExact := inRange(lateByValue(t, promAll, promCanon, w.lateAt, nil), math.MinInt64, blocksEnd-1)
	ourExact := inRange(lateByValue(t, ourAll, ourCanon, w.lateAt, &byValue), math.MinInt64, blocksEnd-1)
	requireSameLines(t, "samples of the blocks", "isotsdb", ourExact, "Prometheus", promExact, &forgotten)
	for _, ls := range promExact {
		samples += len(ls)
	}
	require.Equal(t, len(inRange(w.lines, math.MinInt64, blocksEnd-1)), len(promExact), "series of the blocks")
	want := 0
	for _, ls := range inRange(w.lines, math.MinInt64, blocksEnd-1) {
		want += len(ls)
	}
	require.Equal(t, want, samples, "samples of the blocks compared")
	require.Greater(t, samples, lbSeries*lbScrapes*3/4, "samples of the blocks compared")
	require.Less(t, byValue, samples/4, "samples of the blocks compared by value")
	return samples, byValue, forgotten
}

// lateByValue returns exact with the descriptions of the late samples (by
// lateAt) replaced by their canon, taken from canon (the same reader's
// samples in the same order); it adds to *n, if not nil, the number
// replaced.
func lateByValue(t *testing.T, exact, canon map[string][]string, lateAt map[string]map[int64]bool, n *int) map[string][]string {
	t.Helper()
	out := make(map[string][]string, len(exact))
	for k, ls := range exact {
		cs := canon[k]
		require.Len(t, cs, len(ls), "series %s read twice", k)
		mixed := make([]string, len(ls))
		for i, l := range ls {
			var ts int64
			_, err := fmt.Sscan(l, &ts)
			require.NoError(t, err, l)
			mixed[i] = l
			if lateAt[k][ts] {
				mixed[i] = cs[i]
				if n != nil {
					*n++
				}
			}
		}
		out[k] = mixed
	}
	return out
}

// requireCheckWarnsOnly runs isotsdb's check on dir and requires no error,
// and as many overlap warnings as pairs of blocks overlap (at least).
func requireCheckWarnsOnly(t *testing.T, dir string, overlaps int) {
	t.Helper()
	rep, err := check.Dir(vfs.OS(), dir)
	require.NoError(t, err)
	require.NoError(t, rep.Err())
	n := 0
	for _, p := range rep.Problems {
		if strings.Contains(p.String(), "overlaps block") {
			n++
		}
	}
	if overlaps > 0 {
		require.Positive(t, n, "check reported no overlap")
	} else {
		require.Zero(t, n, "check reported overlaps")
	}
	t.Logf("check %s: %d warnings (%d overlaps), %d blocks", filepath.Base(dir), rep.Count(check.Warning), n, len(rep.Blocks))
}

// countBlocksIn returns the blocks of dir and the pairs of them that
// overlap, as isotsdb's read-only open sees them.
func countBlocksIn(t *testing.T, dir string) (blocks, overlaps int) {
	t.Helper()
	db, err := tsdb.OpenReadOnly(dir, nil, lbOptions(nil))
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	bs := db.Blocks()
	return len(bs), overlappingPairs(isotsdbSpans(bs))
}

// testPrometheusReadsIsotsdbLB: isotsdb writes late samples behind its
// head's range; Prometheus reads its overlapping blocks, then the blocks
// isotsdb merged them into.
func testPrometheusReadsIsotsdbLB(t *testing.T, mx *matrix) {
	const direction = directionLateBlocks + ": Prometheus reads isotsdb"
	w := buildLBWorkload()
	require.Greater(t, w.late, 1000, "late samples")
	dir := t.TempDir()
	fsys := &mergeRefusingFS{FS: vfs.OS()}
	fsys.refuse.Store(true)
	if !mx.check(t, direction, "unmerged", "isotsdb writes, block compaction refused", func(t *testing.T) {
		start := time.Now()
		st := writeIsotsdbLB(t, dir, w, fsys)
		t.Logf("isotsdb: %d of %d late samples accepted behind the head's range, %d overlapping pairs of blocks, %d merges refused (%s)",
			st.behind, w.late, st.overlaps, fsys.refused.Load(), time.Since(start).Round(time.Millisecond))
		require.Greater(t, st.behind, w.late/3, "late samples behind the head's range")
		require.Positive(t, fsys.refused.Load(), "no block compaction refused")
	}) {
		return
	}
	blocks, overlaps := countBlocksIn(t, dir)
	t.Logf("unmerged: %d blocks, %d overlapping pairs", blocks, overlaps)
	mx.check(t, direction, "unmerged", "meta.json with isotsdb's WAL mark", func(t *testing.T) {
		// Prometheus reads blocks whose meta.json has isotsdb's field
		// (below): it decodes meta.json into a struct, ignoring the field.
		metas, err := filepath.Glob(filepath.Join(dir, "*", "meta.json"))
		require.NoError(t, err)
		marked := 0
		for _, m := range metas {
			b, err := os.ReadFile(m)
			require.NoError(t, err)
			if strings.Contains(string(b), `"walMark"`) {
				marked++
			}
		}
		require.Positive(t, marked, "blocks with a WAL mark")
	})
	mx.check(t, direction, "unmerged", "overlapping blocks left", func(t *testing.T) {
		require.Positive(t, overlaps, "no overlapping blocks")
	})
	mx.check(t, direction, "unmerged", "check: warnings only", func(t *testing.T) {
		requireCheckWarnsOnly(t, dir, overlaps)
	})
	mx.check(t, direction, "unmerged", "Prometheus reads what isotsdb reads", func(t *testing.T) {
		n, byValue, forgotten := readBoth(t, dir, w, blocks)
		t.Logf("unmerged: %d samples identical (%d late ones by value), %d with a counter-reset hint Prometheus forgot", n, byValue, forgotten)
	})

	// isotsdb reopens the directory and merges the overlapping blocks.
	if !mx.check(t, direction, "merged", "isotsdb merges the overlapping blocks", func(t *testing.T) {
		db, err := tsdb.Open(dir, nil, nil, lbOptions(nil))
		require.NoError(t, err)
		defer func() { require.NoError(t, db.Close()) }()
		require.NoError(t, db.Compact(context.Background()))
		require.Zero(t, overlappingPairs(isotsdbSpans(db.Blocks())), "overlapping blocks left")
		merged := 0
		for _, b := range db.Blocks() {
			var ps [][2]int64
			for _, p := range b.Compaction.Parents {
				ps = append(ps, [2]int64{p.MinTime, p.MaxTime})
			}
			if parentsOverlap(ps) {
				merged++
			}
		}
		t.Logf("isotsdb merged the overlapping blocks into %d blocks", merged)
		require.Positive(t, merged)
	}) {
		return
	}
	blocks, overlaps = countBlocksIn(t, dir)
	mx.check(t, direction, "merged", "check: warnings only", func(t *testing.T) {
		requireCheckWarnsOnly(t, dir, overlaps)
	})
	mx.check(t, direction, "merged", "Prometheus reads what isotsdb reads", func(t *testing.T) {
		n, byValue, forgotten := readBoth(t, dir, w, blocks)
		t.Logf("merged: %d blocks, %d samples identical (%d late ones by value), %d with a counter-reset hint Prometheus forgot", blocks, n, byValue, forgotten)
	})
}

// testIsotsdbReadsPrometheusLB: Prometheus writes out-of-order samples
// behind its head's range; isotsdb reads its out-of-order blocks,
// overlapping the in-order ones (merge false) or merged with them.
func testIsotsdbReadsPrometheusLB(t *testing.T, mx *matrix, merge bool) {
	const direction = directionLateBlocks + ": isotsdb reads Prometheus"
	variant := "unmerged"
	if merge {
		variant = "merged"
	}
	w := buildLBWorkload()
	dir := t.TempDir()
	if !mx.check(t, direction, variant, "Prometheus writes", func(t *testing.T) {
		start := time.Now()
		st := writePrometheusLB(t, dir, w, merge)
		t.Logf("Prometheus: %d of %d late samples accepted behind the head's range, at most %d overlapping pairs of blocks after a Compact, %d blocks merged from overlapping ones (%s)",
			st.behind, w.late, st.overlaps, st.merged, time.Since(start).Round(time.Millisecond))
		require.Greater(t, st.behind, w.late/3, "late samples behind the head's range")
		if merge {
			require.Positive(t, st.merged, "no blocks merged from overlapping ones")
		} else {
			require.Positive(t, st.overlaps, "no overlapping blocks")
		}
	}) {
		return
	}
	blocks, overlaps := countBlocksIn(t, dir)
	t.Logf("%s: %d blocks, %d overlapping pairs", variant, blocks, overlaps)
	mx.check(t, direction, variant, "blocks as expected", func(t *testing.T) {
		if merge {
			require.Zero(t, overlaps, "overlapping blocks left")
		} else {
			require.Positive(t, overlaps, "no overlapping blocks")
		}
	})
	mx.check(t, direction, variant, "check: warnings only", func(t *testing.T) {
		requireCheckWarnsOnly(t, dir, overlaps)
	})
	mx.check(t, direction, variant, "isotsdb reads what Prometheus reads", func(t *testing.T) {
		n, byValue, forgotten := readBoth(t, dir, w, blocks)
		t.Logf("%s: %d samples identical (%d late ones by value), %d with a counter-reset hint Prometheus forgot", variant, n, byValue, forgotten)
	})
}

// TestInteropLateBlocks runs the out-of-order block checks and logs their
// matrix.
func TestInteropLateBlocks(t *testing.T) {
	mx := &matrix{}
	t.Cleanup(func() { t.Logf("out-of-order blocks matrix:\n%s", mx) })
	t.Run("prometheus-reads-isotsdb", func(t *testing.T) {
		t.Parallel()
		testPrometheusReadsIsotsdbLB(t, mx)
	})
	for _, merge := range []bool{false, true} {
		t.Run(fmt.Sprintf("isotsdb-reads-prometheus/merge=%v", merge), func(t *testing.T) {
			t.Parallel()
			testIsotsdbReadsPrometheusLB(t, mx, merge)
		})
	}
}
