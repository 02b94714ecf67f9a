package tsdb

import (
	"bytes"
	"cmp"
	"log/slog"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/metricnames"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// wblSample is a sample read from a WBL: its series ref and time, and
// whether a WBLCopy record announced its record.
type wblSample struct {
	ref    uint64
	t      int64
	isCopy bool
}

// sortWBL sorts samples by ref, time and kind, for comparisons.
func sortWBL(samples []wblSample) {
	slices.SortFunc(samples, func(a, b wblSample) int {
		if c := cmp.Compare(a.ref, b.ref); c != 0 {
			return c
		}
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		switch {
		case a.isCopy == b.isCopy:
			return 0
		case a.isCopy:
			return 1
		}
		return -1
	})
}

// readWBLDir reads every record of the WBL in dir and fails the test unless
// it is well formed: every WBLCopy record is followed by as many sample
// records as it announces. It returns the samples and the number of
// WBLCopy runs.
func readWBLDir(t *testing.T, fsys vfs.FS, dir string) (samples []wblSample, runs int) {
	t.Helper()
	sr, err := wlog.NewSegmentsReader(fsys, dir)
	require.NoError(t, err)
	defer sr.Close()
	r := wlog.NewReader(sr)
	var dec record.Decoder
	left := 0
	for r.Next() {
		rec := r.Record()
		typ := record.RecordType(rec)
		if typ == record.WBLCopy {
			require.Zero(t, left, "a WBLCopy run interrupted by another")
			n, err := dec.WBLCopy(rec)
			require.NoError(t, err)
			left, runs = n, runs+1
			continue
		}
		isCopy := left > 0
		switch typ {
		case record.Samples, record.SamplesV2:
			ss, err := dec.Samples(rec, nil)
			require.NoError(t, err)
			for _, s := range ss {
				samples = append(samples, wblSample{s.Ref, s.T, isCopy})
			}
		case record.HistogramSamples, record.CustomBucketsHistogramSamples, record.HistogramSamplesV2:
			ss, err := dec.HistogramSamples(rec, nil)
			require.NoError(t, err)
			for _, s := range ss {
				samples = append(samples, wblSample{s.Ref, s.T, isCopy})
			}
		case record.FloatHistogramSamples, record.CustomBucketsFloatHistogramSamples, record.FloatHistogramSamplesV2:
			ss, err := dec.FloatHistogramSamples(rec, nil)
			require.NoError(t, err)
			for _, s := range ss {
				samples = append(samples, wblSample{s.Ref, s.T, isCopy})
			}
		case record.MmapMarkers:
		default:
			t.Fatalf("unexpected record type %s in the WBL", typ)
		}
		if left > 0 {
			left--
		}
	}
	require.NoError(t, r.Err(), "the WBL reads to its end")
	require.Zero(t, left, "the WBL ends inside a WBLCopy run")
	return samples, runs
}

// wblRecordTypes returns the types of the records in the WBL in dir.
func wblRecordTypes(t *testing.T, fsys vfs.FS, dir string) []record.Type {
	t.Helper()
	sr, err := wlog.NewSegmentsReader(fsys, dir)
	require.NoError(t, err)
	defer sr.Close()
	r := wlog.NewReader(sr)
	var out []record.Type
	for r.Next() {
		out = append(out, record.RecordType(r.Record()))
	}
	require.NoError(t, r.Err())
	return out
}

// customHistogram is a custom-bucket histogram of count 6.
func customHistogram() *histogram.Histogram {
	return &histogram.Histogram{
		Schema: histogram.CustomBucketsSchema, Count: 6, Sum: 20, CustomValues: []float64{1, 2, 5},
		PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}, {Offset: 1, Length: 1}}, PositiveBuckets: []int64{1, 2, -1},
	}
}

// wblTestOptions: an in-memory DB with a 1h out-of-order window.
func wblTestOptions(fsys vfs.FS) *Options {
	o := DefaultOptions()
	o.FS = fsys
	o.OutOfOrderTimeWindow = time.Hour
	return o
}

// appendKinds commits, at time ts, a float to "f", an integer histogram to
// "h", a float histogram to "fh" and a custom-bucket histogram to "cb".
func appendKinds(t *testing.T, db *DB, ts int64, v float64) {
	t.Helper()
	app := db.Appender(ctx)
	_, err := app.Append(0, labels.FromStrings("__name__", "f"), ts, v)
	require.NoError(t, err)
	_, err = app.AppendHistogram(0, labels.FromStrings("__name__", "h"), ts, crashHistogram(int(v)), nil)
	require.NoError(t, err)
	_, err = app.AppendHistogram(0, labels.FromStrings("__name__", "fh"), ts, nil, crashHistogram(int(v)).ToFloat())
	require.NoError(t, err)
	_, err = app.AppendHistogram(0, labels.FromStrings("__name__", "cb"), ts, customHistogram(), nil)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
}

// TestWBLWrite: a commit with late samples logs them, and only them, to the
// WBL after a WBLCopy record that announces its sample records, in
// Prometheus's record types (custom-bucket histograms in their own); a
// commit without late samples does not touch the WBL.
func TestWBLWrite(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, _ := openTestDB(t, wblTestOptions(fsys))
	require.NotNil(t, db.head.wbl.Load(), "the window is on: the DB has a WBL")

	appendKinds(t, db, 1000, 1)
	require.Empty(t, wblRecordTypes(t, fsys, "data/wbl"), "in-order samples only")

	appendKinds(t, db, 500, 2) // late in every series
	require.Equal(t, []record.Type{record.WBLCopy, record.Samples, record.HistogramSamples,
		record.CustomBucketsHistogramSamples, record.FloatHistogramSamples}, wblRecordTypes(t, fsys, "data/wbl"))
	got, runs := readWBLDir(t, fsys, "data/wbl")
	require.Equal(t, 1, runs)
	require.Len(t, got, 4)
	for _, s := range got {
		require.Equal(t, int64(500), s.t)
		require.True(t, s.isCopy)
	}

	before, err := fsys.ReadFile("data/wbl/00000000")
	require.NoError(t, err)
	appendKinds(t, db, 2000, 3) // in order again
	after, err := fsys.ReadFile("data/wbl/00000000")
	require.NoError(t, err)
	require.Equal(t, before, after, "a commit without late samples costs the WBL nothing")

	// A commit of in-order and late samples logs the late ones only.
	app := db.Appender(ctx)
	_, err = app.Append(0, labels.FromStrings("__name__", "f"), 3000, 4)
	require.NoError(t, err)
	_, err = app.Append(0, labels.FromStrings("__name__", "f"), 700, 5)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	got, runs = readWBLDir(t, fsys, "data/wbl")
	require.Equal(t, 2, runs)
	require.Len(t, got, 5)
	require.Equal(t, int64(700), got[4].t)
}

// TestWBLNoWindow: without the window and without a WBL on disk the DB
// opens none; turning the window on at run time opens one, which the next
// Open opens again even with the window off.
func TestWBLNoWindow(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	require.Nil(t, db.head.wbl.Load())
	_, err = fsys.Stat("data/wbl")
	require.Error(t, err, "no WBL directory without the window")
	require.NoError(t, db.SetOutOfOrderTimeWindow(time.Hour))
	require.NotNil(t, db.head.wbl.Load())
	appendKinds(t, db, 1000, 1)
	appendKinds(t, db, 500, 2)
	require.NoError(t, db.Close())
	_, runs := readWBLDir(t, fsys, "data/wbl")
	require.Equal(t, 1, runs)

	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	require.NotNil(t, db.head.wbl.Load(), "a WBL with segments is opened whatever the window")
	require.NoError(t, db.Close())
}

// TestLateReplayWindowOff: late samples written with the window on are all
// there after a reopen with the window off (they were accepted when they
// were written), and after one with the window on.
func TestLateReplayWindowOff(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	for i, ts := range []int64{1000, 2000, 500, 1500, 3000, 100, 2500} {
		appendKinds(t, db, ts, float64(i+1))
	}
	want := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
	require.Len(t, want["f"], 7)
	require.Positive(t, counterValue(t, db.head.metrics.lateAppended))
	require.NoError(t, db.Close())

	for _, window := range []time.Duration{0, time.Hour} {
		o := wblTestOptions(fsys)
		o.OutOfOrderTimeWindow = window
		db, err := Open("data", nil, nil, o)
		require.NoError(t, err)
		got := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
		require.Len(t, got, len(want))
		for name := range want {
			require.Equal(t, keys(want[name]), keys(got[name]), "series %s after a reopen with window %v", name, window)
		}
		require.NoError(t, db.Close())
	}
}

// TestWBLForeignRecords: WBL records without a WBLCopy record (as
// Prometheus writes them) are replayed as late samples, a sample the WAL
// has already is a no-op, records of unknown series are counted, mmap
// markers are ignored, and records a WBLCopy announces are skipped (the
// WAL is authoritative: a copy whose sample is not in the WAL is not
// applied).
func TestWBLForeignRecords(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	app := db.Appender(ctx)
	ref, err := app.Append(0, labels.FromStrings("__name__", "f"), 1000, 1)
	require.NoError(t, err)
	_, err = app.Append(ref, labels.FromStrings("__name__", "f"), 2000, 2)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())

	w, err := wlog.Open(nil, nil, fsys, "data/wbl", wlog.Options{})
	require.NoError(t, err)
	var enc record.Encoder
	r := uint64(ref)
	require.NoError(t, w.Log(
		enc.Samples([]record.RefSample{{Ref: r, T: 1500, V: 15}, {Ref: r, T: 1000, V: 1}, {Ref: 9999, T: 1200, V: 3}}, nil),
		enc.MmapMarkers([]record.RefMmapMarker{{Ref: r, MmapRef: 1<<32 | 8}}, nil),
		enc.WBLCopy(1, nil),
		enc.Samples([]record.RefSample{{Ref: r, T: 1600, V: 16}}, nil),
	))
	require.NoError(t, w.Close())

	o := wblTestOptions(fsys)
	o.OutOfOrderTimeWindow = 0
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	got := readSeries(t, db, math.MinInt64, math.MaxInt64, "f")
	require.Equal(t, []string{
		hsample{t: 1000, f: 1}.key(), hsample{t: 1500, f: 15}.key(), hsample{t: 2000, f: 2}.key(),
	}, keys(got["f"]))
	require.Equal(t, 1.0, counterValue(t, db.walMetrics.wblUnknownRefs))
	require.Zero(t, counterValue(t, db.walMetrics.unknownRefs))
}

// TestWBLTornCopyRun: a WBL that ends inside a WBLCopy run (a torn write)
// is cut before the run's WBLCopy record; Open succeeds, the WAL's
// samples are all there, and the WBL is well formed and writable.
func TestWBLTornCopyRun(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	appendKinds(t, db, 1000, 1)
	appendKinds(t, db, 500, 2)
	want := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
	require.NoError(t, db.Close())

	w, err := wlog.Open(nil, nil, fsys, "data/wbl", wlog.Options{})
	require.NoError(t, err)
	var enc record.Encoder
	require.NoError(t, w.Log(enc.WBLCopy(3, nil), enc.Samples([]record.RefSample{{Ref: 1, T: 600, V: 6}}, nil)))
	require.NoError(t, w.Close())

	db, err = Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	got := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
	for name := range want {
		require.Equal(t, keys(want[name]), keys(got[name]), "series %s", name)
	}
	appendKinds(t, db, 400, 3)
	require.NoError(t, db.Close())
	samples, runs := readWBLDir(t, fsys, "data/wbl")
	require.Equal(t, 2, runs, "the torn run is gone, the new one is there")
	require.Len(t, samples, 8)
	for _, s := range samples {
		require.NotEqual(t, int64(600), s.t)
	}
}

// TestWBLDamage: a WBL with a flipped byte in the middle, or a record that
// passes its checksum but does not decode, is repaired (cut before the
// damage) and counted; Open succeeds with every sample of the WAL.
func TestWBLDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, fsys *vfs.MemFS)
	}{
		{"flipped byte", func(t *testing.T, fsys *vfs.MemFS) {
			b, err := fsys.ReadFile("data/wbl/00000000")
			require.NoError(t, err)
			b[len(b)/2] ^= 0x40
			require.NoError(t, fsys.WriteFile("data/wbl/00000000", b, 0o666))
		}},
		{"undecodable record", func(t *testing.T, fsys *vfs.MemFS) {
			w, err := wlog.Open(nil, nil, fsys, "data/wbl", wlog.Options{})
			require.NoError(t, err)
			require.NoError(t, w.Log([]byte{byte(record.MmapMarkers), 1, 2, 3}))
			require.NoError(t, w.Close())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			db, err := Open("data", nil, nil, wblTestOptions(fsys))
			require.NoError(t, err)
			appendKinds(t, db, 1000, 1)
			for i := range 50 {
				appendKinds(t, db, int64(500+i), float64(i+2))
			}
			want := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
			require.NoError(t, db.Close())
			tc.damage(t, fsys)

			o := wblTestOptions(fsys)
			db, err = Open("data", nil, nil, o)
			require.NoError(t, err)
			got := readSeries(t, db, math.MinInt64, math.MaxInt64, ".+")
			for name := range want {
				require.Equal(t, keys(want[name]), keys(got[name]), "series %s", name)
			}
			require.NoError(t, db.Close())
			readWBLDir(t, fsys, "data/wbl")
		})
	}
}

// TestWBLSyncEveryCommit: with WALSyncEveryCommit a crash right after a
// commit keeps its WBL records too.
func TestWBLSyncEveryCommit(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := wblTestOptions(fsys)
	o.WALSyncEveryCommit = true
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	appendKinds(t, db, 1000, 1)
	appendKinds(t, db, 500, 2)
	crashed := fsys.Crash()
	require.NoError(t, db.Close())
	_, runs := readWBLDir(t, crashed, "data/wbl")
	require.Equal(t, 1, runs, "the commit's WBL records were synced")
}

// TestWBLTruncate: head truncations remove the WBL segments whose late
// samples all went into blocks, and keep every late sample still in the
// head: after each compaction the WBL holds every late sample at or after
// the head's mint, and a reopen returns every sample.
func TestWBLTruncate(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := wblTestOptions(fsys)
	o.MinBlockDuration = time.Hour
	o.OutOfOrderTimeWindow = 30 * time.Minute
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	const step = int64(time.Minute / time.Millisecond)
	lates := map[int64]bool{} // times of the late samples
	var ref SeriesRef
	for i := int64(1); i <= 600; i++ { // ten hours, one sample a minute
		app := db.Appender(ctx)
		var err error
		ref, err = app.Append(ref, labels.FromStrings("__name__", "f"), i*step, float64(i))
		require.NoError(t, err)
		if i%7 == 0 && i > 20 {
			lt := i*step - 10*step - step/2 // between two in-order samples, 10 minutes back
			_, err = app.Append(ref, labels.FromStrings("__name__", "f"), lt, -float64(i))
			require.NoError(t, err)
			lates[lt] = true
		}
		require.NoError(t, app.Commit())
		if i%60 == 0 {
			require.NoError(t, db.Compact(ctx))
			samples, _ := readWBLDir(t, fsys, "data/wbl")
			inWBL := map[int64]bool{}
			for _, s := range samples {
				inWBL[s.t] = true
			}
			mint := db.head.MinTime()
			for lt := range lates {
				if lt >= mint {
					require.True(t, inWBL[lt], "late sample at %d (head mint %d) is in the WBL", lt, mint)
				}
			}
		}
	}
	first, last, err := db.head.wbl.Load().w.Segments()
	require.NoError(t, err)
	require.Positive(t, first, "old WBL segments were removed")
	require.Positive(t, counterValue(t, db.metrics.headTruncations))
	samples, _ := readWBLDir(t, fsys, "data/wbl")
	require.Less(t, len(samples), len(lates), "the WBL holds fewer late samples than were written")
	t.Logf("WBL segments %d..%d hold %d of %d late samples", first, last, len(samples), len(lates))
	want := readSeries(t, db, math.MinInt64, math.MaxInt64, "f")
	require.Len(t, want["f"], 600+len(lates))
	require.NoError(t, db.Close())

	o.OutOfOrderTimeWindow = 0
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	got := readSeries(t, db, math.MinInt64, math.MaxInt64, "f")
	require.Equal(t, keys(want["f"]), keys(got["f"]))
	require.NoError(t, db.Close())
}

// wblSegmentFiles returns the WBL segment files of fsys, in order.
func wblSegmentFiles(t *testing.T, fsys *vfs.MemFS) []string {
	t.Helper()
	ents, err := fsys.ReadDir("data/wbl")
	require.NoError(t, err)
	var segs []string
	for _, e := range ents {
		if !e.IsDir() {
			segs = append(segs, path.Join("data/wbl", e.Name()))
		}
	}
	slices.Sort(segs)
	return segs
}

// TestWBLCrashMatrix: the WBL of the crash workload's late variant (fsync
// at every commit) is cut at record boundaries and random byte offsets of
// its last segment, and has bytes flipped: Open always succeeds with every
// transaction whole (the WAL, untouched, is authoritative), the WBL is
// repaired to a well-formed log that holds every late sample once (what
// the repair cut is copied again from the WAL), and a second open
// succeeds.
func TestWBLCrashMatrix(t *testing.T) {
	const txns = 300
	w := newCrashWorkload(5, txns)
	w.late, w.rotate = true, true
	// Every transaction writes the same 40 series, so that from the
	// sixth on each has late samples (a run in the WBL).
	for k := range w.picks {
		w.sizes[k], w.picks[k] = 40, w.picks[0][:0:0]
		for i := range 40 {
			w.picks[k] = append(w.picks[k], i)
		}
	}
	fsys := vfs.NewMemFS()
	o := w.options(fsys)
	o.WALSyncEveryCommit = true
	o.WALSegmentSize = 1 << 20 // the WBL fits one segment
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	for k := 1; k <= txns; k++ {
		require.NoError(t, w.commit(db, k))
	}
	base := fsys.Crash()
	require.NoError(t, db.Close())

	var seg string
	var data []byte
	for _, s := range wblSegmentFiles(t, base) {
		if b, err := base.ReadFile(s); err == nil && len(b) > 0 {
			seg, data = s, b
		}
	}
	require.NotEmpty(t, data)
	wantWBL, _ := readWBLDir(t, base, "data/wbl")
	sortWBL(wantWBL)
	var ends []int64
	r := wlog.NewReader(bytes.NewReader(data))
	for r.Next() {
		ends = append(ends, r.Offset())
	}
	require.NoError(t, r.Err())
	require.Greater(t, len(ends), 20, "the last WBL segment holds many records")
	t.Logf("last WBL segment %s: %d bytes, %d records", seg, len(data), len(ends))

	verify := func(mutate func([]byte) []byte, what string) {
		t.Helper()
		fs2 := base.Crash()
		require.NoError(t, fs2.WriteFile(seg, mutate(slices.Clone(data)), 0o666))
		fs2.SyncAll()
		present := w.check(t, fs2, what) // opens, repairs, checks, closes
		for k := 1; k <= txns; k++ {
			require.True(t, present[k], "after %s: transaction %d present", what, k)
		}
		samples, _ := readWBLDir(t, fs2, "data/wbl")
		for _, s := range samples {
			require.True(t, s.isCopy, "after %s: only isotsdb's copies in the WBL", what)
		}
		// What the repair cut, Open copied again from the WAL.
		sortWBL(samples) // (ElementsMatch is quadratic: minutes under -race)
		require.Equal(t, wantWBL, samples, "after %s: the WBL holds every late sample once", what)
		db, err := Open("data", nil, nil, w.options(fs2))
		require.NoError(t, err, "second open after %s", what)
		require.NoError(t, db.Close())
	}
	rng := rand.New(rand.NewPCG(6, 7))
	stride, randomCuts, flips := 8, 50, 20
	if raceEnabled {
		stride, randomCuts, flips = 40, 10, 5
	}
	for i := 0; i < len(ends); i += stride {
		off := ends[i]
		verify(func(b []byte) []byte { return b[:off] }, "cut at WBL record boundary")
		verify(func(b []byte) []byte { return b[:max(off-3, 0)] }, "cut inside a WBL record")
	}
	for range randomCuts {
		off := rng.Int64N(int64(len(data)) + 1)
		verify(func(b []byte) []byte { return b[:off] }, "cut at a random WBL byte")
	}
	for range flips {
		off := rng.Int64N(int64(len(data)))
		bit := rng.IntN(8)
		verify(func(b []byte) []byte { b[off] ^= 1 << bit; return b }, "bit flipped in the WBL")
	}
}

// TestWBLCorruptionIsTyped: replay reports a WBL that ends inside a run of
// copies as a corruption at the run's WBLCopy record.
func TestWBLCorruptionIsTyped(t *testing.T) {
	fsys := vfs.NewMemFS()
	w, err := wlog.Open(nil, nil, fsys, "wbl", wlog.Options{})
	require.NoError(t, err)
	var enc record.Encoder
	require.NoError(t, w.Log(enc.WBLCopy(2, nil), enc.Samples(nil, nil)))
	require.NoError(t, w.Close())
	h := newHead(slog.New(slog.DiscardHandler), nil, headOptions{chunkRange: 1000, samplesPerChunk: 120, stripeSize: 16})
	rp := newReplayer(h, newWALMetrics(nil, metricnames.Namer{}))
	defer rp.close()
	sr, err := wlog.NewSegmentsReader(fsys, "wbl")
	require.NoError(t, err)
	defer sr.Close()
	err = rp.readWBL(wlog.NewReader(sr), &wblSource{dir: "wbl", segMax: map[int]int64{}})
	require.ErrorIs(t, err, corrupt.ErrCorrupt)
	require.ErrorIs(t, err, errTornCommit)
}

// TestWBLWriteFailure: a commit whose WBL write fails returns ErrWBL (not
// ErrWAL) with its samples applied and in the WAL; every later commit
// fails with ErrWBL before it logs or applies anything; after a reopen
// the first commit's samples are all there and commits work again.
func TestWBLWriteFailure(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	appendKinds(t, db, 1000, 1)
	fsys.SetHook(func(op vfs.Op, p string) error {
		if op == vfs.OpWrite && strings.HasPrefix(p, "data/wbl/") {
			return syscall.ENOSPC
		}
		return nil
	})
	app := db.Appender(ctx)
	_, err = app.Append(0, labels.FromStrings("__name__", "f"), 500, 2)
	require.NoError(t, err)
	err = app.Commit()
	require.ErrorIs(t, err, ErrWBL)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NotErrorIs(t, err, ErrWAL)
	fsys.SetHook(nil)
	require.Len(t, readSeries(t, db, math.MinInt64, math.MaxInt64, "f")["f"], 2, "the failed commit's samples are applied")

	app = db.Appender(ctx)
	_, err = app.Append(0, labels.FromStrings("__name__", "f"), 2000, 3)
	require.NoError(t, err)
	require.ErrorIs(t, app.Commit(), ErrWBL, "later commits fail too")
	require.Len(t, readSeries(t, db, math.MinInt64, math.MaxInt64, "f")["f"], 2, "and apply nothing")
	require.ErrorIs(t, db.Close(), ErrWBL)

	db, err = Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	require.Equal(t, []string{hsample{t: 500, f: 2}.key(), hsample{t: 1000, f: 1}.key()},
		keys(readSeries(t, db, math.MinInt64, math.MaxInt64, "f")["f"]))
	appendKinds(t, db, 700, 4)
	require.NoError(t, db.Close())
}

// TestWBLReadOnly: OpenReadOnly replays Prometheus's WBL records like Open
// and writes nothing, not even to repair a torn run.
func TestWBLReadOnly(t *testing.T) {
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	app := db.Appender(ctx)
	ref, err := app.Append(0, labels.FromStrings("__name__", "f"), 1000, 1)
	require.NoError(t, err)
	_, err = app.Append(ref, labels.FromStrings("__name__", "f"), 2000, 2)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())
	w, err := wlog.Open(nil, nil, fsys, "data/wbl", wlog.Options{})
	require.NoError(t, err)
	var enc record.Encoder
	require.NoError(t, w.Log(
		enc.Samples([]record.RefSample{{Ref: uint64(ref), T: 1500, V: 15}}, nil),
		enc.WBLCopy(2, nil), enc.Samples([]record.RefSample{{Ref: uint64(ref), T: 1600, V: 16}}, nil),
	))
	require.NoError(t, w.Close())
	before := fsys.Dump()

	o := DefaultOptions()
	o.FS = fsys
	db, err = OpenReadOnly("data", nil, o)
	require.NoError(t, err)
	require.Equal(t, []string{hsample{t: 1000, f: 1}.key(), hsample{t: 1500, f: 15}.key(), hsample{t: 2000, f: 2}.key()},
		keys(readSeries(t, db, math.MinInt64, math.MaxInt64, "f")["f"]))
	require.NoError(t, db.Close())
	require.Equal(t, before, fsys.Dump(), "a read-only open writes nothing")
}

// twoCopyRuns writes a DB in fsys whose WBL holds two runs of copies of
// four samples each, and returns the samples.
func twoCopyRuns(t *testing.T, fsys vfs.FS) []wblSample {
	t.Helper()
	db, err := Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	appendKinds(t, db, 1000, 1)
	appendKinds(t, db, 500, 2)
	appendKinds(t, db, 2000, 3)
	appendKinds(t, db, 600, 4)
	require.NoError(t, db.Close())
	all, runs := readWBLDir(t, fsys, "data/wbl")
	require.Len(t, all, 8)
	require.Equal(t, 2, runs)
	return all
}

// cutWBLAfter cuts the first WBL segment of the DB in fsys after its
// record number last (counted from 0).
func cutWBLAfter(t *testing.T, fsys *vfs.MemFS, last int) {
	t.Helper()
	b, err := fsys.ReadFile("data/wbl/00000000")
	require.NoError(t, err)
	r := wlog.NewReader(bytes.NewReader(b))
	cut := int64(-1)
	for i := 0; r.Next(); i++ {
		if i == last {
			cut = r.Offset()
		}
	}
	require.NoError(t, r.Err())
	require.GreaterOrEqual(t, cut, int64(0), "the segment has no record %d", last)
	require.NoError(t, fsys.WriteFile("data/wbl/00000000", b[:cut], 0o666))
}

// TestWBLRecopy: late samples that the WAL holds and the WBL lacks (a
// crash between a commit's two writes) are copied to the WBL by the next
// Open, once; copies already there and Prometheus's records count as
// present.
func TestWBLRecopy(t *testing.T) {
	fsys := vfs.NewMemFS()
	all := twoCopyRuns(t, fsys)

	// Lose the second run, as a crash before its write would: keep the
	// first run, its WBLCopy and 4 sample records.
	cutWBLAfter(t, fsys, 4)
	got, _ := readWBLDir(t, fsys, "data/wbl")
	require.Len(t, got, 4)

	for range 2 { // the second Open finds nothing to copy
		db, err := Open("data", nil, nil, wblTestOptions(fsys))
		require.NoError(t, err)
		require.NoError(t, db.Close())
		got, _ = readWBLDir(t, fsys, "data/wbl")
		require.ElementsMatch(t, all, got)
	}
}

// TestWBLTornRunRecopied: the samples of a run of copies that a crash cut
// short count as missing from the WBL, the whole-run records read before
// the cut included (the repair cuts the run whole), so the next Open
// copies every one of them again.
func TestWBLTornRunRecopied(t *testing.T) {
	fsys := vfs.NewMemFS()
	all := twoCopyRuns(t, fsys)

	// Keep the first run whole and the second's WBLCopy record with two
	// of its four sample records.
	cutWBLAfter(t, fsys, 7)

	db, err := Open("data", nil, nil, wblTestOptions(fsys))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	got, runs := readWBLDir(t, fsys, "data/wbl")
	require.ElementsMatch(t, all, got, "the torn run's samples are copied again, all of them")
	require.Equal(t, 2, runs)
}
