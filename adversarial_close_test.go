package tsdb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestAdversarialUseAfterClose calls every method of every object after
// it was closed: each returns the documented error, never panics.
func TestAdversarialUseAfterClose(t *testing.T) {
	base := advBaseDB(t)
	l := base.lsets[0]
	ts := int64(advRounds+100) * 15000
	all := labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")

	t.Run("appender", func(t *testing.T) {
		db, err := openAdv(base.fs.Crash(), nil)
		require.NoError(t, err)
		defer db.Close()
		for _, end := range []string{"commit", "rollback"} {
			app := db.Appender(ctx)
			_, err := app.Append(0, l, ts, 1)
			require.NoError(t, err)
			if end == "commit" {
				require.NoError(t, app.Commit())
			} else {
				require.NoError(t, app.Rollback())
			}
			_, err = app.Append(0, l, ts+1, 1)
			require.ErrorIs(t, err, ErrAppenderClosed, end)
			_, err = app.AppendHistogram(0, l, ts+1, crashHistogram(1), nil)
			require.ErrorIs(t, err, ErrAppenderClosed, end)
			_, err = app.AppendHistogram(0, l, ts+1, nil, nil) // invalid too: closed comes first
			require.ErrorIs(t, err, ErrAppenderClosed, end)
			_, err = app.AppendST(0, l, 1, ts+1, 1, nil, nil)
			require.ErrorIs(t, err, ErrAppenderClosed, end)
			require.ErrorIs(t, app.Commit(), ErrAppenderClosed, end)
			require.ErrorIs(t, app.Rollback(), ErrAppenderClosed, end)
			ts += 10
		}
		// An empty commit, then use.
		app := db.Appender(ctx)
		require.NoError(t, app.Commit())
		_, err = app.Append(0, l, ts, 1)
		require.ErrorIs(t, err, ErrAppenderClosed)
		// A rejected sample does not close the appender.
		app = db.Appender(ctx)
		_, err = app.Append(0, l, 0, 1)
		require.ErrorIs(t, err, ErrOutOfBounds)
		_, err = app.Append(0, l, ts+100, 1)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	})

	t.Run("querier", func(t *testing.T) {
		db, err := openAdv(base.fs.Crash(), nil)
		require.NoError(t, err)
		defer db.Close()
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		require.NoError(t, q.Close())
		require.NoError(t, q.Close(), "second Close")
		ss := q.Select(ctx, all)
		require.False(t, ss.Next())
		require.ErrorIs(t, ss.Err(), ErrClosed)
		_, err = q.LabelValues(ctx, "job")
		require.ErrorIs(t, err, ErrClosed)
		_, err = q.LabelValues(ctx, "job", all)
		require.ErrorIs(t, err, ErrClosed)
		_, err = q.LabelNames(ctx)
		require.ErrorIs(t, err, ErrClosed)
		_, err = q.LabelNames(ctx, all)
		require.ErrorIs(t, err, ErrClosed)
	})

	t.Run("db", func(t *testing.T) {
		fsys := base.fs.Crash()
		db, err := openAdv(fsys, nil)
		require.NoError(t, err)
		app := db.Appender(ctx) // from before Close
		require.NoError(t, db.Close())
		require.NoError(t, db.Close(), "second Close")
		_, err = db.Appender(ctx).Append(0, l, ts, 1)
		require.ErrorIs(t, err, ErrClosed)
		_, err = db.Appender(ctx).AppendHistogram(0, l, ts, crashHistogram(1), nil)
		require.ErrorIs(t, err, ErrClosed)
		_, err = db.Appender(ctx).AppendST(0, l, 1, ts, 0, nil, crashHistogram(1).ToFloat())
		require.ErrorIs(t, err, ErrClosed)
		_, err = app.AppendHistogram(0, l, ts, crashHistogram(1), nil)
		require.ErrorIs(t, err, ErrClosed, "an appender from before Close")
		require.ErrorIs(t, db.Appender(ctx).Commit(), ErrClosed)
		require.NoError(t, db.Appender(ctx).Rollback(), "Rollback cannot fail: nothing became visible")
		require.NoError(t, app.Rollback(), "an appender from before Close can still be rolled back")
		_, err = db.Querier(0, 1)
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, db.Delete(ctx, 0, 1, all), ErrClosed)
		require.ErrorIs(t, db.CleanTombstones(ctx), ErrClosed)
		require.ErrorIs(t, db.Compact(ctx), ErrClosed)
		require.ErrorIs(t, db.Snapshot("snap", true), ErrClosed)
		require.ErrorIs(t, db.Snapshot("snap2", false), ErrClosed)
		_, err = fsys.Stat("snap")
		require.Error(t, err, "no snapshot of a closed DB")
		require.Empty(t, db.Blocks(), "a closed DB lists no blocks")
		// The directory is free again.
		db2, err := openAdv(fsys, nil)
		require.NoError(t, err)
		require.NoError(t, db2.Close())
	})

	t.Run("querier-outlives-db", func(t *testing.T) {
		db, err := openAdv(base.fs.Crash(), nil)
		require.NoError(t, err)
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		// The querier's snapshot stays readable, or says ErrClosed.
		got := map[string][]sample{}
		ss := q.Select(ctx, all)
		for ss.Next() {
			it := ss.At().Iterator(nil)
			var s []sample
			for it.Next() != chunks.ValNone {
				t, v := it.At()
				s = append(s, sample{t, v})
			}
			if it.Err() != nil {
				require.ErrorIs(t, it.Err(), ErrClosed)
			}
			got[ss.At().Labels().String()] = s
		}
		if ss.Err() != nil {
			require.ErrorIs(t, ss.Err(), ErrClosed)
		} else {
			requireSameSamples(t, base.want, got)
		}
		for _, f := range []func() error{
			func() error { _, err := q.LabelNames(ctx); return err },
			func() error { _, err := q.LabelValues(ctx, "job"); return err },
			func() error { _, err := q.LabelNames(ctx, all); return err },
		} {
			if err := f(); err != nil {
				require.ErrorIs(t, err, ErrClosed)
			}
		}
		require.NoError(t, q.Close())
	})
}

// TestAdversarialConcurrentClose runs every DB call while the DB closes:
// no panic, race or deadlock; a call that fails says ErrClosed.
func TestAdversarialConcurrentClose(t *testing.T) {
	base := advBaseDB(t)
	all := labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")
	iters := 30
	if raceEnabled {
		iters = 10
	}
	calls := map[string]func(db *DB, i int) error{
		"append": func(db *DB, i int) error {
			// A series of its own per call: two goroutines appending to one
			// series could commit out of time order, and get
			// ErrOutOfOrderSample rightly.
			app := db.Appender(ctx)
			lset := labels.FromStrings(labels.MetricName, "adv_close_append", "call", strconv.Itoa(i))
			if _, err := app.Append(0, lset, int64(advRounds+200+i)*15000, 1); err != nil {
				return err
			}
			_ = app.Commit() // after Close: a known defect, fixed elsewhere
			return nil
		},
		"query": func(db *DB, i int) error {
			q, err := db.Querier(math.MinInt64, math.MaxInt64)
			if err != nil {
				return err
			}
			defer q.Close()
			ss := q.Select(ctx, all)
			for ss.Next() {
				it := ss.At().Iterator(nil)
				for it.Next() != chunks.ValNone {
				}
				if it.Err() != nil {
					return it.Err()
				}
			}
			if ss.Err() != nil {
				return ss.Err()
			}
			if _, err := q.LabelValues(ctx, "job", all); err != nil {
				return err
			}
			_, err = q.LabelNames(ctx)
			return err
		},
		"delete": func(db *DB, i int) error {
			return db.Delete(ctx, 0, int64(i)*1000, labels.MustNewMatcher(labels.MatchEqual, "job", "none"))
		},
		"cleanTombstones": func(db *DB, i int) error { return db.CleanTombstones(ctx) },
		"compact":         func(db *DB, i int) error { return db.Compact(ctx) },
		"snapshot": func(db *DB, i int) error {
			return db.Snapshot(fmt.Sprintf("snap-%d", i), i%2 == 0)
		},
		"blocks": func(db *DB, i int) error { _ = db.Blocks(); return nil },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			for it := 0; it < iters; it++ {
				fsys := base.fs.Crash()
				db, err := openAdv(fsys, nil)
				require.NoError(t, err)
				var wg sync.WaitGroup
				errs := make(chan error, 64)
				start := make(chan struct{})
				for g := 0; g < 3; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						for i := 0; i < 4; i++ {
							if err := call(db, g*10+i); err != nil {
								errs <- err
								if errors.Is(err, ErrClosed) {
									return
								}
							}
						}
					}()
				}
				close(start)
				require.NoError(t, db.Close())
				wg.Wait()
				close(errs)
				for err := range errs {
					require.ErrorIs(t, err, ErrClosed, "%s during Close", name)
				}
				// What the calls left opens whole.
				db2, err := openAdv(fsys, nil)
				require.NoError(t, err)
				got, err := fullQuery(db2)
				require.NoError(t, err)
				require.GreaterOrEqual(t, len(got), len(base.want))
				require.NoError(t, db2.Close())
				_ = vfs.OpRead
			}
		})
	}
}

// TestAdversarialBlocksAliasing: Blocks returns a read-only view; a caller
// that changes what it got must not change the DB.
func TestAdversarialBlocksAliasing(t *testing.T) {
	base := advBaseDB(t)
	db, err := openAdv(base.fs.Crash(), nil)
	require.NoError(t, err)
	defer db.Close()
	before := db.Blocks()
	require.NotEmpty(t, before[0].Compaction.Sources)
	want := fmt.Sprint(before)
	got := db.Blocks()
	for i := range got {
		for j := range got[i].Compaction.Sources {
			got[i].Compaction.Sources[j][0] ^= 0xff
		}
		got[i].Compaction.Parents = append(got[i].Compaction.Parents[:0], BlockDesc{MinTime: 1})
	}
	require.Equal(t, want, fmt.Sprint(db.Blocks()), "Blocks' result aliases the DB's metadata")
}

// TestAdversarialQuerierConcurrentUse uses one Querier from many
// goroutines at once (it is documented safe for concurrent use), with a
// cancelled context in some of them.
func TestAdversarialQuerierConcurrentUse(t *testing.T) {
	base := advBaseDB(t)
	db, err := openAdv(base.fs.Crash(), nil)
	require.NoError(t, err)
	defer db.Close()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	all := labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if g == 3 {
					ss := q.Select(cancelled, all)
					for ss.Next() {
					}
					if ss.Err() != nil && !errors.Is(ss.Err(), context.Canceled) {
						errs <- ss.Err()
					}
					continue
				}
				got := map[string][]sample{}
				ss := q.Select(ctx, all)
				for ss.Next() {
					it := ss.At().Iterator(nil)
					var s []sample
					for it.Next() != chunks.ValNone {
						ts, v := it.At()
						s = append(s, sample{ts, v})
					}
					got[ss.At().Labels().String()] = s
				}
				if ss.Err() != nil {
					errs <- ss.Err()
					return
				}
				if !sameData(base.want, got) {
					errs <- fmt.Errorf("goroutine %d: different data", g)
				}
				if _, err := q.LabelValues(ctx, "job", all); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err) // report every goroutine's error
	}
}
