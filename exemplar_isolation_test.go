package tsdb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// TestExemplarIsolation: an exemplar querier sees exactly the commits
// completed before it was made, never a commit in flight when it was made,
// never a rolled-back transaction.
func TestExemplarIsolation(t *testing.T) {
	db, _ := openTestDB(t, exemplarOpts(nil, 100))
	ls := labels.FromStrings("__name__", "m")
	a := db.Appender(context.Background())
	ref, err := a.Append(0, ls, 1, 1)
	require.NoError(t, err)
	_, err = a.AppendExemplar(ref, ls, ex("first", 1, 1))
	require.NoError(t, err)
	require.NoError(t, a.Commit())

	before, err := db.ExemplarQuerier(context.Background())
	require.NoError(t, err)

	// A querier made while the next commit is in flight (its write ID
	// taken, nothing applied yet) must not see it, even after it ends.
	var during ExemplarQuerier
	// (From another goroutine: the committing one holds head.closeMu,
	// which comes after DB.mu in the lock order.)
	db.head.commitHook = func(_ *headAppender, i int) {
		if i == 0 && during == nil {
			done := make(chan struct{})
			go func() {
				defer close(done)
				during, err = db.ExemplarQuerier(context.Background())
			}()
			<-done
		}
	}
	t.Cleanup(func() { db.head.commitHook = nil })
	a = db.Appender(context.Background())
	_, err = a.Append(ref, ls, 2, 2)
	require.NoError(t, err)
	_, err = a.AppendExemplar(ref, ls, ex("second", 2, 2))
	require.NoError(t, err)
	require.NoError(t, a.Commit())
	require.NoError(t, err)
	require.NotNil(t, during)
	db.head.commitHook = nil

	// A rolled-back transaction's exemplars never appear, and it leaves
	// its series unpinned.
	a = db.Appender(context.Background())
	_, err = a.AppendExemplar(ref, ls, ex("rolled back", 3, 3))
	require.NoError(t, err)
	s := db.head.series.getByRef(ref)
	s.mu.Lock()
	require.Equal(t, int32(1), s.pending, "an exemplar pins its series")
	s.mu.Unlock()
	require.NoError(t, a.Rollback())
	s.mu.Lock()
	require.Zero(t, s.pending)
	s.mu.Unlock()

	after, err := db.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	want1 := []string{`{__name__="m"}: first@1=1`}
	want2 := []string{`{__name__="m"}: first@1=1 second@2=2`}
	require.Equal(t, want1, exemplarTraces(selectAll(t, before)))
	require.Equal(t, want1, exemplarTraces(selectAll(t, during)))
	require.Equal(t, want2, exemplarTraces(selectAll(t, after)))

	// With exemplars of a commit of exemplars only, too.
	a = db.Appender(context.Background())
	_, err = a.AppendExemplar(ref, ls, ex("third", 3, 3))
	require.NoError(t, err)
	require.Equal(t, want2, exemplarTraces(selectAll(t, after)), "not before Commit")
	require.NoError(t, a.Commit())
	require.Equal(t, want2, exemplarTraces(selectAll(t, after)), "not for a querier made before")
	require.Equal(t, []string{`{__name__="m"}: first@1=1 second@2=2 third@3=3`}, exemplarTraces(allExemplars(t, db)))

	// Exemplar queriers hold no read: the low watermark moves on.
	_, inflight := db.head.iso.stats()
	require.Zero(t, inflight)
	openReads, _ := db.head.iso.stats()
	require.Zero(t, openReads, "exemplar queriers are not open reads")
}

// TestExemplarIsolationDisabled: with isolation off, exemplars are
// visible once applied; the querier still works.
func TestExemplarIsolationDisabled(t *testing.T) {
	o := exemplarOpts(nil, 10)
	o.IsolationDisabled = true
	db, _ := openTestDB(t, o)
	ls := labels.FromStrings("__name__", "m")
	a := db.Appender(context.Background())
	ref, err := a.Append(0, ls, 1, 1)
	require.NoError(t, err)
	_, err = a.AppendExemplar(ref, ls, ex("a", 1, 1))
	require.NoError(t, err)
	require.NoError(t, a.Commit())
	require.Equal(t, []string{`{__name__="m"}: a@1=1`}, exemplarTraces(allExemplars(t, db)))
}

// TestExemplarConcurrentWholeCommits: writers commit, round after round,
// a sample and an exemplar to each of their series (one trace ID per
// commit) while readers query; every reader sees each commit's exemplars
// in all of the writer's series or in none. The ring is large enough to
// hold everything, so that eviction cannot explain a partial view. Run
// with -race.
func TestExemplarConcurrentWholeCommits(t *testing.T) {
	const writers, seriesPer, readers = 3, 4, 2
	rounds := 150
	if testing.Short() {
		rounds = 40
	}
	db, _ := openTestDB(t, exemplarOpts(nil, int64(writers*seriesPer*rounds)))
	var done atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, writers+readers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refs := make([]SeriesRef, seriesPer)
			for round := range rounds {
				a := db.Appender(context.Background())
				trace := fmt.Sprintf("w%d-r%d", w, round)
				for i := range seriesPer {
					ls := labels.FromStrings("__name__", "m", "w", fmt.Sprint(w), "i", fmt.Sprint(i))
					ref, err := a.Append(refs[i], ls, int64(round), float64(round))
					if err != nil {
						errc <- err
						return
					}
					refs[i] = ref
					if _, err := a.AppendExemplar(ref, ls, ex(trace, float64(round), int64(round))); err != nil {
						errc <- err
						return
					}
				}
				if err := a.Commit(); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	var rwg sync.WaitGroup
	for range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for !done.Load() {
				q, err := db.ExemplarQuerier(context.Background())
				if err != nil {
					errc <- err
					return
				}
				res, err := q.Select(0, int64(rounds), []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")})
				if err != nil {
					errc <- err
					return
				}
				seen := map[string]int{}
				for _, r := range res {
					for _, e := range r.Exemplars {
						seen[e.Labels.Get("trace_id")]++
					}
				}
				for trace, n := range seen {
					if n != seriesPer {
						errc <- fmt.Errorf("commit %s seen in %d of its %d series", trace, n, seriesPer)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rwg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	n := 0
	for _, r := range allExemplars(t, db) {
		n += len(r.Exemplars)
	}
	require.Equal(t, writers*seriesPer*rounds, n)
	require.NoError(t, db.head.exemplars.checkInvariants(db.head.iso))
}

// TestExemplarResizeRacingAppends changes MaxExemplars at random while
// writers commit exemplars and readers query; nothing panics or races,
// the storage's invariants hold at the end, and the ring holds no more
// than the final limit. Run with -race.
func TestExemplarResizeRacingAppends(t *testing.T) {
	db, _ := openTestDB(t, exemplarOpts(nil, 10))
	var wg sync.WaitGroup
	var stop atomic.Bool
	errc := make(chan error, 8)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ls := labels.FromStrings("__name__", "m", "w", fmt.Sprint(w))
			var ref SeriesRef
			for i := 0; !stop.Load(); i++ {
				a := db.Appender(context.Background())
				var err error
				if ref, err = a.Append(ref, ls, int64(i), 1); err != nil {
					errc <- err
					return
				}
				// Exemplars may be off at the moment: that error is fine.
				if _, err := a.AppendExemplar(ref, ls, ex(fmt.Sprint(i), 1, int64(i))); err != nil && !errorIsExemplarsDisabled(err) {
					errc <- err
					return
				}
				if err := a.Commit(); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			q, err := db.ExemplarQuerier(context.Background())
			if err != nil {
				errc <- err
				return
			}
			if _, err := q.Select(0, 1<<40, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "m")}); err != nil {
				errc <- err
				return
			}
		}
	}()
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		require.NoError(t, db.SetMaxExemplars(int64(r.IntN(30))-3))
	}
	require.NoError(t, db.SetMaxExemplars(7))
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	require.NoError(t, db.head.exemplars.checkInvariants(db.head.iso))
	n := 0
	for _, r := range allExemplars(t, db) {
		n += len(r.Exemplars)
	}
	require.LessOrEqual(t, n, 7)
}

func errorIsExemplarsDisabled(err error) bool {
	return errors.Is(err, ErrExemplarsDisabled)
}

// TestExemplarLeakedAppender: an exemplar pins its series against
// truncation until its transaction ends, also when the Appender is
// dropped without Commit or Rollback (the garbage collector releases it),
// and its exemplar never appears.
func TestExemplarLeakedAppender(t *testing.T) {
	db, reg := openTestDB(t, exemplarOpts(nil, 10))
	ls := labels.FromStrings("__name__", "m")
	app := db.Appender(context.Background())
	_, err := app.Append(0, ls, 10, 1)
	require.NoError(t, err)
	require.NoError(t, app.Rollback()) // the series exists, without samples
	func() {
		app := db.Appender(context.Background())
		_, err := app.AppendExemplar(0, ls, ex("leaked", 1, 10))
		require.NoError(t, err)
		// app is dropped here.
	}()
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_head_open_appenders"))
	db.head.truncate(0, 0)
	require.Equal(t, int64(1), db.head.NumSeries(), "the exemplar's series is pinned")
	deadline := time.Now().Add(20 * time.Second)
	for gauge(t, reg, "tsdb_head_open_appenders") != 0 {
		if time.Now().After(deadline) {
			require.FailNow(t, "leaked appender never released")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	db.head.truncate(0, 0)
	require.Equal(t, int64(0), db.head.NumSeries(), "released: the series was removable")
	require.Empty(t, allExemplars(t, db))
}
