package vfs

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

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

// TestOSMapEvict checks that Evict takes a mapping's pages out of the
// resident set (as /proc/self/smaps counts them) without changing what
// Bytes reads, and that reading faults them back in.
func TestOSMapEvict(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("no /proc/self/smaps on this system")
	}
	name := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 64<<10*8)
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	require.NoError(t, os.WriteFile(name, data, 0o644))
	m, err := OS().Map(name)
	require.NoError(t, err)
	defer m.Close()
	require.True(t, bytes.Equal(data, m.Bytes())) // reads every page
	require.Equal(t, int64(len(data)), mappingRSS(t, m.Bytes()))
	require.NoError(t, m.Evict())
	require.Zero(t, mappingRSS(t, m.Bytes()))
	require.True(t, bytes.Equal(data, m.Bytes()), "contents after Evict")
	require.Equal(t, int64(len(data)), mappingRSS(t, m.Bytes()))
}

// mappingRSS returns the resident bytes of the mapping starting at b, from
// /proc/self/smaps.
func mappingRSS(t *testing.T, b []byte) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	sc := bufio.NewScanner(f)
	found := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, start) {
			found = true
			continue
		}
		if found && strings.HasPrefix(line, "Rss:") {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d kB", &kb)
			require.NoError(t, err)
			return kb << 10
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("mapping at %s not in /proc/self/smaps", start)
	return 0
}
