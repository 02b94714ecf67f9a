package tsdb

import (
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/vfs"
)

// TestKeepWALFrom: checkpoints leave the segments Options.KeepWALFrom
// names, however many head compactions pass, and take them once the
// reader has moved on; the data is the same after a restart either way.
func TestKeepWALFrom(t *testing.T) {
	fsys := vfs.NewMemFS()
	walDir := filepath.Join("data", "wal")
	var need atomic.Int64
	need.Store(1) // a reader at segment 1
	o := DefaultOptions()
	o.FS = fsys
	o.WALSegmentSize = 32 << 10
	o.KeepWALFrom = func() int { return int(need.Load()) }
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	lsets := loadSeries(t, walTestSeries)
	rounds := 0
	scrape := func(n int) {
		for r := rounds; r < rounds+n; r++ {
			app := db.Appender(ctx)
			for i, l := range lsets {
				_, err := app.Append(0, l, int64(r)*15000, scrapeValue(i, r))
				require.NoError(t, err)
			}
			require.NoError(t, app.Commit())
		}
		rounds += n
	}
	// Three head compactions, each of which would checkpoint.
	for range 3 {
		scrape(2 * 3600 / 15)
		require.NoError(t, db.Compact(ctx))
	}
	require.NotEmpty(t, db.Blocks())
	segs, cp := walState(t, fsys, walDir)
	require.Greater(t, len(segs), 10, "the WAL grew")
	require.LessOrEqual(t, segs[0], 1, "segment 1 was kept")
	require.Less(t, cp, 1, "no checkpoint covers segment 1")

	// The reader moves on: the next compaction checkpoints up to it.
	moved := segs[len(segs)/2]
	need.Store(int64(moved))
	scrape(2 * 3600 / 15)
	require.NoError(t, db.Compact(ctx))
	segs, cp = walState(t, fsys, walDir)
	require.Equal(t, moved-1, cp, "checkpointed up to the reader")
	require.Equal(t, moved, segs[0])

	// No reader: checkpoints as usual.
	need.Store(math.MaxInt)
	scrape(2 * 3600 / 15)
	require.NoError(t, db.Compact(ctx))
	segs, cp = walState(t, fsys, walDir)
	require.Greater(t, cp, moved-1)
	require.Greater(t, segs[0], cp)

	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	before := querySamples(t, q)
	require.NoError(t, q.Close())
	require.NoError(t, db.Close())
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	q, err = db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	requireSameSamples(t, before, querySamples(t, q))
	require.NoError(t, q.Close())
	require.NoError(t, db.Close())
}
