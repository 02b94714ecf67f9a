package tsdb

import (
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// advDelMatcher selects 3 of the base DB's series.
func advDelMatcher(base advBase) *labels.Matcher {
	var names []string
	for _, l := range base.lsets[:3] {
		names = append(names, l.Get(labels.MetricName))
	}
	return labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, strings.Join(names, "|"))
}

// advDeleted is want after Delete(mint, maxt, m).
func advDeleted(want map[string][]sample, lsets []labels.Labels, m *labels.Matcher, mint, maxt int64) map[string][]sample {
	out := map[string][]sample{}
	del := map[string]bool{}
	for _, l := range lsets {
		if m.Matches(l.Get(m.Name)) {
			del[l.String()] = true
		}
	}
	for k, ss := range want {
		if !del[k] {
			out[k] = ss
			continue
		}
		var keep []sample
		for _, s := range ss {
			if s.T < mint || s.T > maxt {
				keep = append(keep, s)
			}
		}
		if len(keep) > 0 {
			out[k] = keep
		}
	}
	return out
}

// TestAdversarialFaults fails, for each operation, every one of its
// filesystem operations in turn (EIO) and checks: no panic or hang; the
// DB keeps serving exactly the data it had (or, for Delete, the data
// with the delete done) and takes writes; a retry succeeds; after a
// reopen the data is whole, no temporary directory is left or taken for
// a block, and the consistency checker finds nothing.
func TestAdversarialFaults(t *testing.T) {
	base := advBaseDB(t)
	delMint, delMaxt := int64(3600_000), int64(6*3600_000)
	deleted := advDeleted(base.want, base.lsets, advDelMatcher(base), delMint, delMaxt)
	doDelete := func(db *DB) error { return db.Delete(ctx, delMint, delMaxt, advDelMatcher(base)) }
	ops := []struct {
		name string
		// pre runs before the attacked operation (no faults).
		pre func(db *DB) error
		run func(db *DB) error
		// before and after are the states a full query may return; a
		// failed run may leave either, a successful one gives after.
		before, after map[string][]sample
		snapshot      bool
	}{
		{"compact", nil, func(db *DB) error { return db.Compact(ctx) }, base.want, base.want, false},
		{"snapshot", nil, func(db *DB) error { return db.Snapshot("snap", true) }, base.want, base.want, true},
		{"delete", nil, doDelete, base.want, deleted, false},
		{"cleanTombstones", doDelete, func(db *DB) error { return db.CleanTombstones(ctx) }, deleted, deleted, false},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			open := func() (*DB, *vfs.MemFS) {
				fsys := base.fs.Crash()
				db, err := openAdv(fsys, nil)
				require.NoError(t, err)
				if op.pre != nil {
					require.NoError(t, op.pre(db))
				}
				return db, fsys
			}
			// Count the operation's filesystem calls.
			db, fsys := open()
			var calls atomic.Int64
			fsys.SetHook(func(vfs.Op, string) error { calls.Add(1); return nil })
			require.NoError(t, op.run(db))
			fsys.SetHook(nil)
			require.NoError(t, db.Close())
			n := int(calls.Load())
			stride := max(1, n/150)
			if raceEnabled {
				stride = max(1, n/20)
			}
			t.Logf("%s: %d filesystem calls, failing every %d-th", op.name, n, stride)
			for k := 1; k <= n; k += stride {
				db, fsys := open()
				var seen atomic.Int64
				var failed atomic.Value
				fsys.SetHook(func(o vfs.Op, path string) error {
					if seen.Add(1) == int64(k) {
						failed.Store(fmt.Sprintf("%s %s", o, path))
						return syscall.EIO
					}
					return nil
				})
				err := op.run(db)
				fsys.SetHook(nil)
				what, _ := failed.Load().(string)
				if err != nil {
					require.NotErrorIs(t, err, ErrClosed, "fault at %s", what)
				}
				walFault := strings.Contains(what, "data/wal")

				// Reads serve the old or the new state, whole.
				got, qerr := fullQuery(db)
				require.NoError(t, qerr, "query after fault at %s (op error: %v)", what, err)
				if err == nil || !sameData(got, op.before) {
					requireSameSamples(t, op.after, got)
				}
				// Writes still work (a WAL fault makes the WAL fail until a reopen).
				ts := int64(advRounds+500) * 15000
				app := db.Appender(ctx)
				_, aerr := app.Append(0, base.lsets[5], ts, 7)
				require.NoError(t, aerr)
				cerr := app.Commit()
				if walFault && cerr != nil {
					require.ErrorIs(t, cerr, ErrWAL)
				} else {
					require.NoError(t, cerr, "commit after fault at %s (op error: %v)", what, err)
				}
				// A retry succeeds.
				if !walFault || err == nil {
					if op.snapshot && err == nil {
						require.NoError(t, fsys.RemoveAll("snap"))
					}
					require.NoError(t, op.run(db), "retry after fault at %s (first error: %v)", what, err)
				}
				_ = db.Close()

				// Reopen: whole data, no leftovers, consistent.
				db2, err2 := openAdv(fsys, nil)
				require.NoError(t, err2, "reopen after fault at %s", what)
				got, qerr = fullQuery(db2)
				require.NoError(t, qerr)
				want := op.after
				if walFault && err != nil && sameData(withoutSeriesSample(got, base.lsets[5], ts), op.before) {
					want = op.before
				}
				requireSameSamples(t, want, withoutSeriesSample(got, base.lsets[5], ts))
				require.NoError(t, db2.Close())
				ents, err3 := fsys.ReadDir("data")
				require.NoError(t, err3)
				for _, e := range ents {
					require.False(t, isTmpDir(e.Name()), "leftover %s after reopen (fault at %s)", e.Name(), what)
				}
				rootEnts, err3 := fsys.ReadDir("/")
				require.NoError(t, err3)
				for _, e := range rootEnts {
					require.False(t, isTmpDir(e.Name()), "leftover %s next to the snapshot (fault at %s, op error %v)", e.Name(), what, err)
				}
				rep, err3 := check.Dir(fsys, "data")
				require.NoError(t, err3)
				require.NoError(t, rep.Err(), "consistency after fault at %s", what)
				if op.snapshot {
					if _, serr := fsys.Stat("snap"); serr == nil {
						sdb, serr := Open("snap", nil, nil, &Options{FS: fsys, NoWAL: true})
						require.NoError(t, serr)
						sgot, qerr := fullQuery(sdb)
						require.NoError(t, qerr)
						requireSameSamples(t, base.want, withoutSeriesSample(sgot, base.lsets[5], ts))
						require.NoError(t, sdb.Close())
					}
				}
			}
		})
	}
}

// withoutSeriesSample returns got without the sample at ts of series l.
func withoutSeriesSample(got map[string][]sample, l labels.Labels, ts int64) map[string][]sample {
	out := map[string][]sample{}
	for k, ss := range got {
		if k == l.String() && len(ss) > 0 && ss[len(ss)-1].T == ts {
			ss = ss[:len(ss)-1]
		}
		if len(ss) > 0 {
			out[k] = ss
		}
	}
	return out
}

// openCloseFaults fails each filesystem call of Open and of Close of a
// copy of the base DB (prep may add files) and returns, for each, the
// fault and what a clean Open serves afterwards. The failed call must
// return an error or succeed, never panic or hang; a failed Open must
// leave the directory unlocked.
func openCloseFaults(t *testing.T, prep func() *vfs.MemFS, check func(t *testing.T, what string, err error, got map[string][]sample)) {
	for _, phase := range []string{"open", "close"} {
		t.Run(phase, func(t *testing.T) {
			fsys := prep()
			var calls atomic.Int64
			fsys.SetHook(func(vfs.Op, string) error { calls.Add(1); return nil })
			db, err := openAdv(fsys, nil)
			require.NoError(t, err)
			opens := calls.Load()
			require.NoError(t, db.Close())
			n := int(calls.Load())
			from, to := 1, int(opens)
			if phase == "close" {
				from, to = int(opens)+1, n
			}
			stride := 1
			if raceEnabled {
				stride = max(1, (to-from)/30)
			}
			t.Logf("%s: filesystem calls %d..%d", phase, from, to)
			for k := from; k <= to; k += stride {
				fsys := prep()
				var seen atomic.Int64
				var what atomic.Value
				fsys.SetHook(func(o vfs.Op, path string) error {
					if seen.Add(1) == int64(k) {
						what.Store(fmt.Sprintf("%s %s", o, path))
						return syscall.EIO
					}
					return nil
				})
				db, err := openAdv(fsys, nil)
				if err == nil {
					err = db.Close()
				}
				fsys.SetHook(nil)
				w, _ := what.Load().(string)
				db, err2 := openAdv(fsys, nil)
				require.NoError(t, err2, "open after fault at %s", w)
				got, qerr := fullQuery(db)
				require.NoError(t, qerr)
				require.NoError(t, db.Close())
				check(t, w, err, got)
			}
		})
	}
}

// TestAdversarialOpenCloseFaults: after a fault in Open or Close, the next
// Open serves every acknowledged sample.
func TestAdversarialOpenCloseFaults(t *testing.T) {
	base := advBaseDB(t)
	openCloseFaults(t, base.fs.Crash, func(t *testing.T, what string, err error, got map[string][]sample) {
		require.True(t, sameData(base.want, got), "fault at %s (error %v): data not whole after reopen", what, err)
	})
}

// TestAdversarialOpenFaultSplitsInterruptedDelete: Open resumes a Delete
// that a crash interrupted. A transient I/O error while Open opened a
// block used to make it skip the block as corrupt; resumeDelete then
// applied the delete to the other blocks and the head and removed the
// intent, and at the next Open the block was back without the tombstones:
// the delete applied in part, deleted samples back. Now a fault in a
// block's files fails Open with an error naming the block and wrapping the
// cause (not ErrCorruptBlock), the intent stays, and the retry Open
// completes the delete everywhere.
func TestAdversarialOpenFaultSplitsInterruptedDelete(t *testing.T) {
	base := advBaseDB(t)
	m := advDelMatcher(base)
	deleted := advDeleted(base.want, base.lsets, m, 0, 5*3600_000)
	prep := func() *vfs.MemFS {
		fsys := base.fs.Crash()
		mustWrite(t, fsys, "data/"+deleteIntentFile, []byte(fmt.Sprintf(`{"mint":0,"maxt":%d,"matchers":[{"type":%d,"name":%q,"value":%q}]}`, 5*3600_000, m.Type, m.Name, m.Value)))
		return fsys
	}
	blockFaults := 0
	openCloseFaults(t, prep, func(t *testing.T, what string, err error, got map[string][]sample) {
		// Whatever failed, the retry Open completed the delete.
		require.True(t, sameData(deleted, got), "fault at %s (error %v): after the retry the interrupted delete is not complete", what, err)
		for _, b := range base.blocks {
			id := b.ULID.String()
			if !strings.Contains(what, id) {
				continue
			}
			blockFaults++
			require.Error(t, err, "fault at %s: Open succeeded", what)
			require.Contains(t, err.Error(), id, "fault at %s: error does not name the block", what)
			require.ErrorIs(t, err, syscall.EIO, "fault at %s: error does not wrap the cause", what)
			require.NotErrorIs(t, err, ErrCorruptBlock, "fault at %s: a transient fault reported as a corrupt block", what)
		}
	})
	require.NotZero(t, blockFaults, "no fault hit a block's files")
}
