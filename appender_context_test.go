package tsdb

import (
	"context"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
)

// TestAppenderContext checks that a done context of DB.Appender fails
// Append and Commit with an error wrapping ctx.Err(), that such a Commit
// applies nothing (not even what was buffered before the cancellation),
// and that the DB stays usable afterwards.
func TestAppenderContext(t *testing.T) {
	ls := labels.FromStrings("__name__", "m", "i", "1")
	h := &histogram.Histogram{Count: 1, Sum: 1, PositiveSpans: []histogram.Span{{Offset: 0, Length: 1}}, PositiveBuckets: []int64{1}}
	for _, tc := range []struct {
		name string
		// ctx returns the appender's context and the function that makes
		// it done.
		ctx  func() (context.Context, func())
		want error
		// before: cancel before the first Append; else between Append and
		// Commit.
		before bool
	}{
		{"cancel before append", cancelCtx, context.Canceled, true},
		{"cancel between append and commit", cancelCtx, context.Canceled, false},
		{"deadline before append", deadlineCtx, context.DeadlineExceeded, true},
		{"deadline between append and commit", deadlineCtx, context.DeadlineExceeded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, reg := openTestDB(t, nil)
			ctx, done := tc.ctx()
			app := db.Appender(ctx)
			if tc.before {
				done()
				_, err := app.Append(0, ls, 1000, 1)
				require.ErrorIs(t, err, tc.want)
				_, err = app.AppendHistogram(0, labels.FromStrings("__name__", "h"), 1000, h, nil)
				require.ErrorIs(t, err, tc.want)
				_, err = app.AppendST(0, ls, 500, 1000, 1, nil, nil)
				require.ErrorIs(t, err, tc.want)
				_, err = app.UpdateMetadata(0, ls, Metadata{Type: MetricTypeGauge})
				require.ErrorIs(t, err, tc.want, "UpdateMetadata checks the context first")
			} else {
				ref, err := app.Append(0, ls, 1000, 1)
				require.NoError(t, err)
				_, err = app.AppendHistogram(0, labels.FromStrings("__name__", "h"), 1000, h, nil)
				require.NoError(t, err)
				done()
				_, err = app.Append(ref, ls, 2000, 2)
				require.ErrorIs(t, err, tc.want, "Append after the cancellation")
				_, err = app.UpdateMetadata(ref, ls, Metadata{Type: MetricTypeGauge})
				require.ErrorIs(t, err, tc.want, "UpdateMetadata after the cancellation")
			}
			if !tc.before {
				require.Equal(t, 1.0, gauge(t, reg, "tsdb_head_open_appenders"))
			}
			err := app.Commit()
			require.ErrorIs(t, err, tc.want)
			require.NotErrorIs(t, err, ErrClosed)
			require.ErrorIs(t, app.Commit(), ErrAppenderClosed, "Commit rolled back: the appender is done")
			require.Zero(t, gauge(t, reg, "tsdb_head_open_appenders"), "the cancelled commit released the appender")

			q, err := db.Querier(math.MinInt64, math.MaxInt64)
			require.NoError(t, err)
			require.Empty(t, querySamples(t, q), "nothing of the cancelled transaction is visible")
			require.NoError(t, q.Close())

			// The DB stays usable, for the same series too.
			app = db.Appender(context.Background())
			_, err = app.Append(0, ls, 3000, 3)
			require.NoError(t, err)
			require.NoError(t, app.Commit())
			q, err = db.Querier(math.MinInt64, math.MaxInt64)
			require.NoError(t, err)
			defer q.Close()
			require.Equal(t, map[string][]sample{ls.String(): {{3000, 3}}}, querySamples(t, q))
		})
	}
}

func cancelCtx() (context.Context, func()) {
	return context.WithCancel(context.Background())
}

// deadlineCtx returns a context that reports its deadline exceeded once
// the returned function is called: a real deadline would make the test
// depend on the scheduler.
func deadlineCtx() (context.Context, func()) {
	c := &manualDeadline{Context: context.Background(), done: make(chan struct{})}
	return c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.err == nil {
			c.err = context.DeadlineExceeded
			close(c.done)
		}
	}
}

// manualDeadline is a context whose deadline passes when the test says so.
type manualDeadline struct {
	context.Context
	mu   sync.Mutex
	done chan struct{}
	err  error
}

func (c *manualDeadline) Deadline() (time.Time, bool) { return time.Unix(0, 0), true }
func (c *manualDeadline) Done() <-chan struct{}       { return c.done }
func (c *manualDeadline) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// ctxTestKey is a context key of the tests.
type ctxTestKey struct{}

// TestAppenderContextBackground checks that an appender of a context that
// cannot be cancelled keeps no context to check, and that one of a context
// that can does.
func TestAppenderContextBackground(t *testing.T) {
	db, _ := openTestDB(t, nil)
	for _, ctx := range []context.Context{context.Background(), context.TODO(), context.WithValue(context.Background(), ctxTestKey{}, 1)} {
		app := db.Appender(ctx).(*headAppender)
		require.Nil(t, app.ctx)
		require.NoError(t, app.Rollback())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app := db.Appender(ctx).(*headAppender)
	require.NotNil(t, app.ctx)
	require.NoError(t, app.Rollback())
}

// TestAppenderContextRace cancels contexts while their appenders commit
// (run it with -race): every Commit either applies its whole scrape or
// fails with the context's error and applies nothing, and a Querier never
// sees part of a scrape.
func TestAppenderContextRace(t *testing.T) {
	db, _ := openTestDB(t, nil)
	const series, scrapes = 20, 200
	lsets := make([]labels.Labels, series)
	for i := range lsets {
		lsets[i] = labels.FromStrings("__name__", "m", "i", strconv.Itoa(i))
	}
	committed := 0
	for k := range scrapes {
		ctx, cancel := context.WithCancel(context.Background())
		app := db.Appender(ctx)
		go cancel() // races with the Appends and the Commit
		var err error
		for _, ls := range lsets {
			if _, err = app.Append(0, ls, int64(k)*1000, float64(k)); err != nil {
				break
			}
		}
		if err != nil {
			require.ErrorIs(t, err, context.Canceled)
			require.NoError(t, app.Rollback())
		} else if err = app.Commit(); err == nil {
			committed++
		} else {
			require.ErrorIs(t, err, context.Canceled)
		}
		cancel()
	}
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	got := querySamples(t, q)
	first := got[lsets[0].String()]
	for _, ls := range lsets[1:] {
		require.Equal(t, first, got[ls.String()], "every series has the samples of the same scrapes")
	}
	require.Len(t, first, committed)
}
