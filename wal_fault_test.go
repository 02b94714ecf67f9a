package tsdb

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/vfs"
)

// TestWALFaults: ENOSPC or EIO on a WAL write,
// fsync or segment creation makes Commit return ErrWAL wrapping the cause;
// nothing panics; committed data stays readable and queries keep working;
// later commits fail clearly until the DB is reopened; the reopened DB has
// every acknowledged commit and no partial one.
func TestWALFaults(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpCreate} {
		for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
			t.Run(fmt.Sprintf("%s/%s", op, errno), func(t *testing.T) {
				w := newCrashWorkload(5, 400)
				fsys := vfs.NewMemFS()
				o := DefaultOptions()
				o.FS, o.WALSyncEveryCommit = fsys, true
				o.WALSegmentSize = 32 << 10 // segment creation happens often
				db, err := Open("data", nil, nil, o)
				require.NoError(t, err)

				acked := 0
				for k := 1; k <= 100; k++ {
					require.NoError(t, w.commit(db, k))
					acked = k
				}
				var injected int
				fsys.SetHook(func(o vfs.Op, path string) error {
					if o == op && strings.Contains(path, "/wal/") {
						injected++
						return errno
					}
					return nil
				})
				var failedAt int
				for k := acked + 1; k <= len(w.sizes); k++ {
					err := w.commit(db, k)
					if err == nil {
						acked = k
						continue
					}
					require.ErrorIs(t, err, ErrWAL)
					require.ErrorIs(t, err, errno)
					failedAt = k
					break
				}
				require.NotZero(t, failedAt, "the fault was never hit")
				require.Positive(t, injected)

				// Queries keep working and see exactly the acknowledged commits.
				present := presentTxns(t, db, w)
				for k := 1; k <= len(w.sizes); k++ {
					require.Equal(t, k <= acked, present[k], "transaction %d", k)
				}
				// The fault clears; the log stays failed until a reopen.
				fsys.SetHook(nil)
				err = w.commit(db, failedAt+1)
				require.ErrorIs(t, err, ErrWAL, "later commits say the DB must be reopened")
				// The failed commits released their write IDs (a leaked one
				// would hold back the low watermark, and compaction, which
				// waits for the commits in flight, forever).
				_, inflight := db.head.iso.stats()
				require.Zero(t, inflight, "commits in flight after the failed ones returned")
				_ = db.Close() // may report the sticky WAL failure

				// A reopen (after a crash, even) has every acknowledged commit.
				present = w.check(t, fsys.Crash(), "reopen after fault")
				for k := 1; k <= acked; k++ {
					require.True(t, present[k], "acknowledged transaction %d lost", k)
				}
				for k := failedAt + 1; k <= len(w.sizes); k++ {
					require.False(t, present[k], "transaction %d was never committed", k)
				}
				// And it takes commits again.
				o.FS = fsys
				db2, err := Open("data", nil, nil, o)
				require.NoError(t, err)
				require.NoError(t, w.commit(db2, len(w.sizes)))
				require.NoError(t, db2.Close())
			})
		}
	}
}

// presentTxns is crashWorkload.check on an open DB.
func presentTxns(t *testing.T, db *DB, w *crashWorkload) []bool {
	t.Helper()
	q, err := db.Querier(0, int64(len(w.sizes)))
	require.NoError(t, err)
	defer q.Close()
	counts := make([]int, len(w.sizes)+1)
	ss := q.Select(ctx, w.matcher())
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() != chunks.ValNone {
			ts, _ := it.At()
			counts[ts]++
		}
	}
	require.NoError(t, ss.Err())
	present := make([]bool, len(w.sizes)+1)
	for k := 1; k <= len(w.sizes); k++ {
		if counts[k] != 0 {
			require.Equal(t, w.sizes[k-1], counts[k], "samples of transaction %d", k)
		}
		present[k] = counts[k] > 0
	}
	return present
}
