package tsdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// counterValue reads a counter.
func counterValue(t testing.TB, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}

// TestAppendMinInt64: math.MinInt64 is the series'
// "no sample yet" marker; a sample at that time, or anywhere outside
// [MinSampleTime, MaxSampleTime], is rejected with ErrOutOfBounds (and
// counted), never acknowledged and dropped, and never reported as a
// duplicate or out of order.
func TestAppendMinInt64(t *testing.T) {
	// series: "new"; "empty", created by an Appender that was rolled back,
	// so it exists without samples; "samples", with a committed sample.
	for _, series := range []string{"new", "empty", "samples"} {
		for _, v := range []float64{math.NaN(), 1, 0} {
			t.Run(fmt.Sprintf("series=%s/v=%v", series, v), func(t *testing.T) {
				db, _ := openTestDB(t, nil)
				l := seriesLabels(1)
				want := map[string][]sample{}
				if series != "new" {
					app := db.Appender(ctx)
					_, err := app.Append(0, l, 1000, 5)
					require.NoError(t, err)
					if series == "empty" {
						require.NoError(t, app.Rollback())
						require.Equal(t, int64(1), db.head.NumSeries())
					} else {
						require.NoError(t, app.Commit())
						want[l.String()] = []sample{{1000, 5}}
					}
				}
				before := counterValue(t, db.head.metrics.outOfBounds)

				app := db.Appender(ctx)
				for k, ts := range []int64{math.MinInt64, MinSampleTime - 1, MaxSampleTime + 1, math.MaxInt64} {
					_, err := app.Append(0, l, ts, v)
					require.ErrorIs(t, err, ErrOutOfBounds, "sample at %d", ts)
					require.Equal(t, before+float64(k+1), counterValue(t, db.head.metrics.outOfBounds))
				}
				// The rejected samples did not spoil the transaction.
				_, err := app.Append(0, seriesLabels(2), 2000, 7)
				require.NoError(t, err)
				require.NoError(t, app.Commit())
				want[seriesLabels(2).String()] = []sample{{2000, 7}}

				q, err := db.Querier(math.MinInt64, math.MaxInt64)
				require.NoError(t, err)
				defer q.Close()
				requireSameSamples(t, want, querySamples(t, q))
			})
		}
	}
}

// TestSampleTimeLimits: samples at MinSampleTime and MaxSampleTime are
// stored, survive head compaction (block ranges near the limits must not
// overflow: a block starting below math.MinInt64 lost its samples),
// snapshots (a head block ending at MaxInt64+1 was empty) and replay.
func TestSampleTimeLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   []int64
	}{
		// Each case spans 4h, so that Compact writes a block and retention
		// (measured from the newest sample) keeps it.
		{"min", []int64{MinSampleTime, MinSampleTime + 1000, MinSampleTime + 4*3600_000}},
		{"max", []int64{MaxSampleTime - 4*3600_000, MaxSampleTime - 1000, MaxSampleTime}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			db, err := Open("data", nil, nil, &Options{FS: fsys})
			require.NoError(t, err)
			key := seriesLabels(1).String()
			want := map[string][]sample{}
			for i, ts := range tc.ts {
				app := db.Appender(ctx)
				_, err := app.Append(0, seriesLabels(1), ts, float64(i))
				require.NoError(t, err, "sample at %d", ts)
				require.NoError(t, app.Commit())
				want[key] = append(want[key], sample{ts, float64(i)})
			}
			require.NoError(t, db.Snapshot("snap", true))
			require.NoError(t, db.Compact(ctx))
			require.NotEmpty(t, db.Blocks(), "the head was compacted")
			for _, b := range db.Blocks() {
				require.Less(t, b.MinTime, b.MaxTime, "block %s", b.ULID)
			}
			requireSameSamples(t, want, dbSamples(t, db))
			require.NoError(t, db.Close())

			for _, dir := range []string{"data", "snap"} {
				db, err := Open(dir, nil, nil, &Options{FS: fsys})
				require.NoError(t, err)
				requireSameSamples(t, want, dbSamples(t, db))
				require.NoError(t, db.Close())
			}
		})
	}
}

// dbSamples returns every sample of db.
func dbSamples(t *testing.T, db *DB) map[string][]sample {
	t.Helper()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	return querySamples(t, q)
}

// TestAppenderAfterClose: an Appender created before
// Close gets ErrClosed from Commit (nothing applied, nothing logged) and
// Append afterwards, with and without a WAL; Rollback discards and returns
// nil, like the Rollback of an Appender created after Close.
func TestAppenderAfterClose(t *testing.T) {
	for _, noWAL := range []bool{false, true} {
		t.Run(fmt.Sprintf("noWAL=%v", noWAL), func(t *testing.T) {
			fs := vfs.NewMemFS()
			reg := prometheus.NewRegistry()
			db, err := Open("data", nil, reg, &Options{FS: fs, NoWAL: noWAL})
			require.NoError(t, err)
			committer, appender, rollbacker := db.Appender(ctx), db.Appender(ctx), db.Appender(ctx)
			for i, a := range []Appender{committer, appender, rollbacker} {
				_, err := a.Append(0, seriesLabels(i), 10, 1)
				require.NoError(t, err)
			}
			require.Equal(t, 3.0, gauge(t, reg, "tsdb_head_open_appenders"))
			require.NoError(t, db.Close())

			require.ErrorIs(t, committer.Commit(), ErrClosed)
			_, err = appender.Append(0, seriesLabels(9), 20, 1)
			require.ErrorIs(t, err, ErrClosed)
			require.ErrorIs(t, appender.Commit(), ErrClosed)
			require.NoError(t, rollbacker.Rollback())
			require.NoError(t, db.Appender(ctx).Rollback())
			require.Equal(t, 0.0, gauge(t, reg, "tsdb_head_open_appenders"), "the marks were released")
			require.Equal(t, int64(math.MinInt64), db.head.MaxTime(), "nothing reached the closed head")

			if noWAL {
				return
			}
			db, err = Open("data", nil, nil, &Options{FS: fs})
			require.NoError(t, err)
			defer db.Close()
			q, err := db.Querier(math.MinInt64, math.MaxInt64)
			require.NoError(t, err)
			defer q.Close()
			require.Empty(t, querySamples(t, q), "a commit that returned ErrClosed logged nothing")
		})
	}
}

// TestCommitConcurrentWithClose: Commits racing with
// Close either complete (nil, and their samples replay after a restart) or
// return ErrClosed and leave nothing behind. Never another error, never
// part of a transaction.
func TestCommitConcurrentWithClose(t *testing.T) {
	iterations := 1000
	if raceEnabled {
		iterations = 300
	}
	const writers, perTx = 6, 4
	var committed, refused int
	for it := 0; it < iterations; it++ {
		fs := vfs.NewMemFS()
		db, err := Open("data", nil, nil, &Options{FS: fs})
		require.NoError(t, err)
		apps := make([]Appender, writers)
		for w := range apps {
			apps[w] = db.Appender(ctx)
			for j := 0; j < perTx; j++ {
				_, err := apps[w].Append(0, labels.FromStrings("__name__", "m", "w", fmt.Sprint(w), "j", fmt.Sprint(j)), int64(it), float64(w))
				require.NoError(t, err)
			}
		}
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range apps {
			wg.Go(func() {
				<-start
				if w%2 == 1 {
					runtime.Gosched() // spread the commits around Close
				}
				errs[w] = apps[w].Commit()
			})
		}
		close(start)
		require.NoError(t, db.Close())
		wg.Wait()

		db, err = Open("data", nil, nil, &Options{FS: fs})
		require.NoError(t, err)
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(t, err)
		got := querySamples(t, q)
		require.NoError(t, q.Close())
		require.NoError(t, db.Close())
		for w, err := range errs {
			n := 0
			for j := 0; j < perTx; j++ {
				l := labels.FromStrings("__name__", "m", "w", fmt.Sprint(w), "j", fmt.Sprint(j))
				if s, ok := got[l.String()]; ok {
					require.Equal(t, []sample{{int64(it), float64(w)}}, s)
					n++
				}
			}
			switch {
			case err == nil:
				committed++
				require.Equal(t, perTx, n, "iteration %d: writer %d committed, but %d of its %d samples replayed", it, w, n, perTx)
			case errors.Is(err, ErrClosed):
				refused++
				require.Zero(t, n, "iteration %d: writer %d got ErrClosed, but %d of its samples replayed", it, w, n)
			default:
				require.Failf(t, "Commit returned neither nil nor ErrClosed", "iteration %d: writer %d: %v", it, w, err)
			}
		}
	}
	t.Logf("%d commits completed, %d refused with ErrClosed", committed, refused)
}

// TestHeadViewReadOnly: DB.Head offers a read-only
// view, with no way to append that would bypass ErrReadOnly or ErrClosed.
func TestHeadViewReadOnly(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil, nil, nil)
	require.NoError(t, err)
	app := db.Appender(ctx)
	_, err = app.Append(0, seriesLabels(1), 100, 1)
	require.NoError(t, err)
	_, err = app.Append(0, seriesLabels(2), 200, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())

	ro, err := OpenReadOnly(dir, nil, nil)
	require.NoError(t, err)
	defer ro.Close()
	h := ro.Head()
	require.Equal(t, int64(2), h.NumSeries())
	require.Equal(t, int64(100), h.MinTime())
	require.Equal(t, int64(200), h.MaxTime())

	// No method of the view hands out anything that writes.
	_, canAppend := any(h).(interface {
		Appender(context.Context) Appender
	})
	require.False(t, canAppend, "DB.Head() must not offer an Appender")
	appenderType := reflect.TypeFor[Appender]()
	ht := reflect.TypeOf(h)
	for i := 0; i < ht.NumMethod(); i++ {
		m := ht.Method(i)
		for j := 0; j < m.Type.NumOut(); j++ {
			out := m.Type.Out(j)
			require.False(t, out.Implements(appenderType), "%s.%s returns %s, an Appender", ht, m.Name, out)
			require.False(t, out.Kind() == reflect.Pointer && out.Elem() == reflect.TypeFor[head](), "%s.%s returns the head itself", ht, m.Name)
		}
	}
	_, err = ro.Appender(ctx).Append(0, seriesLabels(3), 300, 1)
	require.ErrorIs(t, err, ErrReadOnly)
	_, err = ro.Appender(ctx).AppendHistogram(0, seriesLabels(3), 300, crashHistogram(1), nil)
	require.ErrorIs(t, err, ErrReadOnly)
	_, err = ro.Appender(ctx).AppendST(0, seriesLabels(3), 1, 300, 1, nil, nil)
	require.ErrorIs(t, err, ErrReadOnly)
}

// TestLeakedAppenderReleased: an Appender dropped
// after Append without Commit or Rollback is released by the garbage
// collector: its series are no longer pending (truncation removes them),
// tsdb_head_open_appenders goes back down, and with TrackLeakedAppenders
// one warning names where it was created.
func TestLeakedAppenderReleased(t *testing.T) {
	var logBuf lockedBuffer
	reg := prometheus.NewRegistry()
	db, err := Open("data", slog.New(slog.NewTextHandler(&logBuf, nil)), reg, &Options{FS: vfs.NewMemFS(), TrackLeakedAppenders: true})
	require.NoError(t, err)
	defer db.Close()

	func() {
		app := db.Appender(ctx)
		for i := 0; i < 3; i++ {
			_, err := app.Append(0, seriesLabels(i), 10, 1)
			require.NoError(t, err)
		}
		// app is dropped here without Commit or Rollback.
	}()
	require.Equal(t, int64(3), db.head.NumSeries())
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_head_open_appenders"))
	db.head.truncate(0, 0)
	require.Equal(t, int64(3), db.head.NumSeries(), "pending series are kept while the appender may commit")

	deadline := time.Now().Add(20 * time.Second)
	for gauge(t, reg, "tsdb_head_open_appenders") != 0 {
		if time.Now().After(deadline) {
			require.FailNow(t, "leaked appender never released")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	db.head.truncate(0, 0)
	require.Equal(t, int64(0), db.head.NumSeries(), "the leaked appender's series were removable")
	require.Contains(t, logBuf.String(), "Appender was neither committed nor rolled back")
	require.Contains(t, logBuf.String(), "TestLeakedAppenderReleased")
	require.Equal(t, 1, strings.Count(logBuf.String(), "Appender was neither committed"))

	// An Appender that buffers nothing costs nothing: it is not counted.
	idle := db.Appender(ctx)
	require.Equal(t, 0.0, gauge(t, reg, "tsdb_head_open_appenders"))
	// The head is fully usable afterwards.
	_, err = idle.Append(0, seriesLabels(1), 20, 2)
	require.NoError(t, err)
	require.NoError(t, idle.Commit())
	require.Equal(t, 0.0, gauge(t, reg, "tsdb_head_open_appenders"))
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	requireSameSamples(t, map[string][]sample{seriesLabels(1).String(): {{20, 2}}}, querySamples(t, q))
}

// TestLeakedAppenderUntracked: without TrackLeakedAppenders a leaked
// Appender is released just the same, silently.
func TestLeakedAppenderUntracked(t *testing.T) {
	var logBuf lockedBuffer
	reg := prometheus.NewRegistry()
	db, err := Open("data", slog.New(slog.NewTextHandler(&logBuf, nil)), reg, &Options{FS: vfs.NewMemFS()})
	require.NoError(t, err)
	defer db.Close()
	func() {
		app := db.Appender(ctx)
		_, err := app.Append(0, seriesLabels(1), 10, 1)
		require.NoError(t, err)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for gauge(t, reg, "tsdb_head_open_appenders") != 0 {
		if time.Now().After(deadline) {
			require.FailNow(t, "leaked appender never released")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	db.head.truncate(0, 0)
	require.Equal(t, int64(0), db.head.NumSeries())
	require.NotContains(t, logBuf.String(), "Appender was neither")
}

// TestCommitConcurrentWithCloseNoWAL: without a WAL, Commits racing with
// Close return nil or ErrClosed, and exactly the samples of those that
// returned nil reached the head; one more Commit, started after Close
// returned, always gets ErrClosed.
func TestCommitConcurrentWithCloseNoWAL(t *testing.T) {
	iterations := 1000
	if raceEnabled {
		iterations = 300
	}
	const writers, perTx = 6, 4
	for it := 0; it < iterations; it++ {
		db, err := Open("data", nil, nil, &Options{FS: vfs.NewMemFS(), NoWAL: true})
		require.NoError(t, err)
		apps := make([]Appender, writers)
		for w := range apps {
			apps[w] = db.Appender(ctx)
			for j := 0; j < perTx; j++ {
				_, err := apps[w].Append(0, labels.FromStrings("__name__", "m", "w", fmt.Sprint(w), "j", fmt.Sprint(j)), 1, 1)
				require.NoError(t, err)
			}
		}
		late := db.Appender(ctx)
		_, err = late.Append(0, labels.FromStrings("__name__", "late"), 1, 1)
		require.NoError(t, err)
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range apps {
			wg.Go(func() {
				<-start
				errs[w] = apps[w].Commit()
			})
		}
		close(start)
		require.NoError(t, db.Close())
		require.ErrorIs(t, late.Commit(), ErrClosed, "iteration %d: Commit after Close", it)
		wg.Wait()
		committed := 0
		for w, err := range errs {
			if err == nil {
				committed++
				continue
			}
			require.ErrorIs(t, err, ErrClosed, "iteration %d: writer %d: Commit returns nil or ErrClosed", it, w)
		}
		require.Equal(t, float64(committed*perTx), counterValue(t, db.head.metrics.samplesAppended),
			"iteration %d: samples applied to the head", it)
	}
}
