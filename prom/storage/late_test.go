package promstorage_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// The out-of-order window through the adapter: set at open
// (tsdb.Options.OutOfOrderTimeWindow) or by a Prometheus configuration
// (Storage.ApplyConfig). The tests that need the head to accept late
// samples are TestLateWindowFromOptions and the "window on" parts of
// TestLateWindowFromConfig; the rest (the window off, a closed DB) hold
// without it.

// windowConfig is a Prometheus configuration with only the out-of-order
// window set, as Prometheus's config loader leaves it (milliseconds).
func windowConfig(d time.Duration) *config.Config {
	return &config.Config{StorageConfig: config.StorageConfig{
		TSDBConfig: &config.TSDBConfig{OutOfOrderTimeWindow: d.Milliseconds()},
	}}
}

// newLateStorage opens a storage like newStorage's with the out-of-order
// window d.
func newLateStorage(t *testing.T, d time.Duration) *promstorage.Storage {
	t.Helper()
	o := testOptions()
	o.OutOfOrderTimeWindow = d
	db, err := tsdb.Open(t.TempDir(), nil, nil, o)
	require.NoError(t, err)
	s := promstorage.New(db)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// appendOne appends one sample in a transaction of its own through the
// appender kind and returns Append's error (the transaction is committed
// either way).
func appendOne(t *testing.T, s *promstorage.Storage, kind int, ls labels.Labels, smp sample) error {
	t.Helper()
	app, tx := appenderKinds[kind].open(s)
	_, err := app(0, ls, smp.t, smp.f)
	require.NoError(t, tx.Commit())
	return err
}

// requireOutOfOrder asserts that err is the error of a late sample with
// the window off: isotsdb's and Prometheus's out-of-order errors.
func requireOutOfOrder(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, tsdb.ErrOutOfOrderSample)
	require.ErrorIs(t, err, storage.ErrOutOfOrderSample)
	require.NotErrorIs(t, err, storage.ErrTooOldSample)
}

const minute = int64(60 * 1000)

// TestLateWindowFromOptions: with tsdb.Options.OutOfOrderTimeWindow set at
// open, the adapter's appenders store a late sample within the window, and
// a query sees it in its place. Needs the head's support of late samples.
func TestLateWindowFromOptions(t *testing.T) {
	for kind := range appenderKinds {
		t.Run(appenderKinds[kind].name, func(t *testing.T) {
			s := newLateStorage(t, 30*time.Minute)
			ls := labels.FromStrings("__name__", "m")
			commitSamples(t, s, ls, sample{60 * minute, 1})
			require.NoError(t, appendOne(t, s, kind, ls, sample{40 * minute, 2}), "a sample 20 min late, window 30 min")
			require.Equal(t, []sample{{40 * minute, 2}, {60 * minute, 1}}, querySamples(t, s, ls))
		})
	}
}

// TestLateWindowFromConfig: Storage.ApplyConfig turns the window on and
// off as Prometheus's TSDB applies storage.tsdb.out_of_order_time_window,
// and a sample older than the window gets the too-old error of both
// isotsdb and Prometheus. The subtests "window on" and "too old" need the
// head's support of late samples.
func TestLateWindowFromConfig(t *testing.T) {
	for kind := range appenderKinds {
		t.Run(appenderKinds[kind].name, func(t *testing.T) {
			s := newStorage(t) // window off
			ls := labels.FromStrings("__name__", "m")
			commitSamples(t, s, ls, sample{60 * minute, 1})

			t.Run("window off", func(t *testing.T) {
				requireOutOfOrder(t, appendOne(t, s, kind, ls, sample{50 * minute, 2}))
			})
			t.Run("window on", func(t *testing.T) {
				require.NoError(t, s.ApplyConfig(windowConfig(30*time.Minute)))
				require.NoError(t, appendOne(t, s, kind, ls, sample{50 * minute, 2}), "a sample 10 min late, window 30 min")
				require.Equal(t, []sample{{50 * minute, 2}, {60 * minute, 1}}, querySamples(t, s, ls))
			})
			t.Run("too old", func(t *testing.T) {
				require.NoError(t, s.ApplyConfig(windowConfig(5*time.Minute)))
				err := appendOne(t, s, kind, ls, sample{45 * minute, 3})
				require.ErrorIs(t, err, tsdb.ErrTooOldSample)
				require.ErrorIs(t, err, storage.ErrTooOldSample)
				require.NotErrorIs(t, err, storage.ErrOutOfOrderSample)
			})
			t.Run("no TSDB config turns it off", func(t *testing.T) {
				require.NoError(t, s.ApplyConfig(windowConfig(30*time.Minute)))
				require.NoError(t, s.ApplyConfig(&config.Config{}))
				requireOutOfOrder(t, appendOne(t, s, kind, ls, sample{55 * minute, 4}))
			})
			t.Run("negative is off", func(t *testing.T) {
				require.NoError(t, s.ApplyConfig(windowConfig(-time.Hour)))
				requireOutOfOrder(t, appendOne(t, s, kind, ls, sample{56 * minute, 5}))
			})
		})
	}
}

// TestApplyConfigClosed: ApplyConfig on a closed DB fails with
// tsdb.ErrClosed.
func TestApplyConfigClosed(t *testing.T) {
	db, err := tsdb.Open(t.TempDir(), nil, nil, testOptions())
	require.NoError(t, err)
	s := promstorage.New(db)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.ApplyConfig(windowConfig(time.Minute)), tsdb.ErrClosed)
}

// TestLateRejectOptions: with the window on, Appender.SetOptions'
// DiscardOutOfOrder and AppenderV2's RejectOutOfOrder reject a late sample
// with both out-of-order errors; without them it is accepted.
func TestLateRejectOptions(t *testing.T) {
	s := newLateStorage(t, time.Hour)
	ls := labels.FromStrings("__name__", "reject")
	ctx := context.Background()
	app := s.Appender(ctx)
	_, err := app.Append(0, ls, 100_000, 1)
	require.NoError(t, err)
	require.NoError(t, app.Commit())

	app = s.Appender(ctx)
	app.SetOptions(&storage.AppendOptions{DiscardOutOfOrder: true})
	_, err = app.Append(0, ls, 50_000, 2)
	requireOutOfOrder(t, err)
	app.SetOptions(nil)
	_, err = app.Append(0, ls, 50_000, 2)
	require.NoError(t, err, "the option cleared")
	require.NoError(t, app.Commit())

	app2 := s.AppenderV2(ctx)
	_, err = app2.Append(0, ls, 0, 40_000, 3, nil, nil, storage.AppendV2Options{RejectOutOfOrder: true})
	requireOutOfOrder(t, err)
	_, err = app2.Append(0, ls, 0, 40_000, 3, nil, nil, storage.AppendV2Options{})
	require.NoError(t, err)
	require.NoError(t, app2.Commit())

	q, err := s.Querier(0, 200_000)
	require.NoError(t, err)
	defer q.Close()
	ss := q.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "reject"))
	require.True(t, ss.Next())
	var ts []int64
	it := ss.At().Iterator(nil)
	for it.Next() != chunkenc.ValNone {
		ts = append(ts, it.AtT())
	}
	require.Equal(t, []int64{40_000, 50_000, 100_000}, ts)
}
