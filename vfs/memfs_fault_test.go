package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// failOn returns a hook that fails every op equal to target with err.
func failOn(target Op, err error) func(Op, string) error {
	return func(op Op, _ string) error {
		if op == target {
			return err
		}
		return nil
	}
}

func TestMemFSWriteENOSPC(t *testing.T) {
	m := NewMemFS()
	f, err := m.Create("/a")
	require.NoError(t, err)
	_, err = f.Write([]byte("ok"))
	require.NoError(t, err)
	m.SetHook(failOn(OpWrite, syscall.ENOSPC))
	n, err := f.Write([]byte("more"))
	require.Zero(t, n)
	require.ErrorIs(t, err, syscall.ENOSPC)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "write", pe.Op)
	require.Equal(t, "/a", pe.Path)
	m.SetHook(nil)
	_, err = f.Write([]byte("!"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err := m.ReadFile("/a")
	require.NoError(t, err)
	require.Equal(t, "ok!", string(got), "the failed write wrote nothing and did not move the offset")
}

func TestMemFSShortWrite(t *testing.T) {
	cases := []struct {
		name    string
		sw      ShortWrite
		wantN   int
		wantErr error
	}{
		{"prefix", ShortWrite{N: 3, Err: syscall.ENOSPC}, 3, syscall.ENOSPC},
		{"nothing", ShortWrite{N: 0, Err: syscall.EIO}, 0, syscall.EIO},
		{"negative clamps to zero", ShortWrite{N: -5, Err: syscall.EIO}, 0, syscall.EIO},
		{"too long clamps to the buffer", ShortWrite{N: 100, Err: syscall.ENOSPC}, 6, syscall.ENOSPC},
		{"nil Err means io.ErrShortWrite", ShortWrite{N: 2}, 2, io.ErrShortWrite},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemFS()
			f, err := m.Create("/a")
			require.NoError(t, err)
			m.SetHook(failOn(OpWrite, tc.sw))
			n, err := f.Write([]byte("abcdef"))
			require.Equal(t, tc.wantN, n)
			require.ErrorIs(t, err, tc.wantErr)
			var sw ShortWrite
			require.ErrorAs(t, err, &sw)
			require.Equal(t, tc.sw, sw)
			m.SetHook(nil)
			_, err = f.Write([]byte("|"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			got, err := m.ReadFile("/a")
			require.NoError(t, err)
			require.Equal(t, "abcdef"[:tc.wantN]+"|", string(got), "exactly n bytes written, offset advanced by n")
		})
	}
}

// TestMemFSInjectedErrorHasNoEffect fails each operation once and checks
// that it returns the injected error and changes nothing, durable state
// included.
func TestMemFSInjectedErrorHasNoEffect(t *testing.T) {
	cases := []struct {
		op  Op
		run func(m *MemFS) error
	}{
		{OpCreate, func(m *MemFS) error { _, err := m.Create("/new"); return err }},
		{OpCreate, func(m *MemFS) error { _, err := m.OpenFile("/f", os.O_RDWR|os.O_TRUNC, 0); return err }},
		{OpOpen, func(m *MemFS) error { _, err := m.Open("/f"); return err }},
		{OpRemove, func(m *MemFS) error { return m.Remove("/f") }},
		{OpRemove, func(m *MemFS) error { return m.RemoveAll("/d") }},
		{OpRename, func(m *MemFS) error { return m.Rename("/f", "/g") }},
		{OpLink, func(m *MemFS) error { return m.Link("/f", "/g") }},
		{OpMkdir, func(m *MemFS) error { return m.MkdirAll("/e/f", 0o755) }},
		{OpSyncDir, func(m *MemFS) error { return m.SyncDir("/") }},
		{OpStat, func(m *MemFS) error { _, err := m.Stat("/f"); return err }},
		{OpReadDir, func(m *MemFS) error { _, err := m.ReadDir("/"); return err }},
		{OpMap, func(m *MemFS) error { _, err := m.Map("/f"); return err }},
		{OpLock, func(m *MemFS) error { _, err := m.Lock("/lock"); return err }},
		{OpWrite, func(m *MemFS) error {
			return withFile(m, func(f File) error { _, err := f.Write([]byte("zz")); return err })
		}},
		{OpSync, func(m *MemFS) error { return withFile(m, func(f File) error { return f.Sync() }) }},
		{OpTruncate, func(m *MemFS) error { return withFile(m, func(f File) error { return f.Truncate(0) }) }},
		{OpRead, func(m *MemFS) error {
			return withFile(m, func(f File) error { _, err := f.Read(make([]byte, 1)); return err })
		}},
		{OpRead, func(m *MemFS) error {
			return withFile(m, func(f File) error { _, err := f.ReadAt(make([]byte, 1), 0); return err })
		}},
		{OpStat, func(m *MemFS) error { return withFile(m, func(f File) error { _, err := f.Stat(); return err }) }},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprintf("%d_%s", i, tc.op), func(t *testing.T) {
			m := NewMemFS()
			require.NoError(t, m.MkdirAll("/d", 0o755))
			mustWrite(t, m, "/f", "durable")
			m.SyncAll()
			mustAppend(t, m, "/f", "+current", false)
			mustWrite(t, m, "/d/x", "x")
			wantTree, wantCrash := tree(t, m), tree(t, m.Crash())

			injected := errors.New("injected")
			var calls []Op
			m.SetHook(func(op Op, _ string) error {
				calls = append(calls, op)
				if op == tc.op {
					return injected
				}
				return nil
			})
			err := tc.run(m)
			require.ErrorIs(t, err, injected)
			var pe *fs.PathError
			var le *os.LinkError
			require.True(t, errors.As(err, &pe) || errors.As(err, &le), "got %T", err)
			require.Contains(t, calls, tc.op)
			m.SetHook(nil)

			require.Equal(t, wantTree, tree(t, m))
			require.Equal(t, wantCrash, tree(t, m.Crash()))
			l, err := m.Lock("/f")
			require.NoError(t, err, "no lock left behind")
			require.NoError(t, l.Close())
		})
	}
}

// withFile runs fn on a read-write handle of /f (opened before the hook can
// see it matter: OpOpen is not failed by these cases' hooks).
func withFile(m *MemFS, fn func(File) error) error {
	f, err := m.OpenFile("/f", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}

// TestMemFSHookSeesOpsAndPaths checks what the hook is told.
func TestMemFSHookSeesOpsAndPaths(t *testing.T) {
	m := NewMemFS()
	type call struct {
		op   Op
		path string
	}
	var calls []call
	m.SetHook(func(op Op, p string) error {
		calls = append(calls, call{op, p})
		return nil
	})
	f, err := m.Create("/a")
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	_, err = f.ReadAt(make([]byte, 1), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, m.Rename("/a", "/b"))
	require.NoError(t, m.Link("/b", "/c"))
	require.NoError(t, m.SyncDir("/"))
	require.NoError(t, m.MkdirAll("/d", 0o755))
	require.NoError(t, m.Remove("/c"))
	want := []call{
		{OpCreate, "/a"}, {OpWrite, "/a"}, {OpSync, "/a"}, {OpRead, "/a"},
		{OpRename, "/b"}, {OpLink, "/c"}, {OpSyncDir, "/"}, {OpMkdir, "/d"}, {OpRemove, "/c"},
	}
	require.Equal(t, want, calls)
	require.Equal(t, 8, m.Ops(), "all but the read are mutating")
}

// TestMemFSHookMayCallMemFS checks that a hook can use the MemFS it is
// installed on without deadlocking, and that Ops inside it includes the
// current operation.
func TestMemFSHookMayCallMemFS(t *testing.T) {
	m := NewMemFS()
	var seen []int
	var snap *MemFS
	m.SetHook(func(op Op, p string) error {
		seen = append(seen, m.Ops())
		if op == OpSyncDir {
			snap = m.Crash()
			_ = m.Dump()
		}
		return nil
	})
	mustWriteSync(t, m, "/a", "x") // create, write, sync
	require.NoError(t, m.SyncDir("/"))
	require.Equal(t, []int{1, 2, 3, 4}, seen)
	require.Equal(t, map[string]string{}, tree(t, snap), "the hook runs before the SyncDir takes effect")
}

func TestOpString(t *testing.T) {
	for op := OpCreate; op <= OpLock; op++ {
		require.NotContains(t, op.String(), "op(", "Op %d has no name", op)
	}
	require.Equal(t, "write", OpWrite.String())
	require.Equal(t, "op(200)", Op(200).String())
	require.True(t, OpWrite.Mutating())
	require.False(t, OpRead.Mutating())
	require.False(t, Op(200).Mutating())
}

// publish is the atomic-replace protocol the database uses to publish a
// file: write a temporary file, fsync it, rename it over the target, fsync
// the directory. With skipFileSync it has the classic bug of renaming
// before the data is durable.
func publish(m *MemFS, data string, skipFileSync bool) error {
	f, err := m.Create("/dir/target.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(data)); err != nil {
		f.Close()
		return err
	}
	if !skipFileSync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := m.Rename("/dir/target.tmp", "/dir/target"); err != nil {
		return err
	}
	return m.SyncDir("/dir")
}

// newPublishFS returns a MemFS holding a durable /dir/target.
func newPublishFS(t *testing.T) *MemFS {
	m := NewMemFS()
	require.NoError(t, m.MkdirAll("/dir", 0o755))
	mustWrite(t, m, "/dir/target", "old")
	m.SyncAll()
	return m
}

// TestMemFSCrashAtEveryOp is the crash-at-every-write pattern: it measures
// the workload's mutating operations, then crashes after each k of them and
// checks the invariant. The correct protocol always leaves the old or the
// new contents; the buggy one is caught leaving an empty file.
func TestMemFSCrashAtEveryOp(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		t.Run(fmt.Sprintf("skipFileSync=%v", buggy), func(t *testing.T) {
			m := newPublishFS(t)
			start := m.Ops()
			require.NoError(t, publish(m, "new", buggy))
			n := m.Ops() - start
			require.Positive(t, n)

			var violations []string
			outcomes := map[string]bool{}
			for k := 0; k <= n; k++ {
				m := newPublishFS(t)
				m.CrashAfter(k)
				require.NoError(t, publish(m, "new", buggy))
				after := m.CrashState()
				got, err := after.ReadFile("/dir/target")
				require.NoError(t, err, "crash after op %d lost the target:\n%s", k, after.Dump())
				outcomes[string(got)] = true
				if string(got) != "old" && string(got) != "new" {
					violations = append(violations, fmt.Sprintf("k=%d: %q", k, got))
				}
			}
			require.True(t, outcomes["old"], "some crash point must precede the publish")
			if buggy {
				require.NotEmpty(t, violations, "crashing at every op must catch rename-before-fsync")
				return
			}
			require.Empty(t, violations)
			require.True(t, outcomes["new"], "the last crash point must see the published file")
		})
	}
}

func TestMemFSCrashAfter(t *testing.T) {
	// The workload: create (1), write (2), sync (3), SyncDir (4). Only after
	// the fourth does /a survive a crash.
	for k := 0; k <= 5; k++ {
		m := NewMemFS()
		mustWrite(t, m, "/setup", "s") // ops before arming do not shift k
		m.SyncAll()
		m.CrashAfter(k)
		mustWriteSync(t, m, "/a", "x")
		require.NoError(t, m.SyncDir("/"))
		want := map[string]string{"/setup": "s"}
		if k >= 4 {
			want["/a"] = "x"
		}
		require.Equal(t, want, tree(t, m.CrashState()), "k=%d", k)
	}

	m := NewMemFS()
	m.CrashAfter(0)
	mustWrite(t, m, "/a", "x")
	m.CrashAfter(-1) // disarmed: CrashState is the current durable state
	require.NoError(t, m.SyncDir("/"))
	require.Equal(t, map[string]string{"/a": ""}, tree(t, m.CrashState()))
}
