package tsdb

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// mixedWorkload is a set of series that take integer histograms, float
// (gauge) histograms, custom-bucket histograms, and a series that switches
// between floats, integer and float histograms every 50 samples, with the
// events histogramtest.Gen makes (counter resets, schema changes, new
// buckets, stale markers).
type mixedWorkload struct {
	names []string
	gens  map[string]*histogramtest.Gen
	want  map[string][]hsample
}

func newMixedWorkload() *mixedWorkload {
	return &mixedWorkload{
		names: []string{"fh", "h", "mix", "nhcb"},
		gens: map[string]*histogramtest.Gen{
			"h":    histogramtest.NewGen(11, false, false),
			"fh":   histogramtest.NewGen(12, false, true),
			"nhcb": histogramtest.NewGen(13, true, false),
			"mix":  histogramtest.NewGen(14, false, false),
		},
		want: map[string][]hsample{},
	}
}

// sample returns the sample of series name in round r.
func (w *mixedWorkload) sample(name string, r int) hsample {
	t := int64(r+1) * 15000
	_, h := w.gens[name].Next()
	kind := name
	if name == "mix" {
		kind = []string{"f", "h", "fh"}[r/50%3]
	}
	switch kind {
	case "fh":
		return hsample{t: t, fh: h.ToFloat()}
	case "f":
		return hsample{t: t, f: float64(r)}
	}
	return hsample{t: t, h: h}
}

// commit appends round r of every series as one transaction.
func (w *mixedWorkload) commit(t *testing.T, db *DB, r int) {
	t.Helper()
	app := db.Appender(ctx)
	w.appendRound(t, app, r)
	require.NoError(t, app.Commit())
}

// appendRound appends round r of every series to app.
func (w *mixedWorkload) appendRound(t *testing.T, app Appender, r int) {
	t.Helper()
	for _, name := range w.names {
		s := w.sample(name, r)
		_, err := app.AppendST(0, labels.FromStrings("__name__", name), s.st, s.t, s.f, s.h, s.fh)
		require.NoError(t, err, "%s round %d", name, r)
		w.want[name] = append(w.want[name], s)
	}
}

func (w *mixedWorkload) requireAll(t *testing.T, db *DB, what string) {
	t.Helper()
	got := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
	require.Len(t, got, len(w.names), what)
	for _, name := range w.names {
		require.Equal(t, keys(w.want[name]), keys(got[name]), "%s: series %s", what, name)
	}
}

// TestHeadHistograms appends 5 h of mixed float and histogram samples and
// reads them back identical from the head, after a WAL replay, after the
// head was compacted into blocks, after another restart, from a snapshot,
// and after a deletion across blocks and head.
func TestHeadHistograms(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	w := newMixedWorkload()
	rounds := 5 * 240
	for r := range rounds {
		w.commit(t, db, r)
	}
	w.requireAll(t, db, "head")
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	w.requireAll(t, db, "after WAL replay")
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())
	var hist uint64
	for _, b := range db.Blocks() {
		hist += b.Stats.NumHistogramSamples
	}
	require.Positive(t, hist)
	w.requireAll(t, db, "after head compaction")
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	w.requireAll(t, db, "after compaction and restart")

	// More in the head, then a snapshot of blocks and head.
	for r := rounds; r < rounds+100; r++ {
		w.commit(t, db, r)
	}
	require.NoError(t, db.Snapshot("snap", true))
	snap, err := Open("snap", nil, nil, o)
	require.NoError(t, err)
	w.requireAll(t, snap, "snapshot")
	require.NoError(t, snap.Close())

	// Delete a range across a block and the head from the histogram
	// series; the rest stays.
	del := [2]int64{int64(rounds-200) * 15000, int64(rounds+50) * 15000}
	require.NoError(t, db.Delete(ctx, del[0], del[1], labels.MustNewMatcher(labels.MatchRegexp, "__name__", "h|fh")))
	for _, name := range []string{"h", "fh"} {
		w.want[name] = slices.DeleteFunc(w.want[name], func(s hsample) bool { return s.t >= del[0] && s.t <= del[1] })
	}
	w.requireAll(t, db, "after delete")
	require.NoError(t, db.CleanTombstones(ctx))
	w.requireAll(t, db, "after cleaning tombstones")
}

// TestAppendHistogramErrors: invalid histograms and float/histogram
// duplicates are rejected with typed errors without affecting the rest of
// the transaction; an identical re-append is accepted and changes nothing.
func TestAppendHistogramErrors(t *testing.T) {
	db, _ := openTestDB(t, nil)
	a, b := labels.FromStrings("__name__", "a"), labels.FromStrings("__name__", "b")
	good := crashHistogram(5)
	bad := crashHistogram(5)
	bad.Count = 4 // the zero bucket holds 5

	app := db.Appender(ctx)
	_, err := app.AppendHistogram(0, a, 1000, good, nil)
	require.NoError(t, err)
	_, err = app.AppendHistogram(0, a, 2000, bad, nil)
	require.ErrorIs(t, err, ErrInvalidSample)
	require.ErrorIs(t, err, histogram.ErrInvalid)
	_, err = app.AppendHistogram(0, a, 2000, nil, nil)
	require.ErrorIs(t, err, ErrInvalidSample)
	_, err = app.AppendHistogram(0, a, 2000, good, good.ToFloat())
	require.ErrorIs(t, err, ErrInvalidSample)
	_, err = app.Append(0, a, 1000, 1)
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "float after a pending histogram at the same time")
	_, err = app.AppendHistogram(0, a, 1000, nil, good.ToFloat())
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "float histogram after an integer one at the same time")
	_, err = app.AppendHistogram(0, a, 1000, good.Copy(), nil)
	require.NoError(t, err, "the same histogram again")
	_, err = app.Append(0, b, 1000, 7)
	require.NoError(t, err)
	_, err = app.AppendHistogram(0, b, 1000, good, nil)
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "histogram after a pending float at the same time")
	require.NoError(t, app.Commit())

	app = db.Appender(ctx)
	_, err = app.Append(0, a, 1000, 1)
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "float after a committed histogram")
	_, err = app.AppendHistogram(0, b, 1000, good, nil)
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp, "histogram after a committed float")
	_, err = app.AppendHistogram(0, a, 1000, crashHistogram(5), nil)
	require.NoError(t, err, "the committed histogram again")
	_, err = app.AppendHistogram(0, a, 500, good, nil)
	require.ErrorIs(t, err, ErrOutOfOrderSample)
	require.NoError(t, app.Commit())

	got := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
	require.Equal(t, []string{hsample{t: 1000, h: good}.key()}, keys(got["a"]))
	require.Equal(t, []string{hsample{t: 1000, f: 7}.key()}, keys(got["b"]))
}

// TestHistogramCommitIsolation pauses commits that write floats, integer
// and float histograms after each of their samples and checks that a
// query started meanwhile sees none of the commit, and one started after
// it sees all of it.
func TestHistogramCommitIsolation(t *testing.T) {
	db, _ := openTestDB(t, nil)
	gate := newCommitGate(t, db.head)
	w := newMixedWorkload()
	for r := range 60 {
		w.commit(t, db, r)
	}
	before := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
	for pauseAt := range len(w.names) {
		app := db.Appender(ctx)
		w.appendRound(t, app, 60+pauseAt)
		pc := gate.commitPaused(app, pauseAt)
		released := false
		defer func() {
			if !released { // a failed check: let Close finish
				close(pc.release)
			}
		}()
		during := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
		for _, name := range w.names {
			require.Equal(t, keys(before[name]), keys(during[name]), "paused before sample %d: %s", pauseAt, name)
		}
		close(pc.release)
		released = true
		require.NoError(t, <-pc.done)
		w.requireAll(t, db, fmt.Sprintf("after commit %d", pauseAt))
		before = readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
	}
}

// TestHeadHistogramChunkCuts checks the head's histogram chunks: a change
// of sample kind always cuts, and histogram chunks are cut by size near
// chunks.TargetBytesPerHistogramChunk rather than every 120 samples.
func TestHeadHistogramChunkCuts(t *testing.T) {
	db, _ := openTestDB(t, &Options{MinBlockDuration: 2 * time.Hour})
	g := histogramtest.NewGen(21, false, false)
	g.ResetPct, g.SchemaPct, g.StalePct, g.HintPct = 0, 0, 0, 0
	lset := labels.FromStrings("__name__", "x")
	app := db.Appender(ctx)
	for i := range 400 {
		_, h := g.Next()
		_, err := app.AppendHistogram(0, lset, int64(i+1)*15000, h, nil)
		require.NoError(t, err)
	}
	_, err := app.Append(0, lset, 401*15000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	s := db.head.series.getByRef(1)
	require.NotNil(t, s)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.chunks)
	require.Greater(t, n, 2)
	for i, mc := range s.chunks[:n-1] {
		require.Equal(t, chunks.EncHistogram, mc.chunk.Encoding(), "chunk %d", i)
		if i < n-2 {
			require.GreaterOrEqual(t, mc.chunk.NumSamples(), chunks.MinSamplesPerHistogramChunk, "chunk %d", i)
			require.Less(t, len(mc.chunk.Bytes()), 3*chunks.TargetBytesPerHistogramChunk, "chunk %d", i)
		}
	}
	require.Equal(t, chunks.EncXOR, s.chunks[n-1].chunk.Encoding(), "the float cut a new chunk")
	require.Equal(t, 1, s.chunks[n-1].chunk.NumSamples())
}

// TestHistogramReadWhileWrite has a writer commit rounds of histograms
// that often bring new buckets (so the open chunk is recoded and replaced)
// and cross chunk cuts, while readers query the head: every read sees
// whole rounds only (the same number of samples in every series), and
// every histogram read is valid. Under the race detector it checks that
// readers copy open histogram chunks safely.
func TestHistogramReadWhileWrite(t *testing.T) {
	db, _ := openTestDB(t, nil)
	const nSeries = 20
	rounds := 3000
	if raceEnabled {
		rounds = 1000
	}
	lsets := make([]labels.Labels, nSeries)
	gens := make([]*histogramtest.Gen, nSeries)
	for i := range lsets {
		lsets[i] = labels.FromStrings("__name__", "rw", "i", fmt.Sprint(i))
		gens[i] = histogramtest.NewGen(uint64(100+i), i%3 == 2, i%4 == 3)
		gens[i].NewBucketPct = 30
	}
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(done)
		for r := range rounds {
			app := db.Appender(ctx)
			for i, l := range lsets {
				_, h := gens[i].Next()
				var err error
				if i%2 == 0 {
					_, err = app.AppendHistogram(0, l, int64(r+1)*15000, h, nil)
				} else {
					_, err = app.AppendHistogram(0, l, int64(r+1)*15000, nil, h.ToFloat())
				}
				if err != nil {
					errc <- err
					return
				}
			}
			if err := app.Commit(); err != nil {
				errc <- err
				return
			}
		}
	}()
	m := labels.MustNewMatcher(labels.MatchEqual, "__name__", "rw")
	reads := 0
	for stop := false; !stop; reads++ {
		select {
		case <-done:
			stop = true
		default:
		}
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		ss := q.Select(ctx, m)
		var it chunks.Iterator
		counts := map[int]bool{}
		for ss.Next() {
			it = ss.At().Iterator(it)
			n := 0
			for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
				_, fh := it.AtFloatHistogram(nil)
				if math.Float64bits(fh.Sum) != staleNaNBits {
					require.NoError(t, fh.Validate(), "%s sample %d", ss.At().Labels(), n)
				}
				n++
			}
			require.NoError(t, it.Err())
			counts[n] = true
		}
		require.NoError(t, ss.Err())
		require.NoError(t, q.Close())
		require.LessOrEqual(t, len(counts), 1, "series of one read hold different numbers of samples: %v", counts)
	}
	select {
	case err := <-errc:
		require.NoError(t, err)
	default:
	}
	t.Logf("%d reads during %d commits", reads, rounds)
}

// TestStartTimestamps appends floats, integer and float histograms with
// start times (none at first, then a start time that is reset every 40
// samples, then none again) and reads every start time back with its
// sample from the head, after a WAL replay, from blocks after compaction
// and after a restart; ST chunk encodings are written to blocks.
func TestStartTimestamps(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	gen := histogramtest.NewGen(31, false, false)
	gen.ResetPct, gen.SchemaPct = 0, 0
	want := map[string][]hsample{}
	rounds := 5 * 240
	for r := range rounds {
		ts := int64(r+1) * 15000
		var st int64
		if r >= 100 && r < rounds-100 {
			st = int64(r/40*40+1) * 15000
		}
		_, h := gen.Next()
		samples := map[string]hsample{
			"f":  {t: ts, st: st, f: float64(r)},
			"h":  {t: ts, st: st, h: h},
			"fh": {t: ts, st: st, fh: h.ToFloat()},
		}
		app := db.Appender(ctx)
		for _, name := range []string{"f", "fh", "h"} {
			s := samples[name]
			_, err := app.AppendST(0, labels.FromStrings("__name__", name), s.st, s.t, s.f, s.h, s.fh)
			require.NoError(t, err)
			want[name] = append(want[name], s)
		}
		require.NoError(t, app.Commit())
	}
	requireAll := func(what string) {
		t.Helper()
		got := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
		for name, ss := range want {
			require.Equal(t, keys(ss), keys(got[name]), "%s: %s", what, name)
		}
	}
	requireAll("head")
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	requireAll("after WAL replay")
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())
	requireAll("after compaction")
	require.NoError(t, db.Delete(ctx, 200*15000, 210*15000, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+")))
	require.NoError(t, db.CleanTombstones(ctx))
	for name := range want {
		want[name] = slices.DeleteFunc(want[name], func(s hsample) bool { return s.t >= 200*15000 && s.t <= 210*15000 })
	}
	requireAll("after delete and re-encoding")
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	requireAll("after restart")
	encs := map[chunks.Encoding]int{}
	for _, b := range db.Blocks() {
		require.NoError(t, check.BlockChunks(fsys, filepath.Join("data", b.ULID.String()), func(_ labels.Labels, chks []check.ChunkInfo) error {
			for _, c := range chks {
				encs[c.Encoding]++
			}
			return nil
		}))
	}
	for _, e := range []chunks.Encoding{chunks.EncXOR, chunks.EncXOR2, chunks.EncHistogram, chunks.EncHistogramST, chunks.EncFloatHistogram, chunks.EncFloatHistogramST} {
		require.Positive(t, encs[e], "%s chunks in blocks: %v", e, encs)
	}
	for r := rounds; r < rounds+10; r++ { // a WAL with V2 records for check.Dir
		app := db.Appender(ctx)
		_, err := app.AppendST(0, labels.FromStrings("__name__", "f"), 1, int64(r+1)*15000, 1, nil, nil)
		require.NoError(t, err)
		_, err = app.AppendST(0, labels.FromStrings("__name__", "h"), 1, int64(r+1)*15000, 0, crashHistogram(r), nil)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Close())
	rep, err := check.Dir(fsys, "data")
	require.NoError(t, err)
	require.NoError(t, rep.Err(), "consistency check")
}

// TestHeadHistogramAppenderCutKeepsPrediction checks the chunk-end rule the
// head shares with Prometheus's: a chunk the chunk appender cuts (here at a
// counter reset) inherits the series' prediction state, so after a chunk
// whose end time was predicted from its size the new chunk is not
// predicted again and runs to its range's end (or is cut by size). The
// chunk ends, and so the layouts recoded chunks return, are then
// Prometheus's; prom/storage's TestHeadHistogramsMatchPrometheus compares
// them sample for sample.
func TestHeadHistogramAppenderCutKeepsPrediction(t *testing.T) {
	db, _ := openTestDB(t, &Options{MinBlockDuration: 2 * time.Hour})
	g := histogramtest.NewGen(21, false, false)
	g.ResetPct, g.SchemaPct, g.StalePct, g.HintPct, g.NewBucketPct = 0, 0, 0, 0, 0
	lset := labels.FromStrings("__name__", "x")
	predicted := func() bool {
		s := db.head.series.getByRef(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.x.predicted
	}
	// Append until the first chunk's end time has been predicted.
	var (
		last *histogram.Histogram
		n    int64
	)
	for n == 0 || !predicted() {
		n++
		require.Less(t, n, int64(120), "no prediction")
		app := db.Appender(ctx)
		_, last = g.Next()
		_, err := app.AppendHistogram(0, lset, n*15000, last, nil)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	// A counter reset: the same schema and zero threshold, no counts.
	reset := &histogram.Histogram{Schema: last.Schema, ZeroThreshold: last.ZeroThreshold}
	resetT := (n + 1) * 15000
	app := db.Appender(ctx)
	_, err := app.AppendHistogram(0, lset, resetT, reset, nil)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	s := db.head.series.getByRef(1)
	require.NotNil(t, s)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.chunks, 2, "the counter reset cut a chunk")
	require.Equal(t, resetT, s.chunks[1].minTime)
	require.True(t, s.x.predicted, "the first chunk's end was predicted, and the state carries over")
	require.Equal(t, rangeEnd(resetT, db.head.chunkRange), s.nextAt, "the new chunk runs to its range's end")
}

// TestStaleMarkerAfterHistograms: a float stale marker appended to a series
// whose newest sample is a histogram is stored as a histogram stale marker
// of the same kind, as Prometheus's head stores it; so it is after a WAL
// replay. A stale marker after floats stays a float.
func TestStaleMarkerAfterHistograms(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	stale := math.Float64frombits(staleNaNBits)
	h := crashHistogram(3)
	app := db.Appender(ctx)
	for _, s := range []struct {
		name string
		h    *histogram.Histogram
		fh   *histogram.FloatHistogram
		v    float64
	}{{name: "h", h: h}, {name: "fh", fh: h.ToFloat()}, {name: "f", v: 1}} {
		lset := labels.FromStrings("__name__", s.name)
		_, err := app.AppendST(0, lset, 0, 1000, s.v, s.h, s.fh)
		require.NoError(t, err)
		_, err = app.Append(0, lset, 2000, stale)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	want := map[string][]string{
		"h":  {hsample{t: 1000, h: h}.key(), hsample{t: 2000, h: &histogram.Histogram{Sum: stale}}.key()},
		"fh": {hsample{t: 1000, fh: h.ToFloat()}.key(), hsample{t: 2000, fh: &histogram.FloatHistogram{Sum: stale}}.key()},
		"f":  {hsample{t: 1000, f: 1}.key(), hsample{t: 2000, f: stale}.key()},
	}
	requireStale := func(what string) {
		t.Helper()
		got := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
		for name, w := range want {
			require.Equal(t, w, keys(got[name]), "%s: %s", what, name)
		}
	}
	requireStale("head")
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	requireStale("after WAL replay")
}
