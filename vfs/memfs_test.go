package vfs

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dirMark stands for a directory in the maps returned by tree.
const dirMark = "<dir>"

// tree lists every path in m (through the public API) with its contents,
// or dirMark for directories.
func tree(t *testing.T, m *MemFS) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := m.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			p := path.Join(dir, e.Name())
			if e.IsDir() {
				out[p] = dirMark
				walk(p)
				continue
			}
			b, err := m.ReadFile(p)
			require.NoError(t, err)
			out[p] = string(b)
		}
	}
	walk("/")
	return out
}

// mustWrite creates name with data without syncing anything.
func mustWrite(t *testing.T, m *MemFS, name, data string) {
	t.Helper()
	require.NoError(t, m.WriteFile(name, []byte(data), 0o644))
}

// mustWriteSync creates name with data and syncs the file (not the
// directory).
func mustWriteSync(t *testing.T, m *MemFS, name, data string) {
	t.Helper()
	f, err := m.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte(data))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// mustAppend appends data to name, syncing the file if sync is set.
func mustAppend(t *testing.T, m *MemFS, name, data string, sync bool) {
	t.Helper()
	f, err := m.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte(data))
	require.NoError(t, err)
	if sync {
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
}

// TestMemFSCrashDurability checks what survives Crash after each kind of
// change, synced and not.
func TestMemFSCrashDurability(t *testing.T) {
	cases := []struct {
		name string
		// setup runs first; everything it leaves is then made durable.
		setup func(t *testing.T, m *MemFS)
		// run makes the changes under test.
		run  func(t *testing.T, m *MemFS)
		want map[string]string // tree after Crash
	}{
		{
			name: "write without sync is lost",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "")
			},
			run: func(t *testing.T, m *MemFS) {
				mustAppend(t, m, "/a", "unsynced", false)
			},
			want: map[string]string{"/a": ""},
		},
		{
			name: "synced file with unsynced directory entry is lost",
			run: func(t *testing.T, m *MemFS) {
				mustWriteSync(t, m, "/a", "data")
			},
			want: map[string]string{},
		},
		{
			name: "directory entry synced but contents not",
			run: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "data")
				require.NoError(t, m.SyncDir("/"))
			},
			want: map[string]string{"/a": ""},
		},
		{
			name: "file and directory synced",
			run: func(t *testing.T, m *MemFS) {
				mustWriteSync(t, m, "/a", "data")
				require.NoError(t, m.SyncDir("/"))
			},
			want: map[string]string{"/a": "data"},
		},
		{
			name: "only the synced prefix survives",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "")
			},
			run: func(t *testing.T, m *MemFS) {
				mustAppend(t, m, "/a", "one,", true)
				mustAppend(t, m, "/a", "two", false)
			},
			want: map[string]string{"/a": "one,"},
		},
		{
			name: "sync through another handle covers all writes",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "")
			},
			run: func(t *testing.T, m *MemFS) {
				w, err := m.OpenFile("/a", os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = w.Write([]byte("via w"))
				require.NoError(t, err)
				r, err := m.Open("/a")
				require.NoError(t, err)
				require.NoError(t, r.Sync())
				require.NoError(t, r.Close())
				require.NoError(t, w.Close())
			},
			want: map[string]string{"/a": "via w"},
		},
		{
			name: "O_SYNC writes are durable without Sync",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "")
			},
			run: func(t *testing.T, m *MemFS) {
				f, err := m.OpenFile("/a", os.O_WRONLY|os.O_SYNC, 0)
				require.NoError(t, err)
				_, err = f.Write([]byte("sync"))
				require.NoError(t, err)
				require.NoError(t, f.Close())
			},
			want: map[string]string{"/a": "sync"},
		},
		{
			name: "rename without SyncDir keeps the old name",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/cur", "old")
				mustWrite(t, m, "/tmp", "new")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Rename("/tmp", "/cur"))
			},
			want: map[string]string{"/cur": "old", "/tmp": "new"},
		},
		{
			name: "rename with SyncDir",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/cur", "old")
				mustWrite(t, m, "/tmp", "new")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Rename("/tmp", "/cur"))
				require.NoError(t, m.SyncDir("/"))
			},
			want: map[string]string{"/cur": "new"},
		},
		{
			name: "cross-directory rename, destination synced only: both names",
			setup: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.MkdirAll("/src", 0o755))
				require.NoError(t, m.MkdirAll("/dst", 0o755))
				mustWrite(t, m, "/src/f", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Rename("/src/f", "/dst/f"))
				require.NoError(t, m.SyncDir("/dst"))
			},
			want: map[string]string{"/src": dirMark, "/dst": dirMark, "/src/f": "x", "/dst/f": "x"},
		},
		{
			name: "cross-directory rename, both synced",
			setup: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.MkdirAll("/src", 0o755))
				require.NoError(t, m.MkdirAll("/dst", 0o755))
				mustWrite(t, m, "/src/f", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Rename("/src/f", "/dst/f"))
				require.NoError(t, m.SyncDir("/dst"))
				require.NoError(t, m.SyncDir("/src"))
			},
			want: map[string]string{"/src": dirMark, "/dst": dirMark, "/dst/f": "x"},
		},
		{
			name: "cross-directory rename, source synced only: file lost",
			setup: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.MkdirAll("/src", 0o755))
				require.NoError(t, m.MkdirAll("/dst", 0o755))
				mustWrite(t, m, "/src/f", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Rename("/src/f", "/dst/f"))
				require.NoError(t, m.SyncDir("/src"))
			},
			want: map[string]string{"/src": dirMark, "/dst": dirMark},
		},
		{
			name: "remove without SyncDir comes back",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Remove("/a"))
			},
			want: map[string]string{"/a": "x"},
		},
		{
			name: "remove with SyncDir",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Remove("/a"))
				require.NoError(t, m.SyncDir("/"))
			},
			want: map[string]string{},
		},
		{
			name: "RemoveAll without SyncDir comes back whole",
			setup: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.MkdirAll("/d/sub", 0o755))
				mustWrite(t, m, "/d/sub/f", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.RemoveAll("/d"))
			},
			want: map[string]string{"/d": dirMark, "/d/sub": dirMark, "/d/sub/f": "x"},
		},
		{
			name: "hard link survives with its directory synced",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Link("/a", "/b"))
				require.NoError(t, m.SyncDir("/"))
				mustAppend(t, m, "/b", "y", true)
			},
			want: map[string]string{"/a": "xy", "/b": "xy"},
		},
		{
			name: "hard link without SyncDir is lost",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.Link("/a", "/b"))
			},
			want: map[string]string{"/a": "x"},
		},
		{
			name: "synced contents of a removed, still open file are gone with its entry",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "x")
			},
			run: func(t *testing.T, m *MemFS) {
				f, err := m.OpenFile("/a", os.O_RDWR, 0)
				require.NoError(t, err)
				require.NoError(t, m.Remove("/a"))
				require.NoError(t, m.SyncDir("/"))
				_, err = f.Write([]byte("z"))
				require.NoError(t, err)
				require.NoError(t, f.Sync())
				require.NoError(t, f.Close())
			},
			want: map[string]string{},
		},
		{
			name: "truncate without sync is undone",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "hello")
			},
			run: func(t *testing.T, m *MemFS) {
				f, err := m.OpenFile("/a", os.O_RDWR, 0)
				require.NoError(t, err)
				require.NoError(t, f.Truncate(2))
				require.NoError(t, f.Close())
			},
			want: map[string]string{"/a": "hello"},
		},
		{
			name: "truncate with sync",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "hello")
			},
			run: func(t *testing.T, m *MemFS) {
				f, err := m.OpenFile("/a", os.O_RDWR, 0)
				require.NoError(t, err)
				require.NoError(t, f.Truncate(2))
				require.NoError(t, f.Sync())
				require.NoError(t, f.Close())
			},
			want: map[string]string{"/a": "he"},
		},
		{
			name: "Create truncating a durable file, unsynced",
			setup: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "hello")
			},
			run: func(t *testing.T, m *MemFS) {
				mustWrite(t, m, "/a", "new")
			},
			want: map[string]string{"/a": "hello"},
		},
		{
			name: "MkdirAll needs every parent synced",
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.MkdirAll("/a/b/c", 0o755))
				mustWriteSync(t, m, "/a/b/c/f", "x")
				require.NoError(t, m.SyncDir("/a/b/c"))
				require.NoError(t, m.SyncDir("/a/b"))
				require.NoError(t, m.SyncDir("/a"))
				// "/" is not synced: nothing below it survives.
			},
			want: map[string]string{},
		},
		{
			name: "MkdirAll with every parent synced",
			run: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.MkdirAll("/a/b", 0o755))
				mustWriteSync(t, m, "/a/b/f", "x")
				for _, d := range []string{"/a/b", "/a", "/"} {
					require.NoError(t, m.SyncDir(d))
				}
			},
			want: map[string]string{"/a": dirMark, "/a/b": dirMark, "/a/b/f": "x"},
		},
		{
			name: "Sync on a directory handle syncs its entries",
			run: func(t *testing.T, m *MemFS) {
				mustWriteSync(t, m, "/a", "x")
				d, err := m.Open("/")
				require.NoError(t, err)
				require.NoError(t, d.Sync())
				require.NoError(t, d.Close())
			},
			want: map[string]string{"/a": "x"},
		},
		{
			name: "renamed directory keeps its own durable entries",
			setup: func(t *testing.T, m *MemFS) {
				require.NoError(t, m.MkdirAll("/tmp", 0o755))
				mustWrite(t, m, "/tmp/meta", "m")
			},
			run: func(t *testing.T, m *MemFS) {
				mustWriteSync(t, m, "/tmp/index", "i") // entry never synced
				require.NoError(t, m.Rename("/tmp", "/block"))
				require.NoError(t, m.SyncDir("/"))
			},
			want: map[string]string{"/block": dirMark, "/block/meta": "m"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemFS()
			if tc.setup != nil {
				tc.setup(t, m)
				m.SyncAll()
			}
			tc.run(t, m)
			after := tree(t, m)
			got := tree(t, m.Crash())
			require.Equal(t, tc.want, got, "dump before crash:\n%s", m.Dump())
			require.Equal(t, after, tree(t, m), "Crash must not change the MemFS it is called on")
		})
	}
}

// TestMemFSCrashCopiesAreIndependent checks that a MemFS made by Crash and
// the one it came from share no mutable state, whatever is written to
// either afterwards (they share durable byte slices internally).
func TestMemFSCrashCopiesAreIndependent(t *testing.T) {
	edits := []struct {
		name string
		edit func(t *testing.T, f File)
	}{
		{"overwrite start", func(t *testing.T, f File) {
			_, err := f.Write([]byte("XY"))
			require.NoError(t, err)
		}},
		{"append", func(t *testing.T, f File) {
			_, err := f.Seek(0, io.SeekEnd)
			require.NoError(t, err)
			_, err = f.Write([]byte("tail"))
			require.NoError(t, err)
		}},
		{"shrink then append", func(t *testing.T, f File) {
			require.NoError(t, f.Truncate(2))
			_, err := f.Seek(2, io.SeekStart)
			require.NoError(t, err)
			_, err = f.Write([]byte("zz"))
			require.NoError(t, err)
		}},
		{"shrink then grow", func(t *testing.T, f File) {
			require.NoError(t, f.Truncate(1))
			require.NoError(t, f.Truncate(6))
		}},
	}
	for _, e := range edits {
		for _, side := range []string{"original", "crashed"} {
			t.Run(e.name+"/"+side, func(t *testing.T) {
				m := NewMemFS()
				f, err := m.Create("/a")
				require.NoError(t, err)
				_, err = f.Write([]byte("abcdef"))
				require.NoError(t, err)
				require.NoError(t, f.Sync())
				require.NoError(t, m.SyncDir("/"))
				c := m.Crash()
				c2 := m.Crash()

				target, other := m, c
				if side == "crashed" {
					target, other = c, m
					require.NoError(t, f.Close())
					f, err = c.OpenFile("/a", os.O_RDWR, 0)
					require.NoError(t, err)
				}
				_, err = f.Seek(0, io.SeekStart)
				require.NoError(t, err)
				e.edit(t, f)
				require.NoError(t, f.Close())

				got, err := other.ReadFile("/a")
				require.NoError(t, err)
				require.Equal(t, "abcdef", string(got))
				got, err = c2.ReadFile("/a")
				require.NoError(t, err)
				require.Equal(t, "abcdef", string(got))
				got, err = target.ReadFile("/a")
				require.NoError(t, err)
				require.NotEqual(t, "abcdef", string(got))
				require.Equal(t, "abcdef", readFile(t, target.Crash(), "/a"), "durable contents of the edited side are unchanged")
			})
		}
	}
}

// TestMemFSCrashKeep checks torn writes: a crash keeps the durable contents
// plus some prefix of the unsynced appends, never anything else.
func TestMemFSCrashKeep(t *testing.T) {
	m := NewMemFS()
	mustWrite(t, m, "/log", "durable|")
	mustWrite(t, m, "/rewritten", "original")
	mustWrite(t, m, "/synced", "all synced")
	m.SyncAll()
	mustAppend(t, m, "/log", "0123456789", false)
	f, err := m.OpenFile("/rewritten", os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("ORIGINAL and more"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	mustWrite(t, m, "/unsynced-entry", "gone")

	lengths := map[int]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		got := tree(t, m.CrashKeep(rng))
		require.Len(t, got, 3)
		log := got["/log"]
		require.True(t, strings.HasPrefix("durable|0123456789", log), "log %q is not a prefix of the appended contents", log)
		require.True(t, strings.HasPrefix(log, "durable|"), "log %q lost durable data", log)
		lengths[len(log)] = true
		require.Equal(t, "original", got["/rewritten"], "a rewritten file keeps its durable contents")
		require.Equal(t, "all synced", got["/synced"])
	}
	require.Len(t, lengths, len("0123456789")+1, "every prefix length should occur in 200 crashes")

	// The same seed gives the same result.
	a := tree(t, m.CrashKeep(rand.New(rand.NewPCG(7, 7))))
	b := tree(t, m.CrashKeep(rand.New(rand.NewPCG(7, 7))))
	require.Equal(t, a, b)
}

// TestMemFSCrashHardLinksShareInode checks that names that were hard links
// before a crash are still one file after it.
func TestMemFSCrashHardLinksShareInode(t *testing.T) {
	m := NewMemFS()
	mustWrite(t, m, "/a", "x")
	require.NoError(t, m.Link("/a", "/b"))
	m.SyncAll()
	c := m.Crash()
	mustAppend(t, c, "/a", "y", false)
	got, err := c.ReadFile("/b")
	require.NoError(t, err)
	require.Equal(t, "xy", string(got))
}

// TestMemFSCrashDirectoryCycle builds durable entries that form a cycle
// (possible only because renames of directories were synced piecemeal) and
// checks that Crash terminates and keeps each directory once.
func TestMemFSCrashDirectoryCycle(t *testing.T) {
	m := NewMemFS()
	require.NoError(t, m.MkdirAll("/a/b", 0o755))
	m.SyncAll()
	require.NoError(t, m.Rename("/a/b", "/b"))
	require.NoError(t, m.Rename("/a", "/b/a"))
	require.NoError(t, m.SyncDir("/"))  // root durable: {b}
	require.NoError(t, m.SyncDir("/b")) // b durable: {a}; a still durably holds b
	got := tree(t, m.Crash())
	require.Equal(t, map[string]string{"/b": dirMark, "/b/a": dirMark}, got)
}

// TestMemFSCrashDropsLocksAndHooks checks that a crashed MemFS starts clean.
func TestMemFSCrashDropsLocksAndHooks(t *testing.T) {
	m := NewMemFS()
	l, err := m.Lock("/lock")
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, m.SyncDir("/"))
	m.SetHook(func(Op, string) error { return io.ErrUnexpectedEOF })
	c := m.Crash()
	require.Zero(t, c.Ops())
	l2, err := c.Lock("/lock")
	require.NoError(t, err, "the crashed process's lock is gone and the hook is not copied")
	require.NoError(t, l2.Close())
}

// TestMemFSLockFollowsInode checks that a lock taken through one name of a
// file is held against its other names.
func TestMemFSLockFollowsInode(t *testing.T) {
	m := NewMemFS()
	l, err := m.Lock("/lock")
	require.NoError(t, err)
	require.NoError(t, m.Link("/lock", "/alias"))
	_, err = m.Lock("/alias")
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Close())
	l, err = m.Lock("/alias")
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

// TestMemFSPaths checks that equivalent spellings name the same file.
func TestMemFSPaths(t *testing.T) {
	m := NewMemFS()
	require.NoError(t, m.MkdirAll("a/b", 0o755))
	mustWrite(t, m, "/a/b/f", "x")
	for _, p := range []string{"a/b/f", "./a/b/f", "/a/./b/../b/f", "/../a/b/f", "a//b/f"} {
		got, err := m.ReadFile(p)
		require.NoError(t, err, p)
		require.Equal(t, "x", string(got), p)
	}
	_, err := m.Stat("")
	require.ErrorIs(t, err, os.ErrNotExist)
	fi, err := m.Stat("/")
	require.NoError(t, err)
	require.True(t, fi.IsDir())
	require.Error(t, m.Remove("/"))
	require.Error(t, m.RemoveAll("."))
	require.Error(t, m.Rename("/", "/x"))
}

// TestMemFSDump checks that Dump shows sizes and what is not yet durable.
func TestMemFSDump(t *testing.T) {
	m := NewMemFS()
	require.NoError(t, m.MkdirAll("/d", 0o755))
	mustWrite(t, m, "/d/f", "12345")
	mustWrite(t, m, "/gone", "x")
	m.SyncAll()
	mustAppend(t, m, "/d/f", "678", false)
	mustWrite(t, m, "/new", "")
	require.NoError(t, m.Remove("/gone"))
	want := strings.Join([]string{
		"/ dir",
		"/d/ dir",
		"/d/f file size=8 durable=5",
		"/new file size=0 durable=0 (entry not durable)",
		"/gone file (durable entry only: removed or replaced)",
		"",
	}, "\n")
	require.Equal(t, want, m.Dump())
}

// TestMemFSConcurrent exercises concurrent use under the race detector:
// readers call ReadAt on a file being appended to and Map it, while other
// goroutines create and remove files.
func TestMemFSConcurrent(t *testing.T) {
	m := NewMemFS()
	w, err := m.Create("/log")
	require.NoError(t, err)
	r, err := m.Open("/log")
	require.NoError(t, err)
	const chunk, chunks = 64, 200
	var wg sync.WaitGroup
	var writerDone atomic.Bool
	wg.Go(func() {
		defer writerDone.Store(true)
		buf := make([]byte, chunk)
		for i := range chunks {
			for j := range buf {
				buf[j] = byte(i)
			}
			if _, err := w.Write(buf); !assert.NoError(t, err) {
				return
			}
			if i%10 == 0 {
				if !assert.NoError(t, w.Sync()) {
					return
				}
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			buf := make([]byte, chunk)
			for i := 0; i < chunks; {
				done := writerDone.Load() // before the read: then all writes are in
				n, err := r.ReadAt(buf, int64(i*chunk))
				if n < chunk {
					if done {
						assert.Failf(t, "chunk never written", "chunk %d", i)
						return
					}
					continue // not written yet
				}
				if !assert.NoError(t, err) ||
					!assert.Equal(t, bytes.Repeat([]byte{byte(i)}, chunk), buf, "chunk %d", i) {
					return
				}
				i++
			}
		})
	}
	wg.Go(func() {
		for i := range 100 {
			name := "/tmp" + string(rune('a'+i%26))
			if !assert.NoError(t, m.WriteFile(name, []byte("x"), 0o644)) {
				return
			}
			if mp, err := m.Map("/log"); err == nil {
				_ = mp.Bytes()
				_ = mp.Close()
			}
			_ = m.Crash()
			if !assert.NoError(t, m.Remove(name)) {
				return
			}
		}
	})
	wg.Wait()
	require.NoError(t, w.Close())
	require.NoError(t, r.Close())
}
