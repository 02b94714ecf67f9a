package tsdb

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
	"github.com/isotsdb/tsdb/vfs"
)

// listHead returns what db.HeadSeries lists, by series string, and checks
// that the series came in ascending ref order.
func listHead(t *testing.T, db *DB) map[string]HeadSeriesInfo {
	t.Helper()
	got := map[string]HeadSeriesInfo{}
	var last SeriesRef
	require.NoError(t, db.HeadSeries(context.Background(), func(info HeadSeriesInfo) bool {
		require.Greater(t, info.Ref, last, "ref order")
		last = info.Ref
		got[info.Labels.String()] = info
		return true
	}))
	return got
}

// commitAt appends one sample per series (v for all) at ts and commits.
func commitAt(t *testing.T, db *DB, ts int64, v float64, lsets ...labels.Labels) {
	t.Helper()
	app := db.Appender(context.Background())
	for _, ls := range lsets {
		_, err := app.Append(0, ls, ts, v)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
}

// TestHeadSeries lists series of every kind of newest sample.
func TestHeadSeries(t *testing.T) {
	db, _ := openTestDB(t, nil)
	f, nan, stale := labels.FromStrings("__name__", "f"), labels.FromStrings("__name__", "nan"), labels.FromStrings("__name__", "stale")
	h, fh, hstale := labels.FromStrings("__name__", "h"), labels.FromStrings("__name__", "fh"), labels.FromStrings("__name__", "hstale")
	app := db.Appender(context.Background())
	refs := map[string]SeriesRef{}
	add := func(ls labels.Labels, ts int64, v float64, hist bool) {
		var ref SeriesRef
		var err error
		switch {
		case !hist:
			ref, err = app.Append(0, ls, ts, v)
		case ls.Get("__name__") == "fh":
			ref, err = app.AppendHistogram(0, ls, ts, nil, staleTestHistogram(int(v)).ToFloat())
		default:
			ref, err = app.AppendHistogram(0, ls, ts, staleTestHistogram(int(v)), nil)
		}
		require.NoError(t, err)
		refs[ls.String()] = ref
	}
	for k := range int64(3) {
		add(f, 1000*k, float64(k), false)
		add(nan, 1000*k, float64(k), false)
		add(stale, 1000*k, float64(k), false)
		add(h, 1000*k, float64(k), true)
		add(fh, 1000*k, float64(k), true)
		add(hstale, 1000*k, float64(k), true)
	}
	add(nan, 3000, math.NaN(), false)
	add(stale, 3000, value.StaleMarker(), false)
	add(hstale, 3000, value.StaleMarker(), false) // stored as a histogram marker
	// A series of a transaction rolled back has no sample: not listed.
	rb := db.Appender(context.Background())
	_, err := rb.Append(0, labels.FromStrings("__name__", "rolledback"), 1000, 1)
	require.NoError(t, err)
	require.NoError(t, rb.Rollback())
	require.NoError(t, app.Commit())

	got := listHead(t, db)
	require.Len(t, got, 6)
	for ls, want := range map[labels.Labels]HeadSeriesInfo{
		f:      {T: 2000, V: 2},
		h:      {T: 2000, V: 2, Histogram: true},
		fh:     {T: 2000, V: 2, Histogram: true},
		stale:  {T: 3000, V: value.StaleMarker(), Stale: true},
		hstale: {T: 3000, V: value.StaleMarker(), Histogram: true, Stale: true},
	} {
		want.Ref, want.Labels = refs[ls.String()], ls
		info := got[ls.String()]
		require.Equal(t, math.Float64bits(want.V), math.Float64bits(info.V), ls.String())
		want.V, info.V = 0, 0 // NaNs compare unequal
		require.Equal(t, want, info, ls.String())
	}
	n := got[nan.String()]
	require.Equal(t, int64(3000), n.T)
	require.True(t, math.IsNaN(n.V))
	require.False(t, n.Stale, "a NaN is not a marker")

	// fn stops the listing.
	calls := 0
	require.NoError(t, db.HeadSeries(context.Background(), func(HeadSeriesInfo) bool { calls++; return false }))
	require.Equal(t, 1, calls)
}

// TestHeadSeriesContextAndClose: a done context ends the listing with its
// error; a closed DB fails it with ErrClosed.
func TestHeadSeriesContextAndClose(t *testing.T) {
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	lsets := make([]labels.Labels, 3*ctxCheckInterval)
	for i := range lsets {
		lsets[i] = labels.FromStrings("__name__", "m", "i", strconv.Itoa(i))
	}
	commitAt(t, db, 1000, 1, lsets...)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err = db.HeadSeries(ctx, func(HeadSeriesInfo) bool {
		if calls++; calls == 10 {
			cancel()
		}
		return true
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, calls, len(lsets), "the listing stopped")
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.HeadSeries(context.Background(), func(HeadSeriesInfo) bool { return true }), ErrClosed)
}

// TestHeadSeriesIsolation: a listing sees a commit in flight neither in
// the series it writes (their previous newest sample is listed) nor in
// the series it creates, and sees everything once it completed; it sees
// no deleted sample.
func TestHeadSeriesIsolation(t *testing.T) {
	db, _ := openTestDB(t, nil)
	a, b, c := labels.FromStrings("__name__", "a"), labels.FromStrings("__name__", "b"), labels.FromStrings("__name__", "c")
	commitAt(t, db, 1000, 1, a, b)
	commitAt(t, db, 2000, 2, a, b)

	g := newCommitGate(t, db.head)
	app := db.Appender(context.Background())
	for _, ls := range []labels.Labels{a, b, c} {
		_, err := app.Append(0, ls, 3000, 3)
		require.NoError(t, err)
	}
	pc := g.commitPaused(app, 2) // a and b applied, c (new) not yet
	finished := false
	t.Cleanup(func() { // a failure must not leave the commit (and Close) hanging
		if !finished {
			close(pc.release)
			<-pc.done
		}
	})
	got := listHead(t, db)
	require.Len(t, got, 2, "c is not listed: its commit is in flight")
	require.Equal(t, int64(2000), got[a.String()].T, "a's newest sample, of the commit in flight, is not seen")
	require.Equal(t, 2.0, got[a.String()].V)
	require.Equal(t, int64(2000), got[b.String()].T)
	finished = true
	pc.finish(t)
	got = listHead(t, db)
	require.Len(t, got, 3)
	for _, ls := range []labels.Labels{a, b, c} {
		require.Equal(t, int64(3000), got[ls.String()].T, ls.String())
		require.Equal(t, 3.0, got[ls.String()].V, ls.String())
	}

	// Deleted samples are not listed: a's newest is deleted, c's only one.
	require.NoError(t, db.Delete(context.Background(), 2500, 3000, labels.MustNewMatcher(labels.MatchRegexp, "__name__", "a|c")))
	got = listHead(t, db)
	require.Len(t, got, 2)
	require.Equal(t, int64(2000), got[a.String()].T)
	require.Equal(t, 2.0, got[a.String()].V)
	require.Equal(t, int64(3000), got[b.String()].T)
}

// TestHeadSeriesRestartAndCompaction lists the head after WAL replay
// (same refs, same newest samples) and after head compaction (series
// left only in blocks are gone, the others keep their newest sample).
func TestHeadSeriesRestartAndCompaction(t *testing.T) {
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	old, cur, gone := labels.FromStrings("__name__", "old"), labels.FromStrings("__name__", "cur"), labels.FromStrings("__name__", "gone")
	commitAt(t, db, 0, 1, old, cur, gone)
	commitAt(t, db, 1000, value.StaleMarker(), gone)
	// Within 1.5 block ranges: no compaction runs before the one below.
	commitAt(t, db, 2*hour, 2, cur)
	before := listHead(t, db)
	require.Len(t, before, 3)
	require.True(t, before[gone.String()].Stale)

	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	after := listHead(t, db)
	require.Equal(t, len(before), len(after))
	for k, want := range before {
		got := after[k]
		require.Equal(t, math.Float64bits(want.V), math.Float64bits(got.V), k)
		want.V, got.V = 0, 0
		require.Equal(t, want, got, "%s after replay", k)
	}

	commitAt(t, db, 4*hour, 3, cur)
	require.NoError(t, db.Compact(context.Background()))
	require.Len(t, db.Blocks(), 1)
	got := listHead(t, db)
	require.Len(t, got, 1, "old and gone live only in the block")
	require.Equal(t, HeadSeriesInfo{Ref: before[cur.String()].Ref, Labels: cur, T: 4 * hour, V: 3}, got[cur.String()])
}

// TestHeadSeriesLate: with the out-of-order window on, the newest sample
// is the latest one, not the one appended last; and a late sample that is
// the latest (it came in behind the head's appendable range) is found.
func TestHeadSeriesLate(t *testing.T) {
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	o.OutOfOrderTimeWindow = 3 * time.Hour
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	a, b, other := labels.FromStrings("__name__", "a"), labels.FromStrings("__name__", "b"), labels.FromStrings("__name__", "other")
	commitAt(t, db, 0, 0, other, b)
	commitAt(t, db, 4*hour, 1, other)
	commitAt(t, db, 4*hour+10_000, 10, a)
	commitAt(t, db, 4*hour+5_000, 5, a) // late: before a's newest
	// Head compaction moves [0, 2h) into a block: b leaves the head. Its
	// next sample is behind the head's range (before 2h), so it is a late
	// one, and b's only sample in the head.
	require.NoError(t, db.Compact(context.Background()))
	require.Len(t, db.Blocks(), 1)
	require.Nil(t, db.head.series.getByHash(b.Hash(), b))
	commitAt(t, db, 3*hour/2, 7, b)
	got := listHead(t, db)
	require.Len(t, got, 3)
	require.Equal(t, int64(4*hour+10_000), got[a.String()].T)
	require.Equal(t, 10.0, got[a.String()].V)
	require.Equal(t, 3*hour/2, got[b.String()].T)
	require.Equal(t, 7.0, got[b.String()].V)
	bs := db.head.series.getByHash(b.Hash(), b)
	bs.mu.Lock()
	require.True(t, bs.hasLateLocked(), "b's newest sample is a late one")
	require.Equal(t, int64(math.MinInt64), bs.lastTLocked(), "b has no in-order sample")
	bs.mu.Unlock()
}

// TestHeadSeriesConcurrent lists the head while scrapes commit (run it
// with -race): every listing sees each scrape whole or not at all, so all
// series have the same newest sample, and never one older than a scrape
// that had completed when the listing began.
func TestHeadSeriesConcurrent(t *testing.T) {
	db, _ := openTestDB(t, nil)
	const series = 50
	scrapes := 300
	if raceEnabled {
		scrapes = 100
	}
	lsets := make([]labels.Labels, series)
	for i := range lsets {
		lsets[i] = labels.FromStrings("__name__", "m", "i", strconv.Itoa(i))
	}
	commitAt(t, db, 0, 0, lsets...)
	var completed atomic.Int64 // newest scrape committed
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				floor := completed.Load()
				var ts int64 = -1
				n := 0
				err := db.HeadSeries(context.Background(), func(info HeadSeriesInfo) bool {
					n++
					if ts < 0 {
						ts = info.T
					}
					if info.T != ts || info.V != float64(info.T/1000) {
						errs <- errors.New("listing saw part of a scrape: " + info.Labels.String() + " at " + strconv.FormatInt(info.T, 10))
						return false
					}
					return true
				})
				if err == nil && (n != series || ts/1000 < floor) {
					err = errors.New("listing missed series or a completed scrape")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for k := 1; k <= scrapes; k++ {
		app := db.Appender(context.Background())
		for i, ls := range lsets {
			// Half the series in reverse order: commits apply in
			// append order.
			if k%2 == 0 {
				ls = lsets[series-1-i]
			}
			_, err := app.Append(0, ls, int64(k)*1000, float64(k))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
		completed.Store(int64(k))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got := listHead(t, db)
	require.Len(t, got, series)
	for _, info := range got {
		require.Equal(t, int64(scrapes)*1000, info.T)
	}
}

// TestHeadSeriesAllocs: a listing allocates a fixed amount, not per
// series.
func TestHeadSeriesAllocs(t *testing.T) {
	db, _ := openTestDB(t, nil)
	lsets := make([]labels.Labels, 2000)
	for i := range lsets {
		lsets[i] = labels.FromStrings("__name__", "m", "i", strconv.Itoa(i))
	}
	commitAt(t, db, 1000, 1, lsets...)
	commitAt(t, db, 2000, 2, lsets...)
	n := 0
	fn := func(HeadSeriesInfo) bool { n++; return true }
	allocs := testing.AllocsPerRun(10, func() {
		require.NoError(t, db.HeadSeries(context.Background(), fn))
	})
	require.Equal(t, 11*len(lsets), n)
	limit := 10.0
	if invariantsEnabled {
		// The lock-order checker's mutexes allocate per Lock: one series
		// lock a series.
		limit += float64(len(lsets))
	}
	require.LessOrEqual(t, allocs, limit, "allocations per listing of %d series", len(lsets))
}

// BenchmarkHeadSeries lists a head of 10,000 series; ns/series is the
// cost per series.
func BenchmarkHeadSeries(b *testing.B) {
	db, _ := openTestDB(b, nil)
	lsets := make([]labels.Labels, 10_000)
	for i := range lsets {
		lsets[i] = labels.FromStrings("__name__", "m", "i", strconv.Itoa(i))
	}
	for k := range int64(3) {
		app := db.Appender(context.Background())
		for _, ls := range lsets {
			if _, err := app.Append(0, ls, k*1000, float64(k)); err != nil {
				b.Fatal(err)
			}
		}
		if err := app.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	fn := func(HeadSeriesInfo) bool { n++; return true }
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := db.HeadSeries(context.Background(), fn); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/series")
}

// TestHeadSeriesMetadata: the listing gives each series' metadata as its
// snapshot sees it: a commit made while the listing runs changes neither
// the newest sample nor the metadata listed for a series listed after it;
// series read the slow way (newest sample deleted) have their metadata
// too; and it is there after a restart.
func TestHeadSeriesMetadata(t *testing.T) {
	o := DefaultOptions()
	o.FS = vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	a, b, c := labels.FromStrings("__name__", "a"), labels.FromStrings("__name__", "b"), labels.FromStrings("__name__", "c")
	ma := Metadata{Type: MetricTypeCounter, Unit: "seconds", Help: "A."}
	mb := Metadata{Type: MetricTypeGauge, Help: "B."}
	appendWithMeta(t, db, a, 1000, ma)
	appendWithMeta(t, db, b, 1000, mb)
	commitAt(t, db, 1000, 1, c) // no metadata
	commitAt(t, db, 2000, 2, a)

	mb2 := Metadata{Type: MetricTypeGauge, Help: "B, changed."}
	got := map[string]HeadSeriesInfo{}
	require.NoError(t, db.HeadSeries(context.Background(), func(info HeadSeriesInfo) bool {
		if labels.Equal(info.Labels, a) {
			// b is listed after a, from the snapshot taken before this.
			app := db.Appender(context.Background())
			ref, err := app.Append(0, b, 3000, 3)
			require.NoError(t, err)
			_, err = app.UpdateMetadata(ref, b, mb2)
			require.NoError(t, err)
			require.NoError(t, app.Commit())
		}
		got[info.Labels.String()] = info
		return true
	}))
	require.Len(t, got, 3)
	require.Equal(t, HeadSeriesInfo{Ref: got[a.String()].Ref, Labels: a, T: 2000, V: 2, Metadata: ma, HasMetadata: true}, got[a.String()])
	require.Equal(t, int64(1000), got[b.String()].T, "the commit made during the listing is not seen")
	require.Equal(t, mb, got[b.String()].Metadata, "nor its metadata")
	require.False(t, got[c.String()].HasMetadata)

	got = listHead(t, db)
	require.Equal(t, mb2, got[b.String()].Metadata)
	require.Equal(t, int64(3000), got[b.String()].T)

	// a's newest sample deleted: read sample by sample, metadata still there.
	require.NoError(t, db.Delete(context.Background(), 1500, 2500, labels.MustNewMatcher(labels.MatchEqual, "__name__", "a")))
	got = listHead(t, db)
	require.Equal(t, int64(1000), got[a.String()].T)
	require.True(t, got[a.String()].HasMetadata)
	require.Equal(t, ma, got[a.String()].Metadata)

	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	got = listHead(t, db)
	require.Equal(t, ma, got[a.String()].Metadata, "after replay")
	require.Equal(t, mb2, got[b.String()].Metadata, "after replay")
	require.False(t, got[c.String()].HasMetadata)
}
