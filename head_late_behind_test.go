package tsdb

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// Late samples behind the head's appendable range: in ranges already
// written into blocks. They wait in the head until the next head
// compaction, which writes them into blocks that overlap the existing
// ones; block compaction then merges those.

const hour = int64(3600_000)

// behindScrapes appends an in-order sample per minute to each of lsets
// over [from, to), one commit per 10 minutes, and records it in want.
func behindScrapes(t *testing.T, db *DB, lsets []labels.Labels, from, to int64, want map[string][]sample) {
	t.Helper()
	for ts := from; ts < to; {
		app := db.Appender(context.Background())
		for end := min(ts+10*60_000, to); ts < end; ts += 60_000 {
			for i, ls := range lsets {
				v := float64(ts/1000 + int64(i))
				_, err := app.Append(0, ls, ts, v)
				require.NoError(t, err)
				want[ls.String()] = append(want[ls.String()], sample{ts, v})
			}
		}
		require.NoError(t, app.Commit())
	}
}

// behindLate appends late samples at 30 s past each minute of [from, to)
// to every series, in one commit, and records them in want.
func behindLate(t *testing.T, db *DB, lsets []labels.Labels, from, to int64, want map[string][]sample) {
	t.Helper()
	app := db.Appender(context.Background())
	for ts := from + 30_000; ts < to; ts += 60_000 {
		for _, ls := range lsets {
			v := -float64(ts / 1000)
			_, err := app.Append(0, ls, ts, v)
			require.NoError(t, err, "late sample at %d", ts)
			want[ls.String()] = append(want[ls.String()], sample{ts, v})
		}
	}
	require.NoError(t, app.Commit())
}

func sortedWant(want map[string][]sample) map[string][]sample {
	out := make(map[string][]sample, len(want))
	for k, v := range want {
		out[k] = slices.SortedFunc(slices.Values(v), func(a, b sample) int { return cmpInt64(a.T, b.T) })
	}
	return out
}

// overlappingBlocks returns the number of pairs of blocks that overlap.
func overlappingBlocks(db *DB) int {
	bs := db.Blocks()
	n := 0
	for i := range bs {
		for j := i + 1; j < len(bs); j++ {
			if bs[i].MinTime < bs[j].MaxTime && bs[j].MinTime < bs[i].MaxTime {
				n++
			}
		}
	}
	return n
}

// TestLateBehindHead: late samples in ranges already in blocks are
// accepted within the window, read together with the blocks, kept across
// restarts (WAL replay and checkpoint), written into overlapping blocks by
// the next head compaction and merged by block compaction, with nothing
// lost or doubled on the way.
func TestLateBehindHead(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := lateOpts(fs, 6*time.Hour)
	db, _ := openTestDB(t, opts)
	lsets := []labels.Labels{
		labels.FromStrings("__name__", "behind", "i", "0"),
		labels.FromStrings("__name__", "behind", "i", "1"),
	}
	want := map[string][]sample{}
	check := func(stage string) {
		t.Helper()
		require.Equal(t, sortedWant(want), fullRead(t, db), stage)
	}

	behindScrapes(t, db, lsets, 0, 7*hour, want)
	require.NoError(t, db.Compact(context.Background()))
	require.Len(t, db.Blocks(), 2, "[0, 2h) and [2h, 4h)")
	require.Equal(t, 4*hour, db.Blocks()[1].MaxTime)
	check("before late samples")

	// Behind the head's range ([4h, 7h)), more than half a block range
	// behind its newest sample, in ranges already in blocks.
	behindLate(t, db, lsets, 1*hour+30*60_000, 5*hour, want)
	require.Less(t, db.Head().MinTime(), 4*hour, "the head holds the late samples before its range")
	check("late samples before the head's range, from the head")

	// Delete covers them (and the block's samples of the range), and
	// keeps covering them through compaction, below.
	require.NoError(t, db.Delete(context.Background(), 2*hour, 2*hour+30*60_000, labels.MustNewMatcher(labels.MatchEqual, "i", "0")))
	k := lsets[0].String()
	want[k] = slices.DeleteFunc(want[k], func(s sample) bool { return s.T >= 2*hour && s.T <= 2*hour+30*60_000 })
	check("after a Delete over late samples before the head's range")

	// A snapshot with the head holds them.
	require.NoError(t, db.Snapshot("snap", true))
	sdb, err := Open("snap", nil, nil, &Options{FS: fs, NoWAL: true, NoLockfile: true})
	require.NoError(t, err)
	sq, err := sdb.Querier(MinSampleTime, MaxSampleTime)
	require.NoError(t, err)
	require.Equal(t, sortedWant(want), querySamples(t, sq), "snapshot")
	require.NoError(t, sq.Close())
	require.NoError(t, sdb.Close())

	// Restart: WAL replay takes them as late ones.
	require.NoError(t, db.Close())
	db, _ = openTestDB(t, opts)
	check("after reopening")

	// A truncation that writes none of them into blocks (lateGen 0) and
	// the checkpoint after it keep them.
	require.NoError(t, db.cmtx.lock(context.Background()))
	require.NoError(t, db.truncateHead(4*hour, 0))
	db.cmtx.unlock()
	check("after a truncation that kept them")
	require.NoError(t, db.Close())
	db, _ = openTestDB(t, opts)
	check("after a checkpoint and reopening")

	// The next head compaction writes them into overlapping blocks, and
	// block compaction merges those with the blocks already there.
	// (The commits may wake the background compaction first; Compact
	// waits for it.)
	behindScrapes(t, db, lsets, 7*hour, 8*hour, want)
	require.NoError(t, db.Compact(context.Background()))
	require.GreaterOrEqual(t, db.Head().MinTime(), 6*hour, "the late samples left the head")
	require.Zero(t, overlappingBlocks(db), "block compaction merged the overlapping blocks: %v", db.Blocks())
	// Level-1 blocks: [0, 2h), [2h, 4h), [4h, 6h) from the in-order
	// samples, and one each for the late samples in [0, 2h) and [2h, 4h).
	sources := 0
	for _, b := range db.Blocks() {
		sources += len(b.Compaction.Sources)
	}
	require.Equal(t, 5, sources, "blocks: %v", db.Blocks())
	check("after vertical compaction")
	require.NoError(t, db.Close())
	db, _ = openTestDB(t, opts)
	check("after reopening with the merged blocks")
}

// TestLateBehindHeadIsolation: commits that each write in-order samples
// at the head's end and late samples into ranges already in blocks run
// while head compactions move those late samples into blocks and block
// compaction merges the blocks. Every query sees each commit whole or not
// at all, whichever of head, new blocks and merged blocks holds its
// samples at that moment.
func TestLateBehindHeadIsolation(t *testing.T) {
	opts := lateOpts(vfs.NewMemFS(), 12*time.Hour)
	opts.MinBlockDuration = 10 * time.Minute
	opts.MaxBlockDuration = 30 * time.Minute
	db, _ := openTestDB(t, opts)
	const perCommit = 8
	ls := func(k int) labels.Labels { return labels.FromStrings("__name__", "iso", "k", fmt.Sprint(k)) }

	// Commits stay in flight a while halfway through, so that compactions
	// and queries meet them there.
	var slow atomic.Int64
	db.head.commitHook = func(_ *headAppender, i int) {
		if i == perCommit && slow.Add(1)%8 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	var (
		commits atomic.Int64 // commits done
		stop    atomic.Bool
		wg      sync.WaitGroup
		errs    = make(chan error, 8)
	)
	// Writer: commit c writes value c at its time to perCommit series in
	// order, and at a time in the past (hours behind the head, in blocks)
	// to perCommit other series.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := int64(1); !stop.Load(); c++ {
			now := c * 2000 // 2 s of data time per commit
			app := db.Appender(context.Background())
			for k := range perCommit {
				if _, err := app.Append(0, ls(k), now, float64(c)); err != nil {
					errs <- fmt.Errorf("commit %d in-order: %w", c, err)
					return
				}
				past := now - 3*hour + int64(k)*7 + 1
				if past < 0 {
					past = now - int64(k) - 1 // early on: late within the head
				}
				if _, err := app.Append(0, ls(perCommit+k), past, float64(c)); err != nil {
					errs <- fmt.Errorf("commit %d late at %d: %w", c, past, err)
					return
				}
			}
			if err := app.Commit(); err != nil {
				errs <- err
				return
			}
			commits.Store(c)
		}
	}()
	// Compactor.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := db.Compact(context.Background()); err != nil {
				errs <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	// Readers: every value (commit) is seen 2*perCommit times or not at
	// all, and every commit completed before the querier was created is
	// seen.
	reads := atomic.Int64{}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				done := commits.Load()
				q, err := db.Querier(MinSampleTime, MaxSampleTime)
				if err != nil {
					errs <- err
					return
				}
				seen := map[float64]int{}
				for _, ss := range querySamples(t, q) {
					for _, s := range ss {
						seen[s.V]++
					}
				}
				q.Close()
				for c, n := range seen {
					if n != 2*perCommit {
						errs <- fmt.Errorf("commit %v seen %d times, want %d (blocks %v)", c, n, 2*perCommit, db.Blocks())
						return
					}
				}
				for c := int64(1); c <= done; c++ {
					if seen[float64(c)] == 0 {
						errs <- fmt.Errorf("commit %d completed before the query and not seen", c)
						return
					}
				}
				reads.Add(1)
			}
		}()
	}
	// Run until the late samples have been hours behind the head (in
	// ranges compacted long before) for as long again as it took to get
	// there, with reads all along.
	const target = 2 * 3 * hour / 2000
	timeout := time.After(3 * time.Minute)
	for commits.Load() < target || reads.Load() < 100 {
		select {
		case err := <-errs:
			stop.Store(true)
			wg.Wait()
			t.Fatal(err)
		case <-timeout:
			stop.Store(true)
			wg.Wait()
			t.Fatalf("after 3 minutes: %d commits, %d reads", commits.Load(), reads.Load())
		case <-time.After(10 * time.Millisecond):
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	require.Positive(t, overlappingBlocksSeen(t, db), "late samples went into blocks")
}

// overlappingBlocksSeen returns the number of blocks whose compaction
// sources include more than one level-1 block of the same range, or that
// overlap another: either shows late samples went into blocks of their
// own.
func overlappingBlocksSeen(t *testing.T, db *DB) int {
	t.Helper()
	n := overlappingBlocks(db)
	for _, m := range db.Blocks() {
		if len(m.Compaction.Sources) > int((m.MaxTime-m.MinTime)/(10*60_000)) {
			n++
		}
	}
	return n
}

// TestLateBehindHeadExtremeWindow: the largest window reaches back
// thousands of centuries; late samples there go into blocks of their own
// ranges like any other, and one beyond it is too old.
func TestLateBehindHeadExtremeWindow(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := lateOpts(fs, time.Duration(math.MaxInt64))
	opts.RetentionDuration = time.Duration(math.MaxInt64)
	db, _ := openTestDB(t, opts)
	ls := []labels.Labels{labels.FromStrings("__name__", "extreme")}
	want := map[string][]sample{}
	behindScrapes(t, db, ls, 0, 4*hour, want)

	app := db.Appender(context.Background())
	lateMin := 4*hour - 60_000 - time.Duration(math.MaxInt64).Milliseconds()
	// Retention (its largest value is the window's) will delete the
	// blocks of the very oldest ranges as the head moves on 2h: the
	// samples kept to the end are 3h newer.
	for _, ts := range []int64{lateMin + 3*hour, lateMin + 3*hour + 1, -1e12, -1, hour + 1} {
		_, err := app.Append(0, ls[0], ts, float64(ts))
		require.NoError(t, err, "late sample at %d", ts)
		want[ls[0].String()] = append(want[ls[0].String()], sample{ts, float64(ts)})
	}
	require.NoError(t, app.Commit())
	app = db.Appender(context.Background())
	_, err := app.Append(0, ls[0], lateMin, 0)
	require.NoError(t, err, "the oldest sample the window admits")
	_, err = app.Append(0, ls[0], lateMin-1, 0)
	require.ErrorIs(t, err, ErrTooOldSample)
	require.NoError(t, app.Rollback())
	check := func(stage string) {
		t.Helper()
		require.Equal(t, sortedWant(want), fullRead(t, db), stage)
	}
	check("in the head")
	// The next head compaction takes them.
	behindScrapes(t, db, ls, 4*hour, 6*hour, want)
	require.NoError(t, db.Compact(context.Background()))
	check("after compaction")
	require.GreaterOrEqual(t, db.Head().MinTime(), 4*hour)
	require.NoError(t, db.Close())
	db, _ = openTestDB(t, opts)
	check("after reopening")
}

// TestLateBehindRangeRacingInOrder: a sample behind one appender's
// appendable range can still be in the range of an older appender, which
// may commit an in-order sample at the same time first; the late one must
// then be dropped as a duplicate at Commit, not stored beside it.
func TestLateBehindRangeRacingInOrder(t *testing.T) {
	db, reg := openTestDB(t, lateOpts(vfs.NewMemFS(), 6*time.Hour))
	s := labels.FromStrings("__name__", "race", "s", "s")
	other := labels.FromStrings("__name__", "race", "s", "other")
	commit := func(ls labels.Labels, ts int64, v float64) {
		app := db.Appender(context.Background())
		_, err := app.Append(0, ls, ts, v)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	commit(s, 5*60_000, 1)
	commit(other, hour, 1)
	older := db.Appender(context.Background()) // appendable from 30m on
	_, err := older.Append(0, s, 40*60_000, 2)
	require.NoError(t, err)
	commit(other, 2*hour, 1)
	newer := db.Appender(context.Background()) // appendable from 1h on: 40m is behind
	_, err = newer.Append(0, s, 40*60_000, 3)
	require.NoError(t, err, "behind the newer appender's range, and no sample there yet")
	require.NoError(t, older.Commit())
	require.NoError(t, newer.Commit())
	require.Equal(t, []sample{{5 * 60_000, 1}, {40 * 60_000, 2}}, fullRead(t, db)[s.String()])
	require.Equal(t, 1.0, gaugeWithLabel(t, reg, "tsdb_head_samples_rejected_total", "reason", "duplicate"))
}
