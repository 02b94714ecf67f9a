package tsdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var ctx = context.Background()

func seriesLabels(i int) labels.Labels {
	return labels.FromStrings(labels.MetricName, "m", "i", strconv.Itoa(i))
}

// TestIsolationBatchesSeenWhole: a writer commits
// batches of 100 series with value = batch number while readers query
// repeatedly; every query sees one single value across all 100 series.
func TestIsolationBatchesSeenWhole(t *testing.T) {
	db, _ := openTestDB(t, nil)
	const nSeries, minQueries = 100, 1000
	lsets := make([]labels.Labels, nSeries)
	for i := range lsets {
		lsets[i] = seriesLabels(i)
	}
	// writeBatch runs in the writer goroutine too: it reports failures
	// without stopping the test and returns whether the batch committed.
	writeBatch := func(refs []SeriesRef, batch int) bool {
		app := db.Appender(ctx)
		for i := range lsets {
			ref, err := app.Append(refs[i], lsets[i], int64(batch), float64(batch))
			if !assert.NoError(t, err) {
				return false
			}
			refs[i] = ref
		}
		return assert.NoError(t, app.Commit())
	}
	// One committed batch first, so every query has something to see.
	refs := make([]SeriesRef, nSeries)
	require.True(t, writeBatch(refs, 0))

	var (
		stop          atomic.Bool
		queries       atomic.Int64
		inconsistent  atomic.Int64
		batches       atomic.Int64
		wg            sync.WaitGroup
		readerErrs    = make(chan error, 4)
		lastSeenBatch = make([]float64, 2)
	)
	wg.Add(1)
	go func() { // writer
		defer wg.Done()
		refs := append([]SeriesRef(nil), refs...)
		for b := 1; !stop.Load(); b++ {
			if !writeBatch(refs, b) {
				return
			}
			batches.Store(int64(b))
		}
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() { // readers
			defer wg.Done()
			for !stop.Load() {
				// Timestamps are batch numbers: read from the last batch
				// seen, so each query's cost stays flat as data grows.
				q, err := db.Querier(int64(lastSeenBatch[r]), math.MaxInt64)
				if err != nil {
					readerErrs <- err
					return
				}
				ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "m"))
				n, want := 0, math.NaN()
				for ss.Next() {
					sit := ss.At().Iterator(nil)
					last := math.NaN()
					for sit.Next() != chunks.ValNone {
						_, last = sit.At()
					}
					if n == 0 {
						want = last
					} else if last != want {
						inconsistent.Add(1)
					}
					n++
				}
				if ss.Err() != nil {
					readerErrs <- ss.Err()
				}
				if n != nSeries {
					inconsistent.Add(1)
				}
				if want < lastSeenBatch[r] {
					inconsistent.Add(1) // went backwards
				}
				lastSeenBatch[r] = want
				_ = q.Close()
				queries.Add(1)
			}
		}()
	}
	for (queries.Load() < minQueries || batches.Load() < 100) && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(readerErrs)
	for err := range readerErrs {
		require.NoError(t, err)
	}
	require.Zero(t, inconsistent.Load(), "partial batches seen in %d queries over %d batches", queries.Load(), batches.Load())
	t.Logf("%d queries over %d batches, 0 partial", queries.Load(), batches.Load())
}

// TestQuerierSnapshot: a querier created before a commit
// does not see it; a later one does, and the earlier one still does not.
func TestQuerierSnapshot(t *testing.T) {
	db, _ := openTestDB(t, nil)
	app := db.Appender(ctx)
	_, err := app.Append(0, seriesLabels(1), 10, 1)
	require.NoError(t, err)

	before, err := db.Querier(0, 100)
	require.NoError(t, err)
	defer before.Close()
	require.NoError(t, app.Commit())
	after, err := db.Querier(0, 100)
	require.NoError(t, err)
	defer after.Close()

	require.Empty(t, querySamples(t, before))
	require.Equal(t, map[string][]sample{seriesLabels(1).String(): {{10, 1}}}, querySamples(t, after))
	require.Empty(t, querySamples(t, before), "still hidden on a second look")
}

// TestIsolationSnapshotsAcrossChunks: a series with 1001
// single-sample commits (value = commit number = write ID), read by
// queriers created after commits 10, 130, ..., 999, each of which sees
// exactly its commit as the last sample, across chunk boundaries; cleanups
// driven through the watermark (by closing the older queriers) keep the
// newer ones exact and the ring holds only IDs at or above the bound.
func TestIsolationSnapshotsAcrossChunks(t *testing.T) {
	db, _ := openTestDB(t, nil)
	lset := seriesLabels(0)
	at := []int{10, 130, 160, 240, 500, 750, 995, 999}
	qs := map[int]Querier{}
	commit := func(i int) {
		app := db.Appender(ctx)
		_, err := app.Append(0, lset, int64(i), float64(i))
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	next := 1
	for _, k := range at {
		for ; next <= k; next++ {
			commit(next)
		}
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		qs[k] = q
	}
	for ; next <= 1001; next++ {
		commit(next)
	}
	s := db.head.series.getByHash(lset.Hash(), lset)
	s.mu.Lock()
	require.Greater(t, len(s.chunks), 8, "the series spans many chunks")
	s.mu.Unlock()

	checkLast := func(k int) {
		t.Helper()
		got := querySamples(t, qs[k])[lset.String()]
		require.Len(t, got, k, "querier after commit %d", k)
		require.Equal(t, sample{int64(k), float64(k)}, got[len(got)-1])
	}
	ringMin := func() uint64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		m := uint64(math.MaxUint64)
		for i := 0; i < s.txs.len(); i++ {
			m = min(m, s.txs.at(i))
		}
		return m
	}
	for _, k := range at {
		checkLast(k)
	}
	require.Equal(t, uint64(11), ringMin(), "ring holds every ID the oldest read may not see")

	// Cleanup below 500: close the readers before it; one more commit trims.
	for _, k := range []int{10, 130, 160, 240} {
		require.NoError(t, qs[k].Close())
	}
	commit(next)
	next++
	require.Equal(t, uint64(501), db.head.iso.lowWatermark())
	require.GreaterOrEqual(t, ringMin(), uint64(500))
	for _, k := range []int{500, 750, 995, 999} {
		checkLast(k)
	}

	// Cleanup below 1000.
	for _, k := range []int{500, 750, 995} {
		require.NoError(t, qs[k].Close())
	}
	commit(next)
	require.Equal(t, uint64(1000), db.head.iso.lowWatermark())
	require.GreaterOrEqual(t, ringMin(), uint64(1000))
	checkLast(999)
	require.NoError(t, qs[999].Close())
}

// TestRollback: a rolled-back Appender takes no write ID, moves no
// watermark, leaves nothing visible or behind, and is closed afterwards.
func TestRollback(t *testing.T) {
	db, _ := openTestDB(t, nil)
	app := db.Appender(ctx)
	_, err := app.Append(0, seriesLabels(1), 10, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	high, low := db.head.iso.highWatermark(), db.head.iso.lowWatermark()

	app = db.Appender(ctx)
	for i := 0; i < 10; i++ {
		_, err := app.Append(0, seriesLabels(i), 20, 2)
		require.NoError(t, err)
	}
	require.NoError(t, app.Rollback())
	require.ErrorIs(t, app.Commit(), ErrAppenderClosed)
	require.ErrorIs(t, app.Rollback(), ErrAppenderClosed)
	_, err = app.Append(0, seriesLabels(1), 30, 3)
	require.ErrorIs(t, err, ErrAppenderClosed)

	require.Equal(t, high, db.head.iso.highWatermark(), "rollback took no write ID")
	require.Equal(t, low, db.head.iso.lowWatermark(), "rollback did not move the watermark")
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	require.Equal(t, map[string][]sample{seriesLabels(1).String(): {{10, 1}}}, querySamples(t, q))

	// The rolled-back samples left nothing behind: the same timestamps can
	// be written with other values.
	app = db.Appender(ctx)
	_, err = app.Append(0, seriesLabels(1), 20, 5)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
}

// TestWatermarkFollowsOldestRead: the low watermark stays at the oldest
// open read's low mark and follows it when that read closes.
func TestWatermarkFollowsOldestRead(t *testing.T) {
	db, reg := openTestDB(t, nil)
	commit := func(ts int64) {
		app := db.Appender(ctx)
		_, err := app.Append(0, seriesLabels(1), ts, 1)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	commit(1)
	q1, err := db.Querier(0, 100) // low mark 2
	require.NoError(t, err)
	for ts := int64(2); ts < 10; ts++ {
		commit(ts)
		require.Equal(t, 2.0, gauge(t, reg, "tsdb_isolation_low_watermark"))
	}
	q2, err := db.Querier(0, 100) // low mark 10
	require.NoError(t, err)
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_isolation_open_reads"))
	require.NoError(t, q1.Close())
	require.Equal(t, 10.0, gauge(t, reg, "tsdb_isolation_low_watermark"))
	require.NoError(t, q2.Close())
	require.Equal(t, 10.0, gauge(t, reg, "tsdb_isolation_low_watermark"))
	commit(10)
	require.Equal(t, 11.0, gauge(t, reg, "tsdb_isolation_low_watermark"))
	require.Equal(t, 10.0, gauge(t, reg, "tsdb_isolation_high_watermark"))
	require.Equal(t, 0.0, gauge(t, reg, "tsdb_isolation_open_reads"))
}

// pausedCommit runs app.Commit in a goroutine that stops before applying
// sample pauseAt; finish lets it complete.
type pausedCommit struct {
	pauseAt int
	paused  chan struct{}
	release chan struct{}
	done    chan error
}

// commitGate installs a commit hook on h that pauses the commits started
// with commitPaused. Other commits run through.
type commitGate struct {
	mu      sync.Mutex
	targets map[*headAppender]*pausedCommit
}

func newCommitGate(t *testing.T, h *head) *commitGate {
	g := &commitGate{targets: map[*headAppender]*pausedCommit{}}
	h.commitHook = func(a *headAppender, i int) {
		g.mu.Lock()
		pc := g.targets[a]
		g.mu.Unlock()
		if pc != nil && i == pc.pauseAt {
			close(pc.paused)
			<-pc.release
		}
	}
	t.Cleanup(func() { h.commitHook = nil })
	return g
}

// commitPaused starts app.Commit and returns once it is paused before
// applying sample pauseAt, its write ID in flight.
func (g *commitGate) commitPaused(app Appender, pauseAt int) *pausedCommit {
	pc := &pausedCommit{pauseAt: pauseAt, paused: make(chan struct{}), release: make(chan struct{}), done: make(chan error, 1)}
	g.mu.Lock()
	g.targets[app.(*headAppender)] = pc
	g.mu.Unlock()
	go func() { pc.done <- app.Commit() }()
	<-pc.paused
	return pc
}

func (pc *pausedCommit) finish(t *testing.T) {
	close(pc.release)
	require.NoError(t, <-pc.done)
}

// TestCommitInFlight: a commit held in flight between
// two series holds the watermark, the metrics report it, a querier created
// meanwhile sees none of it, and 10,000 open Appenders that have not
// committed do not move the watermark at all.
func TestCommitInFlight(t *testing.T) {
	db, reg := openTestDB(t, nil)
	app := db.Appender(ctx)
	_, err := app.Append(0, seriesLabels(0), 1, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit()) // write ID 1

	// 10,000 Appenders with buffered samples, never committed.
	idle := make([]Appender, 10000)
	for i := range idle {
		idle[i] = db.Appender(ctx)
		_, err := idle[i].Append(0, seriesLabels(i%50), 100, 1)
		require.NoError(t, err)
	}
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_isolation_low_watermark"), "idle appenders hold nothing")
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_isolation_high_watermark"))
	require.Equal(t, 10000.0, gauge(t, reg, "tsdb_head_open_appenders"))

	app = db.Appender(ctx)
	for i := 0; i < 10; i++ {
		_, err := app.Append(0, seriesLabels(i), 2, 2)
		require.NoError(t, err)
	}
	gate := newCommitGate(t, db.head)
	pc := gate.commitPaused(app, 5) // 5 of 10 series applied
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_isolation_low_watermark"))
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_isolation_high_watermark"))
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_isolation_commits_in_flight"))

	during, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	require.Equal(t, map[string][]sample{seriesLabels(0).String(): {{1, 1}}}, querySamples(t, during))

	// A small commit completes while the big one is in flight; a querier
	// sees it but still nothing of the other.
	app2 := db.Appender(ctx)
	_, err = app2.Append(0, seriesLabels(99), 3, 3)
	require.NoError(t, err)
	require.NoError(t, app2.Commit())
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_isolation_low_watermark"))
	mid, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	require.Equal(t, map[string][]sample{
		seriesLabels(0).String():  {{1, 1}},
		seriesLabels(99).String(): {{3, 3}},
	}, querySamples(t, mid))

	pc.finish(t)
	require.Equal(t, 0.0, gauge(t, reg, "tsdb_isolation_commits_in_flight"))
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_isolation_low_watermark"), "still held by the open queriers")
	require.Len(t, querySamples(t, during), 1, "a snapshot never changes")
	require.NoError(t, during.Close())
	require.NoError(t, mid.Close())
	require.Equal(t, 4.0, gauge(t, reg, "tsdb_isolation_low_watermark"))

	after, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	require.Len(t, querySamples(t, after), 11)
	require.NoError(t, after.Close())
	for _, a := range idle {
		require.NoError(t, a.Rollback())
	}
	require.Equal(t, 0.0, gauge(t, reg, "tsdb_head_open_appenders"))
}

// TestConcurrentCommitsSameSeries: two transactions
// write the same series while both are in flight; whichever completes
// first, a read sees each whole or not at all.
func TestConcurrentCommitsSameSeries(t *testing.T) {
	shared, onlyEarly, onlyLate := seriesLabels(0), seriesLabels(1), seriesLabels(2)
	earlySet := map[string][]sample{shared.String(): {{10, 1}}, onlyEarly.String(): {{10, 1}}}
	lateSet := map[string][]sample{shared.String(): {{20, 2}}, onlyLate.String(): {{20, 2}}}
	allSet := map[string][]sample{shared.String(): {{10, 1}, {20, 2}}, onlyEarly.String(): {{10, 1}}, onlyLate.String(): {{20, 2}}}
	for _, earlyFinishesFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("earlyFinishesFirst=%v", earlyFinishesFirst), func(t *testing.T) {
			db, _ := openTestDB(t, nil)
			gate := newCommitGate(t, db.head)
			// early writes shared then its own series; late its own then
			// shared, so both pauses below fall between the two series.
			early, late := db.Appender(ctx), db.Appender(ctx)
			for _, a := range []struct {
				app    Appender
				series []labels.Labels
				ts     int64
				v      float64
			}{{early, []labels.Labels{shared, onlyEarly}, 10, 1}, {late, []labels.Labels{onlyLate, shared}, 20, 2}} {
				for _, l := range a.series {
					_, err := a.app.Append(0, l, a.ts, a.v)
					require.NoError(t, err)
				}
			}
			pcEarly := gate.commitPaused(early, 1) // ID 1; shared@10 applied
			var want map[string][]sample
			var last *pausedCommit
			if earlyFinishesFirst {
				last = gate.commitPaused(late, 1) // ID 2; onlyLate@20 applied
				pcEarly.finish(t)
				want = earlySet
			} else {
				require.NoError(t, late.Commit()) // ID 2, completes first
				want = lateSet                    // shared@20 is visible after the invisible shared@10
				last = pcEarly
			}
			q, err := db.Querier(math.MinInt64, math.MaxInt64)
			require.NoError(t, err)
			require.Equal(t, want, querySamples(t, q))

			last.finish(t)
			require.Equal(t, want, querySamples(t, q), "snapshot unchanged after the other commit completed")
			require.NoError(t, q.Close())
			q2, err := db.Querier(math.MinInt64, math.MaxInt64)
			require.NoError(t, err)
			require.Equal(t, allSet, querySamples(t, q2))
			require.NoError(t, q2.Close())
		})
	}
}

// TestLeakedQuerierReleased: a Querier dropped without
// Close releases its snapshot once the garbage collector finds it.
func TestLeakedQuerierReleased(t *testing.T) {
	var logBuf lockedBuffer
	reg := prometheus.NewRegistry()
	db, err := Open("data", slog.New(slog.NewTextHandler(&logBuf, nil)), reg, &Options{FS: vfs.NewMemFS(), TrackLeakedQueriers: true})
	require.NoError(t, err)
	defer db.Close()
	commit := func(ts int64) {
		app := db.Appender(ctx)
		_, err := app.Append(0, seriesLabels(1), ts, 1)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	commit(1)
	func() {
		q, err := db.Querier(0, 10)
		require.NoError(t, err)
		require.Len(t, querySamples(t, q), 1)
		// q is dropped here without Close.
	}()
	commit(2)
	require.Equal(t, 2.0, gauge(t, reg, "tsdb_isolation_low_watermark"), "pinned by the leaked querier")
	deadline := time.Now().Add(30 * time.Second)
	for gauge(t, reg, "tsdb_isolation_open_reads") != 0 {
		if time.Now().After(deadline) {
			require.FailNow(t, "leaked querier never released its snapshot")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, 3.0, gauge(t, reg, "tsdb_isolation_low_watermark"), "watermark advanced")
	// The cleanup logs one warning naming where the querier was created.
	for !strings.Contains(logBuf.String(), "Querier was not closed") {
		if time.Now().After(deadline) {
			require.FailNow(t, "no warning logged")
		}
		time.Sleep(time.Millisecond)
	}
	require.Contains(t, logBuf.String(), "TestLeakedQuerierReleased")
	require.Equal(t, 1, strings.Count(logBuf.String(), "Querier was not closed"))
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestAppendErrors(t *testing.T) {
	db, _ := openTestDB(t, nil)
	staleNaN := math.Float64frombits(0x7ff0000000000002)
	nan := math.Float64frombits(0x7ff8000000000001)
	app := db.Appender(ctx)
	ref, err := app.Append(0, seriesLabels(1), 100, 1)
	require.NoError(t, err)
	_, err = app.Append(ref, seriesLabels(1), 200, nan)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	for i, tc := range []struct {
		name string
		lset labels.Labels
		t    int64
		v    float64
		want error
	}{
		{"older than newest", seriesLabels(1), 150, 1, ErrOutOfOrderSample},
		{"same time other value", seriesLabels(1), 200, 2, ErrDuplicateSampleForTimestamp},
		{"stale marker is not NaN", seriesLabels(1), 200, staleNaN, ErrDuplicateSampleForTimestamp},
		{"same NaN bits is a no-op", seriesLabels(1), 200, nan, nil},
		{"out of bounds", seriesLabels(1), 200 - time.Hour.Milliseconds() - 1, 1, ErrOutOfBounds},
		{"empty label set", labels.EmptyLabels(), 300, 1, ErrInvalidSample},
		{"empty name", labels.FromStrings("", "x", "a", "b"), 300, 1, ErrInvalidSample},
		{"duplicate name", labels.New(labels.Label{Name: "a", Value: "1"}, labels.Label{Name: "a", Value: "2"}), 300, 1, ErrInvalidSample},
		{"bad utf8 value", labels.FromStrings("a", "\xff"), 300, 1, ErrInvalidSample},
		{"bad utf8 name", labels.FromStrings("\xfe", "x"), 300, 1, ErrInvalidSample},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := db.Appender(ctx)
			// A good sample before the bad one survives it.
			_, err := app.Append(0, seriesLabels(2), 1000+int64(i), 7)
			require.NoError(t, err)
			_, err = app.Append(0, tc.lset, tc.t, tc.v)
			if tc.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.want)
			}
			_, err = app.Append(0, seriesLabels(4), 1000+int64(i), 8)
			require.NoError(t, err)
			require.NoError(t, app.Commit())
		})
	}
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	got := querySamples(t, q)
	require.Len(t, got, 3)
	require.Len(t, got[seriesLabels(2).String()], 10, "every good neighbour of a rejected sample was kept")
	require.Len(t, got[seriesLabels(4).String()], 10)
	s1 := got[seriesLabels(1).String()]
	require.Len(t, s1, 2)
	require.Equal(t, uint64(0x7ff8000000000001), math.Float64bits(s1[1].V), "NaN payload kept")

	// Within one transaction: out of order and duplicates are caught too.
	app = db.Appender(ctx)
	_, err = app.Append(0, seriesLabels(3), 500, 1)
	require.NoError(t, err)
	_, err = app.Append(0, seriesLabels(3), 400, 1)
	require.ErrorIs(t, err, ErrOutOfOrderSample)
	_, err = app.Append(0, seriesLabels(3), 500, 2)
	require.ErrorIs(t, err, ErrDuplicateSampleForTimestamp)
	_, err = app.Append(0, seriesLabels(3), 500, 1)
	require.NoError(t, err, "same sample again is a no-op")
	_, err = app.Append(0, seriesLabels(3), 600, staleNaN)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	q2, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q2.Close()
	s3 := querySamples(t, q2)[seriesLabels(3).String()]
	require.Len(t, s3, 2)
	require.Equal(t, uint64(0x7ff0000000000002), math.Float64bits(s3[1].V), "stale marker stored bit-exactly")
}

func TestClosedDB(t *testing.T) {
	db, _ := openTestDB(t, nil)
	q, err := db.Querier(0, 10)
	require.NoError(t, err)
	app := db.Appender(ctx)
	require.NoError(t, db.Close())
	require.NoError(t, q.Close())
	_, err = db.Querier(0, 10)
	require.ErrorIs(t, err, ErrClosed)
	_, err = db.Appender(ctx).Append(0, seriesLabels(1), 1, 1)
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, app.Rollback())
	_, err = db.Querier(10, 0)
	require.True(t, errors.Is(err, ErrInvalidTimeRange) || errors.Is(err, ErrClosed))
}
