package vfs

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOSMapLargeFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	data := make([]byte, 1<<20+123)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	require.NoError(t, os.WriteFile(name, data, 0o644))
	m, err := OS().Map(name)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, m.Bytes()))
	require.NoError(t, m.Close())
	require.Nil(t, m.Bytes(), "Bytes is nil after Close")
}

func TestOSErrorsReturnNilInterfaces(t *testing.T) {
	fsys := OS()
	missing := filepath.Join(t.TempDir(), "missing", "f")
	f, err := fsys.Create(missing)
	require.ErrorIs(t, err, syscall.ENOENT)
	require.True(t, f == nil, "a failed Create must return a nil File, not a typed nil")
	f, err = fsys.Open(missing)
	require.Error(t, err)
	require.True(t, f == nil)
	f, err = fsys.OpenFile(missing, os.O_RDONLY, 0)
	require.Error(t, err)
	require.True(t, f == nil)
	mp, err := fsys.Map(missing)
	require.Error(t, err)
	require.True(t, mp == nil)
	l, err := fsys.Lock(missing)
	require.Error(t, err)
	require.True(t, l == nil)
}

// TestOSLockAcrossProcesses checks that a lock held by another process
// makes Lock fail with ErrLocked, and that it is free once that process
// releases it.
func TestOSLockAcrossProcesses(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+name)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)

	_, err = OS().Lock(name)
	require.ErrorIs(t, err, ErrLocked)

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	l, err := OS().Lock(name)
	require.NoError(t, err)
	require.NoError(t, l.Close())
}
