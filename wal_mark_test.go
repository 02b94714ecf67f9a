package tsdb

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// WAL marks (wal_mark.go): replay with the out-of-order window on drops
// the WAL samples the blocks hold, and keeps the late ones that arrived
// after their range was written.

// headLateSamples counts the late samples the head holds.
func headLateSamples(db *DB) int {
	n := 0
	db.head.series.refs.each(func(s *memSeries) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.hasLateLocked() {
			return
		}
		l := s.x.late
		n += len(l.open)
		for _, c := range l.chunks {
			n += c.chunk.NumSamples()
		}
	})
	return n
}

// markOpen opens the DB in fsys/data with the window on and no wakeups of
// the background compaction.
func markOpen(t *testing.T, fsys vfs.FS, reg prometheus.Registerer) *DB {
	t.Helper()
	db, err := Open("data", nil, reg, markOpts(fsys))
	require.NoError(t, err)
	noWakeups(db)
	return db
}

func markOpts(fsys vfs.FS) *Options {
	o := lateOpts(fsys, 6*time.Hour)
	o.WALSegmentSize = 64 << 10 // several segments: a checkpoint leaves the newest
	return o
}

// greatestMark returns the greatest WAL mark of db's blocks, nil if none.
func greatestMark(db *DB) *WALMark { return db.greatestWALMark() }

// TestWALMarkReplayAfterUntruncatedCompaction: a head compaction published
// its block and the process stopped before it truncated the head, so the
// WAL holds every sample of the block's range. With the window on, replay
// takes none of them as a late copy (the block's mark says it holds them);
// a late sample committed after the compaction, in the block's range, is
// not in the block and is replayed as a late one. Reads return each
// sample once.
func TestWALMarkReplayAfterUntruncatedCompaction(t *testing.T) {
	fsys := vfs.NewMemFS()
	db := markOpen(t, fsys, nil)
	cancelCompactionAfterPublish(t, db) // series m, one sample a minute over [0, 4h); block [0, 2h)
	m := greatestMark(db)
	require.NotNil(t, m, "the block has a WAL mark")
	require.Equal(t, 2*hour, m.MaxTime)
	// Late samples after the compaction, behind the head's range.
	lset := labels.FromStrings("__name__", "m")
	want := map[string][]sample{}
	for ts := int64(0); ts < 4*hour; ts += 60_000 {
		want[lset.String()] = append(want[lset.String()], sample{ts, float64(ts)})
	}
	app := db.Appender(ctx)
	for ts := hour + 30_000; ts < 2*hour; ts += 10 * 60_000 {
		_, err := app.Append(0, lset, ts, -1)
		require.NoError(t, err)
		want[lset.String()] = append(want[lset.String()], sample{ts, -1})
	}
	require.NoError(t, app.Commit())
	want = sortedWant(want)
	require.Equal(t, want, fullRead(t, db))
	require.NoError(t, db.Close())

	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			fs2 := fsys.Crash()
			if !crash {
				fs2 = fsys // as closed
			}
			reg := prometheus.NewRegistry()
			db := markOpen(t, fs2, reg)
			defer func() { require.NoError(t, db.Close()) }()
			require.Equal(t, 6, headLateSamples(db), "only the late samples committed after the compaction")
			require.Equal(t, 6.0, gauge(t, reg, "tsdb_head_late_samples_appended_total"))
			require.Equal(t, want, fullRead(t, db))
		})
	}
}

// TestWALMarkCompactionCrash: a crash at every write of a head compaction
// that writes a block of late samples behind the head's range, then the
// head's next range, then truncates the head, the WBL and checkpoints the
// WAL. Open after each crash loses nothing, reads every sample once, and
// holds as late samples exactly those no block's mark accounts for: the
// late samples committed after the first compaction, unless the second
// compaction's mark is published (then none).
func TestWALMarkCompactionCrash(t *testing.T) {
	base := vfs.NewMemFS()
	o := markOpts(base)
	o.WALSyncEveryCommit = true
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	noWakeups(db)
	lsets := []labels.Labels{
		labels.FromStrings("__name__", "mark", "i", "0"),
		labels.FromStrings("__name__", "mark", "i", "1"),
	}
	want := map[string][]sample{}
	behindScrapes(t, db, lsets, 0, 5*hour, want)
	require.NoError(t, db.Compact(ctx))
	require.Len(t, db.Blocks(), 1)
	first := greatestMark(db)
	require.NotNil(t, first)
	require.Equal(t, 2*hour, first.MaxTime)
	behindLate(t, db, lsets, hour, 2*hour, want) // behind the head's range: 60 per series
	nLate := 2 * 60
	behindScrapes(t, db, lsets, 5*hour, 7*hour, want)
	want = sortedWant(want)
	require.NoError(t, db.Close())

	check := func(fsys vfs.FS, what string) (marked bool) {
		t.Helper()
		db, err := Open("data", nil, nil, o.withFS(fsys))
		require.NoError(t, err, what)
		noWakeups(db)
		defer func() { require.NoError(t, db.Close(), what) }()
		require.Equal(t, want, fullRead(t, db), what)
		m := greatestMark(db)
		require.NotNil(t, m, what)
		switch m.MaxTime {
		case 2 * hour:
			require.Equal(t, nLate, headLateSamples(db), "%s: late samples after the first compaction's mark", what)
		case 4 * hour:
			require.Zero(t, headLateSamples(db), "%s: the blocks hold every late sample", what)
			marked = true
		default:
			require.Failf(t, "unexpected mark", "%s: %+v", what, m)
		}
		return marked
	}
	require.False(t, check(base.Crash(), "before the compaction"))

	// The compaction, and the number of writes it makes.
	fs1 := base.Crash()
	db, err = Open("data", nil, nil, o.withFS(fs1))
	require.NoError(t, err)
	noWakeups(db)
	n0 := fs1.Ops()
	require.NoError(t, db.Compact(ctx))
	writes := fs1.Ops() - n0
	require.GreaterOrEqual(t, len(db.Blocks()), 2)
	require.NoError(t, db.Close())
	require.True(t, check(fs1.Crash(), "after the compaction"))

	stride := 1
	if raceEnabled {
		stride = 4
	}
	marked := 0
	for k := 0; k <= writes; k += stride {
		fsk := base.Crash()
		db, err := Open("data", nil, nil, o.withFS(fsk))
		require.NoError(t, err)
		noWakeups(db)
		fsk.CrashAfter(k)
		_ = db.Compact(ctx) // may fail after the crash point; what counts is the disk
		crashed := fsk.CrashState()
		_ = db.Close()
		if check(crashed, fmt.Sprintf("crash after write %d of %d", k, writes)) {
			marked++
		}
	}
	t.Logf("%d writes; the second mark published in %d crash states", writes, marked)
	require.Positive(t, marked)
}

// withFS returns a copy of o using fsys.
func (o *Options) withFS(fsys vfs.FS) *Options {
	c := *o
	c.FS = fsys
	return &c
}

// TestWALMarkCheckpointAndRestarts: head compactions that complete
// (truncation and WAL checkpoint included), with late samples behind the
// head's range between them and restarts after each step: every restart
// reads every sample once and holds as late samples only those committed
// after the last compaction.
func TestWALMarkCheckpointAndRestarts(t *testing.T) {
	fsys := vfs.NewMemFS()
	lsets := []labels.Labels{
		labels.FromStrings("__name__", "cp", "i", "0"),
		labels.FromStrings("__name__", "cp", "i", "1"),
		labels.FromStrings("__name__", "cp", "i", "2"),
	}
	want := map[string][]sample{}
	late := 0 // late samples committed since the last compaction
	restart := func(db *DB, what string) *DB {
		t.Helper()
		require.NoError(t, db.Close())
		db = markOpen(t, fsys, nil)
		require.Equal(t, sortedWant(want), fullRead(t, db), what)
		require.Equal(t, late, headLateSamples(db), what)
		return db
	}
	db := markOpen(t, fsys, nil)
	for round := range 4 {
		from := int64(round) * 2 * hour
		behindScrapes(t, db, lsets, from, from+2*hour, want)
		if round == 0 {
			continue
		}
		require.NoError(t, db.Compact(ctx))
		late = 0
		db = restart(db, fmt.Sprintf("round %d: after the compaction", round))
		if m := greatestMark(db); round >= 2 {
			require.NotNil(t, m)
		}
		// Late samples in the range just written into a block.
		minValid := db.head.minValidTime.Load()
		if minValid > math.MinInt64 {
			behindLate(t, db, lsets, minValid-hour, minValid-hour/2, want)
			late += 30 * len(lsets)
		}
		db = restart(db, fmt.Sprintf("round %d: after late samples", round))
	}
	require.NoError(t, db.Close())
}

// TestWALMarkWithoutMark: a directory whose blocks have no mark (written
// by Prometheus or an older isotsdb) replays as before: the WAL's samples
// of a block's range are taken as late copies (reads still return each
// sample once). This is also the effect the mark has.
func TestWALMarkWithoutMark(t *testing.T) {
	fsys := vfs.NewMemFS()
	db := markOpen(t, fsys, nil)
	cancelCompactionAfterPublish(t, db)
	require.NoError(t, db.Close())
	for _, strip := range []bool{false, true} {
		fs2 := fsys.Crash()
		if strip {
			stripWALMarks(t, fs2)
		}
		db := markOpen(t, fs2, nil)
		got := fullRead(t, db)[`{__name__="m"}`]
		require.Len(t, got, 4*60, "strip=%v", strip)
		lateCopies := headLateSamples(db)
		t.Logf("strip=%v: %d late samples in the head after replay", strip, lateCopies)
		if strip {
			require.Equal(t, 2*60, lateCopies, "without a mark, the block's range is taken as late copies")
		} else {
			require.Zero(t, lateCopies)
		}
		require.NoError(t, db.Close())
	}
}

// stripWALMarks rewrites every block's meta.json in fsys/data without
// isotsdb's field, as Prometheus would write it.
func stripWALMarks(t *testing.T, fsys vfs.FS) { stripWALMarksTB(t, fsys) }

func stripWALMarksTB(t testing.TB, fsys vfs.FS) {
	t.Helper()
	entries, err := fsys.ReadDir("data")
	require.NoError(t, err)
	for _, e := range entries {
		dir := "data/" + e.Name()
		m, err := readMeta(fsys, dir)
		if err != nil {
			continue
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		require.Contains(t, string(b), `"isotsdb":{"walMark":[`)
		m.Isotsdb = nil
		require.NoError(t, writeMeta(fsys, dir, &m))
		again, err := readMeta(fsys, dir)
		require.NoError(t, err)
		require.Nil(t, again.Isotsdb)
	}
}

// TestBlockMetaWALMark: the mark's JSON round trip; metas without it (as
// Prometheus writes them) and with garbage in isotsdb's field decode, the
// latter to no mark; block compaction carries the greatest mark of its
// inputs.
func TestBlockMetaWALMark(t *testing.T) {
	m := BlockMeta{ULID: newULID(), MinTime: 0, MaxTime: 10, Version: metaVersion1,
		Isotsdb: &BlockIsotsdb{WALMark: &WALMark{Segment: 3, Offset: 40960, MaxTime: 10}}}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.Contains(t, string(b), `"isotsdb":{"walMark":[3,40960,10]}`)
	got, err := decodeMeta(b)
	require.NoError(t, err)
	require.Equal(t, m, got)

	m.Isotsdb = nil
	b, err = json.Marshal(m)
	require.NoError(t, err)
	require.NotContains(t, string(b), "isotsdb", "no field without a mark")
	got, err = decodeMeta(b)
	require.NoError(t, err)
	require.Nil(t, got.Isotsdb)

	base := strings.TrimSuffix(string(b), "}")
	for _, garbage := range []string{
		`"isotsdb":null`,
		`"isotsdb":7`,
		`"isotsdb":{"walMark":"x"}`,
		`"isotsdb":{"walMark":[-1,0,1]}`,
		`"isotsdb":{"walMark":[1000000000,0,1]}`,
		`"isotsdb":{"walMark":[1,-5,1]}`,
		`"isotsdb":{"walMark":[1e30,0,1]}`,
		`"isotsdb":{"walMark":[99999999999,0,1]}`,
		`"isotsdb":{"walMark":[1,2]}`,
		`"isotsdb":{"walMark":[1,2,3,4]}`,
		`"isotsdb":{"walMark":{"segment":3,"offset":40960,"maxTime":10}}`,
		`"isotsdb":{"other":{"x":[1,2]}}`,
	} {
		got, err := decodeMeta([]byte(base + "," + garbage + "}"))
		require.NoError(t, err, garbage)
		require.True(t, got.Isotsdb == nil || got.Isotsdb.WALMark == nil, "%s: no mark", garbage)
		require.Equal(t, m.ULID, got.ULID, garbage)
	}
	_, err = decodeMeta([]byte(base + `,"isotsdb":{"walMark":[`))
	require.Error(t, err, "JSON that does not parse still does not")

	// laterWALMark, the rule block compaction uses.
	mk := func(seg int, off, maxt int64) *BlockIsotsdb {
		return &BlockIsotsdb{WALMark: &WALMark{Segment: seg, Offset: off, MaxTime: maxt}}
	}
	require.Nil(t, laterWALMark(nil, nil))
	require.Equal(t, mk(1, 5, 7), laterWALMark(nil, mk(1, 5, 7)))
	require.Equal(t, mk(1, 5, 7), laterWALMark(mk(1, 5, 7), &BlockIsotsdb{}))
	require.Equal(t, mk(2, 0, 9), laterWALMark(mk(1, 5, 7), mk(2, 0, 9)))
	require.Equal(t, mk(2, 0, 9), laterWALMark(mk(2, 0, 9), mk(1, 5, 7)))
	require.Equal(t, mk(1, 6, 8), laterWALMark(mk(1, 5, 7), mk(1, 6, 8)))
}

// TestBlockCompactionCarriesWALMark: blocks compacted together give the
// new block the greatest of their marks; replay after that still drops
// what the blocks hold.
func TestBlockCompactionCarriesWALMark(t *testing.T) {
	fsys := vfs.NewMemFS()
	db := markOpen(t, fsys, nil)
	lsets := []labels.Labels{labels.FromStrings("__name__", "carry")}
	want := map[string][]sample{}
	var marks []WALMark
	for from, end := int64(0), 5*hour; end <= 11*hour; from, end = end, end+2*hour {
		behindScrapes(t, db, lsets, from, end, want)
		require.NoError(t, db.Compact(ctx))
		marks = append(marks, *greatestMark(db))
	}
	// Blocks [0, 2h), [2h, 4h), [4h, 6h): compacted into [0, 6h) by the
	// compaction after the third, or by the next.
	require.NoError(t, db.Compact(ctx))
	bs := db.Blocks()
	require.Equal(t, int64(0), bs[0].MinTime)
	require.Equal(t, 6*hour, bs[0].MaxTime, "the first three ranges compacted: %+v", bs)
	require.Greater(t, bs[0].Compaction.Level, 1)
	require.NotNil(t, bs[0].Isotsdb)
	require.Equal(t, marks[2], *bs[0].Isotsdb.WALMark, "the greatest mark of the inputs")
	require.Equal(t, marks[len(marks)-1], *greatestMark(db))
	require.NoError(t, db.Close())
	db = markOpen(t, fsys, nil)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, sortedWant(want), fullRead(t, db))
	require.Zero(t, headLateSamples(db))
}

// TestWALMarkLogBehind: a WAL whose numbering went back behind the
// blocks' mark (its directory removed) starts its next segment after the
// mark's, so that what it logs is not taken for what the blocks hold;
// late samples logged then survive restarts. Far behind, the marks are
// removed instead.
func TestWALMarkLogBehind(t *testing.T) {
	for _, far := range []bool{false, true} {
		t.Run(fmt.Sprintf("far=%v", far), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			db := markOpen(t, fsys, nil)
			lsets := []labels.Labels{labels.FromStrings("__name__", "behind")}
			want := map[string][]sample{}
			behindScrapes(t, db, lsets, 0, 5*hour, want)
			require.NoError(t, db.Compact(ctx))
			m := greatestMark(db)
			require.NotNil(t, m)
			require.NoError(t, db.Close())
			if far {
				// A mark far ahead of this log (as from another log).
				m.Segment += 5000
				setWALMarks(t, fsys, m)
			}
			// The WAL is lost: the head's samples after the block go.
			require.NoError(t, fsys.RemoveAll("data/wal"))
			for k, v := range want {
				want[k] = v[:0:0]
				for _, s := range v {
					if s.T < 2*hour {
						want[k] = append(want[k], s)
					}
				}
			}
			db = markOpen(t, fsys, nil)
			if far {
				require.Nil(t, greatestMark(db), "marks removed")
			} else {
				require.Greater(t, db.head.wal.ActiveSegment(), m.Segment)
			}
			behindLate(t, db, lsets, hour, 2*hour, want)
			require.NoError(t, db.Close())
			db = markOpen(t, fsys, nil)
			require.Equal(t, sortedWant(want), fullRead(t, db))
			require.Equal(t, 60, headLateSamples(db))
			require.NoError(t, db.Close())
		})
	}
}

// setWALMarks gives every block in fsys/data the mark m.
func setWALMarks(t *testing.T, fsys vfs.FS, m *WALMark) {
	t.Helper()
	entries, err := fsys.ReadDir("data")
	require.NoError(t, err)
	for _, e := range entries {
		dir := "data/" + e.Name()
		meta, err := readMeta(fsys, dir)
		if err != nil {
			continue
		}
		meta.Isotsdb = &BlockIsotsdb{WALMark: m}
		require.NoError(t, writeMeta(fsys, dir, &meta))
	}
}

// TestWALMarkLateDuringTruncation: late samples committed while a head
// compaction waits, after publishing its block, for a reader before it
// truncates the head: they are logged after the block's mark, in the
// segment the checkpoint that follows covers. The checkpoint keeps them
// (at the end of its segment, after the mark) and replay takes them as
// late ones: nothing is lost.
func TestWALMarkLateDuringTruncation(t *testing.T) {
	fsys := vfs.NewMemFS()
	db := markOpen(t, fsys, nil)
	release := heldCompaction(t, db) // series m over [0, 4h); block [0, 2h)
	require.NotNil(t, greatestMark(db))
	lset := labels.FromStrings("__name__", "m")
	want := map[string][]sample{}
	for ts := int64(0); ts < 4*hour; ts += 60_000 {
		want[lset.String()] = append(want[lset.String()], sample{ts, float64(ts)})
	}
	app := db.Appender(ctx)
	for ts := hour + 30_000; ts < 2*hour; ts += 10 * 60_000 {
		_, err := app.Append(0, lset, ts, -1)
		require.NoError(t, err)
		want[lset.String()] = append(want[lset.String()], sample{ts, -1})
	}
	require.NoError(t, app.Commit())
	require.NoError(t, release())
	_, cp, err := wlog.LastCheckpoint(fsys, "data/wal")
	require.NoError(t, err, "the truncation checkpointed the WAL")
	require.GreaterOrEqual(t, cp, greatestMark(db).Segment, "the checkpoint covers the mark's segment")
	want = sortedWant(want)
	require.Equal(t, want, fullRead(t, db))
	require.NoError(t, db.Close())

	db = markOpen(t, fsys, nil)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, want, fullRead(t, db))
	require.Equal(t, 6, headLateSamples(db))
}

// TestWALMarkCommitLoggedBeforeCompaction: a commit whose records are
// logged before a head compaction reads the WAL's position, and which
// applies after it, puts its sample behind the compaction's range (a late
// one, older than the range the compaction writes from the in-order
// chunks). The compaction waits for it before it freezes the late
// samples, so the blocks hold it, as the mark says; replay drops it from
// the WAL and reads it from a block.
func TestWALMarkCommitLoggedBeforeCompaction(t *testing.T) {
	fsys := vfs.NewMemFS()
	db := markOpen(t, fsys, nil)
	a := labels.FromStrings("__name__", "a")
	c := labels.FromStrings("__name__", "c")
	want := map[string][]sample{}
	behindScrapes(t, db, []labels.Labels{a, c}, 0, 5*hour, want)
	require.NoError(t, db.Compact(ctx)) // [0, 2h)
	behindScrapes(t, db, []labels.Labels{a, c}, 5*hour, 7*hour, want)

	// The commit of c@1h (behind the block of [0, 2h)) stops between
	// writing its WAL record and applying it; a compaction of [2h, 4h)
	// starts meanwhile.
	logged, resume := make(chan struct{}), make(chan struct{})
	db.head.loggedHook = func(*headAppender) {
		close(logged)
		<-resume
	}
	committed := make(chan error, 1)
	go func() {
		app := db.Appender(ctx)
		if _, err := app.Append(0, c, hour+1, 42); err != nil {
			committed <- err
			return
		}
		committed <- app.Commit()
	}()
	<-logged
	db.head.loggedHook = nil
	want[c.String()] = append(want[c.String()], sample{hour + 1, 42})
	compacted := make(chan error, 1)
	go func() { compacted <- db.Compact(context.Background()) }()
	// Let the compaction read the WAL's position (it waits for the commit
	// once it has), then let the commit apply.
	require.Eventually(t, func() bool { return db.head.minValidTime.Load() == 4*hour }, 10*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	close(resume)
	require.NoError(t, <-committed)
	require.NoError(t, <-compacted)
	require.Equal(t, 4*hour, greatestMark(db).MaxTime)
	want = sortedWant(want)
	require.Equal(t, want, fullRead(t, db))
	require.NoError(t, db.Close())

	db = markOpen(t, fsys, nil)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, want, fullRead(t, db), "after a restart")
}

// TestWALMarkRecopyLate: late samples behind the head's range that the WAL
// holds and the WBL lost (a crash between a commit's two writes) are
// copied to the WBL by the next Open when the blocks' mark tells they
// arrived after their range was written; the block's samples the WAL
// still holds are not. Without a mark nothing before the head's range is
// copied, as before.
func TestWALMarkRecopyLate(t *testing.T) {
	fsys := vfs.NewMemFS()
	db := markOpen(t, fsys, nil)
	cancelCompactionAfterPublish(t, db) // block [0, 2h), WAL untruncated
	lset := labels.FromStrings("__name__", "m")
	app := db.Appender(ctx)
	for ts := hour + 30_000; ts < 2*hour; ts += 10 * 60_000 {
		_, err := app.Append(0, lset, ts, -1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())
	got, _ := readWBLDir(t, fsys, "data/wbl")
	require.Len(t, got, 6)

	for _, strip := range []bool{false, true} {
		fs2 := fsys.Crash()
		if strip {
			stripWALMarks(t, fs2)
		}
		// The WBL lost the commit's copies.
		entries, err := fs2.ReadDir("data/wbl")
		require.NoError(t, err)
		for _, e := range entries {
			require.NoError(t, fs2.WriteFile("data/wbl/"+e.Name(), nil, 0o666))
		}
		db := markOpen(t, fs2, nil)
		require.NoError(t, db.Close())
		got, _ := readWBLDir(t, fs2, "data/wbl")
		if strip {
			require.Empty(t, got, "without a mark, nothing before the head's range is copied")
			continue
		}
		require.Len(t, got, 6, "the late samples, and no copy of the block's")
		for _, s := range got {
			require.True(t, s.isCopy)
			require.Equal(t, int64(30_000), s.t%(10*60_000), "a late sample")
		}
	}
}

// BenchmarkWALMarkReplay measures Open after a head compaction that
// published its block and stopped before truncating the head (the WAL
// holds the block's range), with the window on: with the block's WAL mark
// and without it (as an older isotsdb wrote the directory). It reports
// the late samples the head holds after replay and the heap in use.
//
//	go test -run '^$' -bench BenchmarkWALMarkReplay -benchtime 3x .
func BenchmarkWALMarkReplay(b *testing.B) {
	const series = 2000
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, markOpts(fsys))
	require.NoError(b, err)
	noWakeups(db)
	lsets := loadSeries(b, series)
	for ts := int64(0); ts < 4*hour; ts += 15_000 * 20 {
		app := db.Appender(ctx)
		for t := ts; t < ts+15_000*20; t += 15_000 {
			for _, ls := range lsets {
				_, err := app.Append(0, ls, t, float64(t))
				require.NoError(b, err)
			}
		}
		require.NoError(b, app.Commit())
	}
	q, err := db.Querier(0, 4*hour)
	require.NoError(b, err)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- db.Compact(cctx) }()
	for len(db.Blocks()) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	require.ErrorIs(b, <-done, context.Canceled)
	require.NoError(b, q.Close())
	require.NoError(b, db.Close())
	for _, mark := range []bool{true, false} {
		b.Run(fmt.Sprintf("mark=%v", mark), func(b *testing.B) {
			fs := fsys.Crash()
			if !mark {
				stripWALMarksTB(b, fs)
			}
			var late int
			var heap uint64
			for b.Loop() {
				db, err := Open("data", nil, nil, markOpts(fs))
				require.NoError(b, err)
				noWakeups(db)
				late = headLateSamples(db)
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = ms.HeapInuse
				require.NoError(b, db.Close())
			}
			b.ReportMetric(float64(late), "late-samples")
			b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
		})
	}
}
