package wlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// recoverLog reads the log on fsys the way an owner does after a restart:
// read, and on corruption Repair and read again. It returns the records.
func recoverLog(t *testing.T, fsys vfs.FS, opts Options) [][]byte {
	t.Helper()
	if _, err := fsys.Stat(testDir); errors.Is(err, fs.ErrNotExist) {
		return nil // crashed before the directory was made durable
	}
	got, err := readAll(t, fsys, testDir)
	if err != nil {
		var cerr *corrupt.Error
		require.ErrorAs(t, err, &cerr)
		w, oerr := Open(nil, nil, fsys, testDir, opts)
		require.NoError(t, oerr)
		require.NoError(t, w.Repair(err))
		require.NoError(t, w.Close())
		got, err = readAll(t, fsys, testDir)
		require.NoError(t, err, "after repair")
	}
	return got
}

// requireAckedPrefix checks that got starts with every acknowledged record
// and continues, if at all, with a prefix of the unacknowledged batch.
func requireAckedPrefix(t *testing.T, acked, pending, got [][]byte) {
	t.Helper()
	require.GreaterOrEqual(t, len(got), len(acked), "acknowledged records lost")
	requireRecords(t, acked, got[:len(acked)])
	extra := got[len(acked):]
	require.LessOrEqual(t, len(extra), len(pending), "records that were never logged")
	requireRecords(t, pending[:len(extra)], extra)
}

// TestFaultInjection fails the n-th operation of one kind on the log with an
// errno (or a short write) and checks that Log reports it, stays failed, and
// that the log recovers to all acknowledged records after a restart.
func TestFaultInjection(t *testing.T) {
	type fault struct {
		op  vfs.Op
		err error
	}
	faults := []fault{
		{vfs.OpWrite, syscall.ENOSPC},
		{vfs.OpWrite, syscall.EIO},
		{vfs.OpWrite, vfs.ShortWrite{N: 100, Err: syscall.ENOSPC}},
		{vfs.OpSync, syscall.EIO},
		{vfs.OpCreate, syscall.ENOSPC},
		{vfs.OpSyncDir, syscall.EIO},
	}
	for _, f := range faults {
		for _, policy := range []SyncPolicy{SyncOnSegmentCut, SyncEveryLog} {
			for nth := 1; nth <= 12; nth++ {
				name := fmt.Sprintf("%s/%v/%s/%d", f.op, f.err, policy, nth)
				t.Run(name, func(t *testing.T) {
					runFault(t, f.op, f.err, policy, nth)
				})
			}
		}
	}
}

func runFault(t *testing.T, op vfs.Op, injected error, policy SyncPolicy, nth int) {
	fsys := vfs.NewMemFS()
	opts := Options{SegmentSize: 2 * PageSize, Sync: policy}
	w, err := Open(nil, nil, fsys, testDir, opts)
	require.NoError(t, err)

	var count atomic.Int32
	fsys.SetHook(func(o vfs.Op, path string) error {
		if o == op && strings.HasPrefix(path, testDir) && int(count.Add(1)) == nth {
			return injected
		}
		return nil
	})
	cause := injected
	var sw vfs.ShortWrite
	if errors.As(injected, &sw) {
		cause = sw.Err
	}

	rng := rand.New(rand.NewPCG(6, uint64(nth)))
	var acked, pending [][]byte
	var failErr error
	for i := 0; i < 80 && failErr == nil; i++ {
		batch := [][]byte{testRecord(rng, i, rng.IntN(PageSize)), testRecord(rng, i+1000, rng.IntN(100))}
		if err := w.Log(batch...); err != nil {
			failErr, pending = err, batch
			break
		}
		acked = append(acked, batch...)
		if i%10 == 9 {
			if err := w.Sync(); err != nil {
				failErr = err
			}
		}
	}
	if failErr == nil {
		// The fault may hit a background sync: it shows up by Close.
		failErr = w.Close()
		require.Error(t, failErr, "fault %v on %s #%d never hit", injected, op, nth)
	} else {
		require.ErrorIs(t, failErr, ErrWriteFailed)
		require.ErrorIs(t, failErr, cause)
		// Failed for good: the same error from everything that writes.
		require.Equal(t, failErr, w.Log([]byte("after")))
		require.Equal(t, failErr, w.Sync())
		_, err := w.NextSegment()
		require.Equal(t, failErr, err)
		require.Equal(t, failErr, w.Close())
	}
	require.ErrorIs(t, failErr, cause)

	fsys.SetHook(nil)
	got := recoverLog(t, fsys, opts)
	requireAckedPrefix(t, acked, pending, got)
}

// TestCrashSyncEveryLog crashes after every mutating filesystem operation of
// a workload under SyncEveryLog and checks that nothing Log acknowledged
// before the crash is lost. CrashKeep also keeps random prefixes of unsynced
// writes (torn pages), which recovery must repair.
func TestCrashSyncEveryLog(t *testing.T) {
	opts := Options{SegmentSize: 2 * PageSize, Sync: SyncEveryLog, Compression: CompressionSnappy}
	rng := rand.New(rand.NewPCG(7, 7))
	var batches [][][]byte
	for i := range 25 {
		batches = append(batches, [][]byte{testRecord(rng, i, rng.IntN(PageSize)), testRecord(rng, i+100, rng.IntN(50))})
	}
	// workload runs the batches; ackedAt[i] is how many batches were
	// acknowledged when mutating operation i+1 started.
	workload := func(fsys *vfs.MemFS) (ackedAt []int) {
		var acked atomic.Int32
		base := fsys.Ops()
		fsys.SetHook(func(op vfs.Op, _ string) error {
			if op.Mutating() {
				for len(ackedAt) < fsys.Ops()-base {
					ackedAt = append(ackedAt, int(acked.Load()))
				}
			}
			return nil
		})
		w, err := Open(nil, nil, fsys, testDir, opts)
		require.NoError(t, err)
		for _, b := range batches {
			require.NoError(t, w.Log(b...))
			acked.Add(1)
		}
		require.NoError(t, w.Close())
		fsys.SetHook(nil)
		return ackedAt
	}
	ackedAt := workload(vfs.NewMemFS())
	n := len(ackedAt)
	require.Greater(t, n, 50)

	for k := 0; k <= n; k++ {
		fsys := vfs.NewMemFS()
		fsys.CrashAfter(k)
		workload(fsys)
		crashed := fsys.CrashState()
		acked := len(batches)
		if k < n {
			acked = ackedAt[k] // batches done before operation k+1 started
		}
		var want [][]byte
		for _, b := range batches[:acked] {
			want = append(want, b...)
		}
		var pending [][]byte
		if acked < len(batches) {
			pending = batches[acked]
		}
		got := recoverLog(t, crashed, opts)
		requireAckedPrefix(t, want, pending, got)

		// Torn writes: keep random parts of what was not synced.
		torn := fsys.CrashKeep(rand.New(rand.NewPCG(8, uint64(k))))
		got = recoverLog(t, torn, opts)
		requireRecords(t, want, got[:min(len(got), len(want))])
		require.GreaterOrEqual(t, len(got), len(want), "crash after op %d lost acknowledged records", k)
	}
}

// TestCrashDefaultPolicy checks that under SyncOnSegmentCut a crash loses at
// most the records after the last Sync or completed segment, and that the
// log always recovers to a prefix of what was logged.
func TestCrashDefaultPolicy(t *testing.T) {
	opts := Options{SegmentSize: 2 * PageSize}
	rng := rand.New(rand.NewPCG(9, 9))
	fsys := vfs.NewMemFS()
	w, err := Open(nil, nil, fsys, testDir, opts)
	require.NoError(t, err)
	var all [][]byte
	synced := 0
	for i := range 60 {
		rec := testRecord(rng, i, rng.IntN(PageSize/2))
		require.NoError(t, w.Log(rec))
		all = append(all, rec)
		if i%7 == 6 {
			require.NoError(t, w.Sync())
			synced = len(all)
		}
		for _, crashed := range []*vfs.MemFS{fsys.Crash(), fsys.CrashKeep(rand.New(rand.NewPCG(10, uint64(i))))} {
			got := recoverLog(t, crashed, opts)
			require.GreaterOrEqual(t, len(got), synced)
			requireRecords(t, all[:len(got)], got)
		}
	}
	require.NoError(t, w.Close())
	got, err := readAll(t, fsys.Crash(), testDir)
	require.NoError(t, err)
	requireRecords(t, all, got)
}

func TestShortWriteLeavesNoGarbageRecord(t *testing.T) {
	// A torn fragment is never mistaken for a record.
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	require.NoError(t, w.Log([]byte("ok")))
	fsys.SetHook(func(op vfs.Op, _ string) error {
		if op == vfs.OpWrite {
			return vfs.ShortWrite{N: 10, Err: syscall.ENOSPC}
		}
		return nil
	})
	err := w.Log(bytes.Repeat([]byte("x"), 100))
	require.ErrorIs(t, err, syscall.ENOSPC)
	fsys.SetHook(nil)
	require.Len(t, segmentBytes(t, fsys, 0), headerSize+2+10)
	got := recoverLog(t, fsys, Options{})
	requireRecords(t, [][]byte{[]byte("ok")}, got)
}

// TestOpenFailures fails each operation Open makes: Open returns the error,
// does not panic, and leaves the registerer free for a retry.
func TestOpenFailures(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpMkdir, vfs.OpReadDir, vfs.OpCreate, vfs.OpSyncDir} {
		fsys := vfs.NewMemFS()
		fsys.SetHook(func(o vfs.Op, _ string) error {
			if o == op {
				return syscall.EIO
			}
			return nil
		})
		reg := prometheus.NewRegistry()
		_, err := Open(nil, reg, fsys, testDir, Options{})
		require.ErrorIs(t, err, syscall.EIO, "%s", op)
		fsys.SetHook(nil)
		w, err := Open(nil, reg, fsys, testDir, Options{})
		require.NoError(t, err, "%s", op)
		require.NoError(t, w.Log([]byte("x")))
		require.NoError(t, w.Close())
	}
}
