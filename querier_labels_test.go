package tsdb

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// labelView is what a querier's label queries return, with and without a
// matcher that every test series satisfies.
type labelView struct {
	values, valuesM []string // of "job"
	names, namesM   []string
}

func viewLabels(t *testing.T, q Querier) labelView {
	t.Helper()
	m := labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "up")
	var v labelView
	var err error
	v.values, err = q.LabelValues(ctx, "job")
	require.NoError(t, err)
	v.valuesM, err = q.LabelValues(ctx, "job", m)
	require.NoError(t, err)
	v.names, err = q.LabelNames(ctx)
	require.NoError(t, err)
	v.namesM, err = q.LabelNames(ctx, m)
	require.NoError(t, err)
	return v
}

// requireLabels checks all four views of q against the expected job values
// and label names.
func requireLabels(t *testing.T, q Querier, jobs, names []string) {
	t.Helper()
	v := viewLabels(t, q)
	require.Equal(t, jobs, v.values, "LabelValues(job) without matchers")
	require.Equal(t, jobs, v.valuesM, "LabelValues(job) with a matcher")
	require.Equal(t, names, v.names, "LabelNames without matchers")
	require.Equal(t, names, v.namesM, "LabelNames with a matcher")
}

// labelsAt checks the label queries of a new querier over [mint, maxt].
func labelsAt(t *testing.T, db *DB, mint, maxt int64, jobs, names []string) {
	t.Helper()
	q, err := db.Querier(mint, maxt)
	require.NoError(t, err)
	defer q.Close()
	requireLabels(t, q, jobs, names)
}

// secretSeries is the series only uncommitted appenders write: its job
// value and its label name "secret" must never show.
var secretSeries = labels.FromStrings(labels.MetricName, "up", "job", "secret", "secret", "x")

// TestLabelQueriesHideUncommitted: the series of a rolled-back Appender, an
// open Appender and a commit in flight show in no label query, with or
// without matchers, over the head alone or with a block; a commit shows
// once complete, to queriers created after it only.
func TestLabelQueriesHideUncommitted(t *testing.T) {
	pub := labels.FromStrings(labels.MetricName, "up", "job", "public")
	secret2 := labels.FromStrings(labels.MetricName, "up", "job", "secret2", "secret", "y")
	wantJobs, wantNames := []string{"public"}, []string{labels.MetricName, "job"}
	hour := time.Hour.Milliseconds()
	for _, withBlock := range []bool{false, true} {
		for _, kind := range []string{"rollback", "open", "inflight"} {
			t.Run(fmt.Sprintf("%s/block=%v", kind, withBlock), func(t *testing.T) {
				o := DefaultOptions()
				o.MinBlockDuration = time.Hour
				db, _ := openTestDB(t, o)
				commit := func(ls labels.Labels, ts int64) {
					app := db.Appender(ctx)
					_, err := app.Append(0, ls, ts, 1)
					require.NoError(t, err)
					require.NoError(t, app.Commit())
				}
				commit(pub, 0)
				base := int64(0)
				if withBlock {
					// The first hour goes into a block; the head keeps 2h on.
					commit(pub, 2*hour)
					require.NoError(t, db.Compact(ctx))
					require.Len(t, db.Blocks(), 1)
					base = 2 * hour
				}
				// check runs the label queries over the whole range and, with
				// a block, over the block's range alone (head not read).
				check := func(jobs, names []string) {
					t.Helper()
					labelsAt(t, db, math.MinInt64, math.MaxInt64, jobs, names)
					if withBlock {
						labelsAt(t, db, 0, hour-1, wantJobs, wantNames)
					}
				}

				app := db.Appender(ctx)
				_, err := app.Append(0, secretSeries, base+1000, 1)
				require.NoError(t, err)
				switch kind {
				case "rollback":
					require.NoError(t, app.Rollback())
					check(wantJobs, wantNames)
				case "open":
					check(wantJobs, wantNames)
					require.NoError(t, app.Rollback())
				case "inflight":
					// Paused before its third sample: the secret series has
					// its sample in the head, secret2 is created but empty.
					_, err = app.Append(0, secret2, base+1000, 1)
					require.NoError(t, err)
					_, err = app.Append(0, pub, base+1000, 1)
					require.NoError(t, err)
					pc := newCommitGate(t, db.head).commitPaused(app, 2)
					during, err := db.Querier(math.MinInt64, math.MaxInt64)
					require.NoError(t, err)
					requireLabels(t, during, wantJobs, wantNames)
					check(wantJobs, wantNames)
					pc.finish(t)
					requireLabels(t, during, wantJobs, wantNames)
					require.NoError(t, during.Close())
					check([]string{"public", "secret", "secret2"}, []string{labels.MetricName, "job", "secret"})
				}
			})
		}
	}
}

// TestLabelQueriesTimeRange: a series with no sample in the querier's range
// is not listed, in the head and in blocks, and neither is one whose
// samples in range are all deleted.
func TestLabelQueriesTimeRange(t *testing.T) {
	o := DefaultOptions()
	o.MinBlockDuration = time.Hour
	db, _ := openTestDB(t, o)
	minute := time.Minute.Milliseconds()
	series := func(job string) labels.Labels {
		return labels.FromStrings(labels.MetricName, "up", "job", job, "only_"+job, "x")
	}
	type point struct {
		job string
		ts  int64
	}
	var points []point
	write := func(job string, ts ...int64) {
		for _, ts := range ts {
			points = append(points, point{job, ts})
		}
	}
	names := func(jobs ...string) []string {
		out := []string{labels.MetricName, "job"}
		for _, j := range jobs {
			out = append(out, "only_"+j)
		}
		slices.Sort(out)
		return out
	}
	// First hour, into a block: early at the start, spans has one sample
	// before and one after [10m, 40m], late in [30m, 59m].
	write("early", 0, minute)
	write("spans", 0, 50*minute)
	write("late", 30*minute, 59*minute)
	write("gone", 20*minute, 21*minute)
	// Head: hearly at 2h, hspans around [2h10m, 2h40m], hlate at 2h30m on.
	h := 120 * minute
	write("hearly", h, h+minute)
	write("hspans", h, h+50*minute)
	write("hlate", h+30*minute, h+59*minute)
	write("hgone", h+20*minute, h+21*minute)
	write("keep", h+80*minute) // the head spans 200m: the first hour is cut, no more
	// In time order: the head accepts samples up to 30m behind its newest.
	slices.SortStableFunc(points, func(a, b point) int { return int(a.ts - b.ts) })
	for _, p := range points {
		app := db.Appender(ctx)
		_, err := app.Append(0, series(p.job), p.ts, 1)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.Len(t, db.Blocks(), 1)

	require.NoError(t, db.Delete(ctx, math.MinInt64, math.MaxInt64, labels.MustNewMatcher(labels.MatchRegexp, "job", "h?gone")))

	labelsAt(t, db, 10*minute, 40*minute, []string{"late"}, names("late"))
	labelsAt(t, db, 2*minute, 59*minute, []string{"late", "spans"}, names("late", "spans"))
	labelsAt(t, db, h+10*minute, h+40*minute, []string{"hlate"}, names("hlate"))
	labelsAt(t, db, h+2*minute, h+59*minute, []string{"hlate", "hspans"}, names("hlate", "hspans"))
	labelsAt(t, db, 30*minute, h, []string{"hearly", "hspans", "late", "spans"},
		names("hearly", "hspans", "late", "spans"))
	labelsAt(t, db, 4*h, 5*h, nil, nil)
	labelsAt(t, db, h+70*minute, 4*h, []string{"keep"}, names("keep"))
}

// TestLabelQueriesRollbackStress: writers commit some appenders and roll
// back or abandon others whose label values and names are their own, while
// queriers are created continuously. No label query ever lists a value or
// name of an uncommitted appender, and every one lists each value committed
// before its querier was created.
func TestLabelQueriesRollbackStress(t *testing.T) {
	o := DefaultOptions()
	o.SamplesPerChunk = 8
	db, _ := openTestDB(t, o)

	var (
		mu        sync.Mutex
		committed []string // distinct values of c whose Commit returned
		stop      atomic.Bool
		wg        sync.WaitGroup
		failed    atomic.Value
		appenders atomic.Int64
	)
	fail := func(format string, args ...any) {
		failed.CompareAndSwap(nil, fmt.Sprintf(format, args...))
		stop.Store(true)
	}
	const writers = 3
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var held []Appender // abandoned for a while, then rolled back
			for n := 0; !stop.Load(); n++ {
				ts := int64(n)
				appenders.Add(1)
				app := db.Appender(ctx)
				commit := n%3 != 0
				// Most committed values come back (their series get commits
				// in flight while queriers see earlier ones); every tenth is
				// new (a series whose first commit is in flight). Values of
				// rolled-back appenders are never committed.
				fresh := n%10 == 1
				val := fmt.Sprintf("w%d-%d", w, n%300)
				switch {
				case !commit:
					val = fmt.Sprintf("rb-w%d-%d", w, n%600)
				case fresh:
					val = fmt.Sprintf("w%d-new-%d", w, n)
				}
				// Two series per appender: one of its own and one shared, so
				// commits in flight write series others have written.
				own := labels.FromStrings(labels.MetricName, "m", "c", val, "w", fmt.Sprint(w))
				if !commit {
					own = labels.FromStrings(labels.MetricName, "m", "c", val, "rbname_"+val, "x")
				}
				shared := labels.FromStrings(labels.MetricName, "m", "c", fmt.Sprintf("shared-%d", n%5), "w", "shared")
				if _, err := app.Append(0, own, ts, float64(n)); err != nil {
					fail("append: %v", err)
					return
				}
				// The shared series may have a newer sample from another
				// writer: then this one is rejected, and the rest goes on.
				_, _ = app.Append(0, shared, ts, float64(n))
				switch {
				case commit:
					if err := app.Commit(); err != nil {
						fail("commit: %v", err)
						return
					}
					if n < 300 || fresh {
						mu.Lock()
						committed = append(committed, val)
						mu.Unlock()
					}
				case n%2 == 0:
					held = append(held, app)
				default:
					if err := app.Rollback(); err != nil {
						fail("rollback: %v", err)
						return
					}
				}
				if len(held) > 20 {
					for _, a := range held {
						_ = a.Rollback()
					}
					held = held[:0]
				}
			}
			for _, a := range held {
				_ = a.Rollback()
			}
		}()
	}

	matcher := labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "m")
	queries := 0
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && !stop.Load() {
		mu.Lock()
		before := slices.Clone(committed)
		mu.Unlock()
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		check := func(what string, vs []string, names bool) {
			set := map[string]bool{}
			for _, v := range vs {
				set[v] = true
				if strings.HasPrefix(v, "rb-") || strings.HasPrefix(v, "rbname_") {
					fail("%s lists %q of an uncommitted appender", what, v)
				}
			}
			if names {
				return
			}
			for _, v := range before {
				if !set[v] {
					fail("%s misses %q committed before the querier", what, v)
					return
				}
			}
		}
		vs, err := q.LabelValues(ctx, "c")
		require.NoError(t, err)
		check("LabelValues", vs, false)
		ns, err := q.LabelNames(ctx)
		require.NoError(t, err)
		check("LabelNames", ns, true)
		if queries%4 == 0 {
			vs, err = q.LabelValues(ctx, "c", matcher)
			require.NoError(t, err)
			check("LabelValues with matcher", vs, false)
			ns, err = q.LabelNames(ctx, matcher)
			require.NoError(t, err)
			check("LabelNames with matcher", ns, true)
		}
		require.NoError(t, q.Close())
		queries++
	}
	stop.Store(true)
	wg.Wait()
	require.Nil(t, failed.Load(), "after %d queries", queries)
	t.Logf("%d queriers, %d appenders, %d distinct committed values", queries, appenders.Load(), len(committed))
}
