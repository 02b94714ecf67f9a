package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// fsUnderTest is one FS implementation with a fresh, empty directory to work
// in.
type fsUnderTest struct {
	name string
	fs   FS
	dir  string
}

// p joins elem onto the test directory.
func (u fsUnderTest) p(elem ...string) string {
	return filepath.Join(append([]string{u.dir}, elem...)...)
}

// implementations returns OS over a t.TempDir() and a fresh MemFS.
func implementations(t *testing.T) []fsUnderTest {
	return []fsUnderTest{
		{name: "OS", fs: OS(), dir: t.TempDir()},
		{name: "MemFS", fs: NewMemFS(), dir: "/data"},
	}
}

// forEachFS runs fn as a subtest against each implementation, with the test
// directory already created.
func forEachFS(t *testing.T, fn func(t *testing.T, u fsUnderTest)) {
	for _, u := range implementations(t) {
		t.Run(u.name, func(t *testing.T) {
			require.NoError(t, u.fs.MkdirAll(u.dir, 0o755))
			fn(t, u)
		})
	}
}

// writeFile creates name with data through fsys.
func writeFile(t *testing.T, fsys FS, name string, data string) {
	t.Helper()
	f, err := fsys.Create(name)
	require.NoError(t, err)
	n, err := f.Write([]byte(data))
	require.NoError(t, err)
	require.Equal(t, len(data), n)
	require.NoError(t, f.Close())
}

// readFile returns name's contents read through fsys.
func readFile(t *testing.T, fsys FS, name string) string {
	t.Helper()
	f, err := fsys.Open(name)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return string(b)
}

// requireErrno checks that err is a *fs.PathError or *os.LinkError wrapping
// errno.
func requireErrno(t *testing.T, err error, errno syscall.Errno) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, errno)
	var pe *fs.PathError
	var le *os.LinkError
	require.True(t, errors.As(err, &pe) || errors.As(err, &le), "error %v (%T) is neither *fs.PathError nor *os.LinkError", err, err)
}

// TestFSBehaviour runs one table of behaviours against both OS and MemFS,
// so that MemFS can stand in for the real filesystem in tests.
func TestFSBehaviour(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, u fsUnderTest)
	}{
		{"create write read stat", func(t *testing.T, u fsUnderTest) {
			f, err := u.fs.Create(u.p("a"))
			require.NoError(t, err)
			require.Equal(t, u.p("a"), f.Name())
			n, err := f.Write([]byte("hello world"))
			require.NoError(t, err)
			require.Equal(t, 11, n)
			off, err := f.Seek(0, io.SeekStart)
			require.NoError(t, err)
			require.Zero(t, off)
			buf := make([]byte, 5)
			_, err = io.ReadFull(f, buf)
			require.NoError(t, err)
			require.Equal(t, "hello", string(buf))
			n, err = f.ReadAt(buf, 6)
			require.NoError(t, err)
			require.Equal(t, 5, n)
			require.Equal(t, "world", string(buf))
			fi, err := f.Stat()
			require.NoError(t, err)
			require.Equal(t, "a", fi.Name())
			require.EqualValues(t, 11, fi.Size())
			require.False(t, fi.IsDir())
			require.NoError(t, f.Sync())
			require.NoError(t, f.Close())
			fi, err = u.fs.Stat(u.p("a"))
			require.NoError(t, err)
			require.EqualValues(t, 11, fi.Size())
			require.Equal(t, "hello world", readFile(t, u.fs, u.p("a")))
		}},
		{"create truncates existing", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "long contents")
			writeFile(t, u.fs, u.p("a"), "short")
			require.Equal(t, "short", readFile(t, u.fs, u.p("a")))
		}},
		{"read at end and short ReadAt give EOF", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "abc")
			f, err := u.fs.Open(u.p("a"))
			require.NoError(t, err)
			defer f.Close()
			buf := make([]byte, 8)
			n, err := f.ReadAt(buf, 1)
			require.Equal(t, 2, n)
			require.ErrorIs(t, err, io.EOF)
			require.Equal(t, "bc", string(buf[:n]))
			_, err = f.ReadAt(buf, -1)
			require.Error(t, err)
			_, err = f.Seek(0, io.SeekEnd)
			require.NoError(t, err)
			n, err = f.Read(buf)
			require.Zero(t, n)
			require.ErrorIs(t, err, io.EOF)
		}},
		{"open missing", func(t *testing.T, u fsUnderTest) {
			_, err := u.fs.Open(u.p("missing"))
			requireErrno(t, err, syscall.ENOENT)
			require.ErrorIs(t, err, fs.ErrNotExist)
			_, err = u.fs.Create(u.p("nodir", "a"))
			require.ErrorIs(t, err, fs.ErrNotExist)
			_, err = u.fs.Stat(u.p("missing"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		}},
		{"path through a file", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("f"), "x")
			_, err := u.fs.Create(u.p("f", "a"))
			requireErrno(t, err, syscall.ENOTDIR)
			requireErrno(t, u.fs.MkdirAll(u.p("f", "d"), 0o755), syscall.ENOTDIR)
		}},
		{"O_EXCL on existing file", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "x")
			_, err := u.fs.OpenFile(u.p("a"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			requireErrno(t, err, syscall.EEXIST)
			require.ErrorIs(t, err, fs.ErrExist)
			f, err := u.fs.OpenFile(u.p("b"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
		{"O_APPEND writes at end", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "abc")
			f, err := u.fs.OpenFile(u.p("a"), os.O_RDWR|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Seek(0, io.SeekStart)
			require.NoError(t, err)
			_, err = f.Write([]byte("de"))
			require.NoError(t, err)
			_, err = f.Write([]byte("f"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			require.Equal(t, "abcdef", readFile(t, u.fs, u.p("a")))
		}},
		{"write past end zero-fills", func(t *testing.T, u fsUnderTest) {
			f, err := u.fs.Create(u.p("a"))
			require.NoError(t, err)
			_, err = f.Seek(3, io.SeekStart)
			require.NoError(t, err)
			_, err = f.Write([]byte("x"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			require.Equal(t, "\x00\x00\x00x", readFile(t, u.fs, u.p("a")))
		}},
		{"truncate shrinks and zero-grows, offset kept", func(t *testing.T, u fsUnderTest) {
			f, err := u.fs.Create(u.p("a"))
			require.NoError(t, err)
			_, err = f.Write([]byte("abcdef"))
			require.NoError(t, err)
			require.NoError(t, f.Truncate(2))
			require.NoError(t, f.Truncate(4))
			off, err := f.Seek(0, io.SeekCurrent)
			require.NoError(t, err)
			require.EqualValues(t, 6, off)
			require.NoError(t, f.Close())
			require.Equal(t, "ab\x00\x00", readFile(t, u.fs, u.p("a")))
		}},
		{"read-only handle rejects writes", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "abc")
			f, err := u.fs.Open(u.p("a"))
			require.NoError(t, err)
			defer f.Close()
			_, err = f.Write([]byte("x"))
			requireErrno(t, err, syscall.EBADF)
			requireErrno(t, f.Truncate(0), syscall.EINVAL)
			require.NoError(t, f.Sync(), "fsync through a read-only descriptor is allowed")
			require.Equal(t, "abc", readFile(t, u.fs, u.p("a")))
		}},
		{"write-only handle rejects reads", func(t *testing.T, u fsUnderTest) {
			f, err := u.fs.OpenFile(u.p("a"), os.O_WRONLY|os.O_CREATE, 0o644)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.Read(make([]byte, 1))
			requireErrno(t, err, syscall.EBADF)
		}},
		{"closed handle", func(t *testing.T, u fsUnderTest) {
			f, err := u.fs.Create(u.p("a"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			require.ErrorIs(t, f.Close(), fs.ErrClosed)
			_, err = f.Write([]byte("x"))
			require.ErrorIs(t, err, fs.ErrClosed)
			_, err = f.Read(make([]byte, 1))
			require.ErrorIs(t, err, fs.ErrClosed)
			require.ErrorIs(t, f.Sync(), fs.ErrClosed)
		}},
		{"directories cannot be written or read as files", func(t *testing.T, u fsUnderTest) {
			require.NoError(t, u.fs.MkdirAll(u.p("d"), 0o755))
			_, err := u.fs.Create(u.p("d"))
			requireErrno(t, err, syscall.EISDIR)
			f, err := u.fs.Open(u.p("d"))
			require.NoError(t, err)
			_, err = f.Read(make([]byte, 1))
			requireErrno(t, err, syscall.EISDIR)
			fi, err := f.Stat()
			require.NoError(t, err)
			require.True(t, fi.IsDir())
			require.NoError(t, f.Sync())
			require.NoError(t, f.Close())
		}},
		{"open file survives removal", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "abc")
			f, err := u.fs.OpenFile(u.p("a"), os.O_RDWR, 0)
			require.NoError(t, err)
			require.NoError(t, u.fs.Remove(u.p("a")))
			_, err = f.Seek(0, io.SeekEnd)
			require.NoError(t, err)
			_, err = f.Write([]byte("d"))
			require.NoError(t, err)
			buf := make([]byte, 4)
			_, err = f.ReadAt(buf, 0)
			require.NoError(t, err)
			require.Equal(t, "abcd", string(buf))
			require.NoError(t, f.Close())
			_, err = u.fs.Stat(u.p("a"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		}},
		{"rename replaces target", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "new")
			writeFile(t, u.fs, u.p("b"), "old")
			require.NoError(t, u.fs.Rename(u.p("a"), u.p("b")))
			require.Equal(t, "new", readFile(t, u.fs, u.p("b")))
			_, err := u.fs.Stat(u.p("a"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		}},
		{"rename onto another name of the same file is a no-op", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "x")
			require.NoError(t, u.fs.Link(u.p("a"), u.p("b")))
			require.NoError(t, u.fs.Rename(u.p("a"), u.p("b")))
			require.Equal(t, "x", readFile(t, u.fs, u.p("a")))
			require.Equal(t, "x", readFile(t, u.fs, u.p("b")))
		}},
		{"rename directory", func(t *testing.T, u fsUnderTest) {
			require.NoError(t, u.fs.MkdirAll(u.p("d1", "sub"), 0o755))
			writeFile(t, u.fs, u.p("d1", "sub", "f"), "x")
			require.NoError(t, u.fs.MkdirAll(u.p("d2"), 0o755))
			require.NoError(t, u.fs.Rename(u.p("d1"), u.p("d2", "moved")))
			require.Equal(t, "x", readFile(t, u.fs, u.p("d2", "moved", "sub", "f")))
			_, err := u.fs.Stat(u.p("d1"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		}},
		{"rename errors", func(t *testing.T, u fsUnderTest) {
			require.NoError(t, u.fs.MkdirAll(u.p("d", "sub"), 0o755))
			require.NoError(t, u.fs.MkdirAll(u.p("empty"), 0o755))
			writeFile(t, u.fs, u.p("f"), "x")
			requireErrno(t, u.fs.Rename(u.p("missing"), u.p("g")), syscall.ENOENT)
			requireErrno(t, u.fs.Rename(u.p("missing"), u.p("d")), syscall.ENOENT)
			requireErrno(t, u.fs.Rename(u.p("f"), u.p("d")), syscall.EEXIST)
			requireErrno(t, u.fs.Rename(u.p("d"), u.p("empty")), syscall.EEXIST)
			requireErrno(t, u.fs.Rename(u.p("d"), u.p("f")), syscall.ENOTDIR)
			requireErrno(t, u.fs.Rename(u.p("d"), u.p("d", "sub", "in")), syscall.EINVAL)
			requireErrno(t, u.fs.Rename(u.p("f"), u.p("nodir", "g")), syscall.ENOENT)
			require.Equal(t, "x", readFile(t, u.fs, u.p("f")), "failed renames change nothing")
		}},
		{"hard link shares contents", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "abc")
			require.NoError(t, u.fs.Link(u.p("a"), u.p("b")))
			f, err := u.fs.OpenFile(u.p("b"), os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte("d"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			require.Equal(t, "abcd", readFile(t, u.fs, u.p("a")))
			require.NoError(t, u.fs.Remove(u.p("a")))
			require.Equal(t, "abcd", readFile(t, u.fs, u.p("b")))
		}},
		{"link errors", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "x")
			writeFile(t, u.fs, u.p("b"), "y")
			require.NoError(t, u.fs.MkdirAll(u.p("d"), 0o755))
			requireErrno(t, u.fs.Link(u.p("a"), u.p("b")), syscall.EEXIST)
			requireErrno(t, u.fs.Link(u.p("missing"), u.p("c")), syscall.ENOENT)
			requireErrno(t, u.fs.Link(u.p("d"), u.p("e")), syscall.EPERM)
		}},
		{"remove", func(t *testing.T, u fsUnderTest) {
			require.NoError(t, u.fs.MkdirAll(u.p("d", "sub"), 0o755))
			requireErrno(t, u.fs.Remove(u.p("missing")), syscall.ENOENT)
			requireErrno(t, u.fs.Remove(u.p("d")), syscall.ENOTEMPTY)
			require.NoError(t, u.fs.Remove(u.p("d", "sub")))
			require.NoError(t, u.fs.Remove(u.p("d")))
			_, err := u.fs.Stat(u.p("d"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		}},
		{"remove all", func(t *testing.T, u fsUnderTest) {
			require.NoError(t, u.fs.MkdirAll(u.p("d", "sub", "deeper"), 0o755))
			writeFile(t, u.fs, u.p("d", "f"), "x")
			writeFile(t, u.fs, u.p("d", "sub", "deeper", "g"), "y")
			require.NoError(t, u.fs.RemoveAll(u.p("d")))
			_, err := u.fs.Stat(u.p("d"))
			require.ErrorIs(t, err, fs.ErrNotExist)
			require.NoError(t, u.fs.RemoveAll(u.p("d")))
			require.NoError(t, u.fs.RemoveAll(u.p("nodir", "x")))
			writeFile(t, u.fs, u.p("f"), "x")
			require.NoError(t, u.fs.RemoveAll(u.p("f")))
			_, err = u.fs.Stat(u.p("f"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		}},
		{"mkdirall and readdir", func(t *testing.T, u fsUnderTest) {
			require.NoError(t, u.fs.MkdirAll(u.p("d", "b"), 0o755))
			require.NoError(t, u.fs.MkdirAll(u.p("d", "b"), 0o755), "existing directory is fine")
			writeFile(t, u.fs, u.p("d", "c"), "xyz")
			writeFile(t, u.fs, u.p("d", "a"), "x")
			ents, err := u.fs.ReadDir(u.p("d"))
			require.NoError(t, err)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			require.Equal(t, []string{"a", "b", "c"}, names)
			require.False(t, ents[0].IsDir())
			require.True(t, ents[1].IsDir())
			info, err := ents[2].Info()
			require.NoError(t, err)
			require.EqualValues(t, 3, info.Size())
			fi, err := u.fs.Stat(u.p("d", "b"))
			require.NoError(t, err)
			require.True(t, fi.IsDir())
			_, err = u.fs.ReadDir(u.p("d", "a"))
			requireErrno(t, err, syscall.ENOTDIR)
			_, err = u.fs.ReadDir(u.p("missing"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		}},
		{"syncdir", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("f"), "x")
			require.NoError(t, u.fs.SyncDir(u.dir))
			requireErrno(t, u.fs.SyncDir(u.p("f")), syscall.ENOTDIR)
			requireErrno(t, u.fs.SyncDir(u.p("missing")), syscall.ENOENT)
		}},
		{"map", func(t *testing.T, u fsUnderTest) {
			writeFile(t, u.fs, u.p("a"), "mapped contents")
			m, err := u.fs.Map(u.p("a"))
			require.NoError(t, err)
			require.Equal(t, "mapped contents", string(m.Bytes()))
			require.NoError(t, m.Close())
			require.NoError(t, m.Close(), "second Close is a no-op")

			writeFile(t, u.fs, u.p("empty"), "")
			m, err = u.fs.Map(u.p("empty"))
			require.NoError(t, err)
			require.NotNil(t, m.Bytes())
			require.Empty(t, m.Bytes())
			require.NoError(t, m.Close())

			_, err = u.fs.Map(u.p("missing"))
			require.ErrorIs(t, err, fs.ErrNotExist)
			require.NoError(t, u.fs.MkdirAll(u.p("d"), 0o755))
			_, err = u.fs.Map(u.p("d"))
			requireErrno(t, err, syscall.EISDIR)
		}},
		{"lock", func(t *testing.T, u fsUnderTest) {
			l, err := u.fs.Lock(u.p("lock"))
			require.NoError(t, err)
			_, err = u.fs.Stat(u.p("lock"))
			require.NoError(t, err, "Lock creates the file")
			_, err = u.fs.Lock(u.p("lock"))
			require.ErrorIs(t, err, ErrLocked)
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, u.p("lock"), pe.Path)
			other, err := u.fs.Lock(u.p("other"))
			require.NoError(t, err, "another file is not locked")
			require.NoError(t, other.Close())
			require.NoError(t, l.Close())
			require.NoError(t, l.Close(), "second Close is harmless")
			l, err = u.fs.Lock(u.p("lock"))
			require.NoError(t, err, "released lock can be taken again")
			require.NoError(t, l.Close())
			_, err = u.fs.Lock(u.p("nodir", "lock"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachFS(t, tc.run)
		})
	}
}
