package tsdb

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestAdversarialRecordLargerThanSegment commits a record far larger
// than a WAL segment, then replays it.
func TestAdversarialRecordLargerThanSegment(t *testing.T) {
	fsys := vfs.NewMemFS()
	opts := func(o *Options) { o.WALSegmentSize = 64 << 10 }
	db, err := openAdv(fsys, opts)
	require.NoError(t, err)
	want := map[string][]sample{}
	app := db.Appender(ctx)
	for i := 0; i < 4; i++ {
		l := labels.FromStrings(labels.MetricName, "big", "i", string(rune('a'+i)), "v", strings.Repeat("x", 300<<10))
		_, err := app.Append(0, l, 1000, float64(i))
		require.NoError(t, err)
		want[l.String()] = []sample{{1000, float64(i)}}
	}
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())
	db, err = openAdv(fsys.Crash(), opts)
	require.NoError(t, err)
	got, err := fullQuery(db)
	require.NoError(t, err)
	requireSameSamples(t, want, got)
	require.NoError(t, db.Close())
}

// TestAdversarialTinyOptions runs a DB with the smallest block range and
// chunk size: every sample a chunk, a block every few milliseconds.
func TestAdversarialTinyOptions(t *testing.T) {
	fsys := vfs.NewMemFS()
	opts := func(o *Options) {
		o.MinBlockDuration = time.Millisecond
		o.MaxBlockDuration = 9 * time.Millisecond
		o.SamplesPerChunk = 1
		o.StripeSize = 1
		o.WALSegmentSize = 32 << 10
	}
	_, err := openAdv(vfs.NewMemFS(), func(o *Options) { o.WALSegmentSize = 1 })
	require.ErrorIs(t, err, wlog.ErrInvalidOptions)
	db, err := openAdv(fsys, opts)
	require.NoError(t, err)
	want := map[string][]sample{}
	ls := []labels.Labels{labels.FromStrings(labels.MetricName, "a"), labels.FromStrings(labels.MetricName, "b")}
	for ts := int64(0); ts < 40; ts++ {
		app := db.Appender(ctx)
		for i, l := range ls {
			_, err := app.Append(0, l, ts, float64(ts)+float64(i))
			require.NoError(t, err)
			want[l.String()] = append(want[l.String()], sample{ts, float64(ts) + float64(i)})
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.NotEmpty(t, db.Blocks())
	got, err := fullQuery(db)
	require.NoError(t, err)
	requireSameSamples(t, want, got)
	require.NoError(t, db.Close())
	db, err = openAdv(fsys.Crash(), opts)
	require.NoError(t, err)
	got, err = fullQuery(db)
	require.NoError(t, err)
	requireSameSamples(t, want, got)
	require.NoError(t, db.Close())
}

// TestAdversarialSnapshotExtremeTimestamps: a head holding a sample at
// the top of the time range is snapshotted; the snapshot must hold it, or
// Append must refuse the sample, never silently drop the head. Snapshot
// computed the head block's MaxTime as maxt+1, which overflowed to
// MinInt64 for a sample at MaxInt64, so the head was left out and
// Snapshot returned nil. Timestamps above MaxSampleTime are now refused.
func TestAdversarialSnapshotExtremeTimestamps(t *testing.T) {
	for _, ts := range []int64{MaxSampleTime - 1, MaxSampleTime, MaxSampleTime + 1, math.MaxInt64 - 1, math.MaxInt64} {
		fsys := vfs.NewMemFS()
		db, err := openAdv(fsys, nil)
		require.NoError(t, err)
		l := labels.FromStrings(labels.MetricName, "x")
		// The other sample is an hour earlier: far older data would be
		// compacted and then deleted by retention (which counts from the
		// newest sample) before the snapshot.
		base := min(ts, MaxSampleTime) - 3600_000
		app := db.Appender(ctx)
		_, err = app.Append(0, l, base, 1)
		require.NoError(t, err)
		_, err = app.Append(0, l, ts, 2)
		require.Equal(t, ts > MaxSampleTime, err != nil, "sample at %d: %v", ts, err)
		if err != nil { // refused at the door
			require.ErrorIs(t, err, ErrOutOfBounds)
			require.NoError(t, app.Rollback())
			require.NoError(t, db.Close())
			continue
		}
		require.NoError(t, app.Commit())
		err = db.Snapshot("snap", true)
		require.NoError(t, db.Close())
		require.NoError(t, err, "ts %d: Snapshot", ts)
		sdb, err := Open("snap", nil, nil, &Options{FS: fsys, NoWAL: true})
		require.NoError(t, err)
		got, err := fullQuery(sdb)
		require.NoError(t, err)
		requireSameSamples(t, map[string][]sample{l.String(): {{base, 1}, {ts, 2}}}, got)
		require.NoError(t, sdb.Close())
	}
}
