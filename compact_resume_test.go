package tsdb

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// cancelCompactionAfterPublish runs a Compact that publishes the block of
// [0h, 2h) and is cancelled while it waits for an open Querier, before it
// truncated the head. It returns the block's ID.
func cancelCompactionAfterPublish(t *testing.T, db *DB) ulid.ULID {
	t.Helper()
	const hour = int64(3600_000)
	noWakeups(db)
	appendRange(t, db, labels.FromStrings("__name__", "m"), 0, 4*hour)
	q, err := db.Querier(0, 4*hour)
	require.NoError(t, err)
	defer q.Close()
	cctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- db.Compact(cctx) }()
	require.Eventually(t, func() bool { return len(db.Blocks()) == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	b := db.Blocks()
	require.Len(t, b, 1)
	require.Equal(t, int64(0), b[0].MinTime)
	require.Equal(t, 2*hour, b[0].MaxTime)
	return b[0].ULID
}

// requireOnlyBlock checks that db has exactly the block id, and all 240
// samples of series m.
func requireOnlyBlock(t *testing.T, db *DB, id ulid.ULID) {
	t.Helper()
	b := db.Blocks()
	require.Len(t, b, 1)
	require.Equal(t, id, b[0].ULID, "the block was written once, never again nor merged with a copy")
	require.Equal(t, 1, b[0].Compaction.Level)
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	got := querySamples(t, q)[`{__name__="m"}`]
	require.Len(t, got, 4*60)
	for i, s := range got {
		require.Equal(t, int64(i)*60_000, s.T)
	}
}

// TestCompactResumesTruncation: a Compact cancelled
// while it waits for old readers after publishing its block leaves the
// truncation pending; the next Compact does it and does not write the
// range again.
func TestCompactResumesTruncation(t *testing.T) {
	db, reg := openTestDB(t, nil)
	id := cancelCompactionAfterPublish(t, db)
	require.Equal(t, int64(0), db.Head().MinTime(), "not truncated yet")
	require.NoError(t, db.Compact(ctx))
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_compactions_total"), "one block written in all")
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_head_truncations_total"))
	require.Equal(t, 2*int64(3600_000), db.Head().MinTime())
	requireOnlyBlock(t, db, id)
	require.NoError(t, db.Compact(ctx))
	requireOnlyBlock(t, db, id)
}

// TestReopenAfterUntruncatedCompaction: the same, but the process stops
// (Close) before the truncation: Open does not load the block's range from
// the WAL into the head again, so no compaction writes it twice.
func TestReopenAfterUntruncatedCompaction(t *testing.T) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	id := cancelCompactionAfterPublish(t, db)
	require.NoError(t, db.Close())

	reg := prometheus.NewRegistry()
	db, err = Open("data", nil, reg, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, 2*int64(3600_000), db.Head().MinTime(), "the head starts after the block")
	require.NoError(t, db.Compact(ctx))
	require.Equal(t, 0.0, gauge(t, reg, "tsdb_compactions_total"))
	requireOnlyBlock(t, db, id)
}
