package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// modelNames are the paths the model test works on: few enough that
// operations collide (same name, file vs directory, missing parents).
var modelNames = [...]string{"a", "b", "d", "d/a", "d/b", "d/d", "d/d/a", "a/x"}

// opScript decodes a byte string into filesystem operations. Each byte it
// consumes is an operation code or an argument; running out of bytes ends
// the script.
type opScript struct{ b []byte }

func (s *opScript) next() (byte, bool) {
	if len(s.b) == 0 {
		return 0, false
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c, true
}

func (s *opScript) name() string {
	c, _ := s.next()
	return modelNames[int(c)%len(modelNames)]
}

// errnoOf reduces an error to what the model compares: nil, the errno, or
// a marker for an error with no errno (fs.ErrClosed, io.EOF, ...).
func errnoOf(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	if errors.Is(err, io.EOF) {
		return "EOF"
	}
	return "other error"
}

// runModelStep applies the next operation of s to fsys under root and
// returns a description of its outcome, or "" at the end of the script.
func runModelStep(s *opScript, fsys FS, root string) string {
	code, ok := s.next()
	if !ok {
		return ""
	}
	p := func(name string) string { return filepath.Join(root, filepath.FromSlash(name)) }
	switch code % 11 {
	case 0: // create and write
		name := s.name()
		n, _ := s.next()
		f, err := fsys.Create(p(name))
		if err != nil {
			return "create " + name + ": " + errnoOf(err)
		}
		_, err = f.Write(make([]byte, n%8))
		cerr := f.Close()
		return fmt.Sprintf("create %s: %s %s", name, errnoOf(err), errnoOf(cerr))
	case 1: // append
		name := s.name()
		f, err := fsys.OpenFile(p(name), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return "append " + name + ": " + errnoOf(err)
		}
		_, err = f.Write([]byte("xy"))
		return fmt.Sprintf("append %s: %s %s", name, errnoOf(err), errnoOf(f.Close()))
	case 2: // truncate
		name := s.name()
		n, _ := s.next()
		f, err := fsys.OpenFile(p(name), os.O_RDWR, 0)
		if err != nil {
			return "truncate " + name + ": " + errnoOf(err)
		}
		err = f.Truncate(int64(n % 16))
		return fmt.Sprintf("truncate %s %d: %s %s", name, n%16, errnoOf(err), errnoOf(f.Close()))
	case 3:
		name := s.name()
		return "remove " + name + ": " + errnoOf(fsys.Remove(p(name)))
	case 4:
		name := s.name()
		return "removeall " + name + ": " + errnoOf(fsys.RemoveAll(p(name)))
	case 5:
		a, b := s.name(), s.name()
		return "rename " + a + " " + b + ": " + errnoOf(fsys.Rename(p(a), p(b)))
	case 6:
		a, b := s.name(), s.name()
		return "link " + a + " " + b + ": " + errnoOf(fsys.Link(p(a), p(b)))
	case 7:
		name := s.name()
		return "mkdirall " + name + ": " + errnoOf(fsys.MkdirAll(p(name), 0o755))
	case 8:
		name := s.name()
		f, err := fsys.Open(p(name))
		if err != nil {
			return "read " + name + ": " + errnoOf(err)
		}
		b, err := io.ReadAll(f)
		return fmt.Sprintf("read %s: %q %s %s", name, b, errnoOf(err), errnoOf(f.Close()))
	case 9:
		name := s.name()
		fi, err := fsys.Stat(p(name))
		if err != nil {
			return "stat " + name + ": " + errnoOf(err)
		}
		size := fi.Size()
		if fi.IsDir() {
			size = 0 // directory sizes differ between filesystems
		}
		return fmt.Sprintf("stat %s: dir=%v size=%d", name, fi.IsDir(), size)
	default:
		name := s.name()
		ents, err := fsys.ReadDir(p(name))
		out := "readdir " + name + ": " + errnoOf(err)
		for _, e := range ents {
			out += fmt.Sprintf(" %s(dir=%v)", e.Name(), e.IsDir())
		}
		return out
	}
}

// listTree describes every path below root with its contents.
func listTree(fsys FS, root string) (map[string]string, error) {
	out := map[string]string{}
	var walk func(rel string) error
	walk = func(rel string) error {
		ents, err := fsys.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		for _, e := range ents {
			r := path.Join(rel, e.Name())
			if e.IsDir() {
				out[r] = dirMark
				if err := walk(r); err != nil {
					return err
				}
				continue
			}
			f, err := fsys.Open(filepath.Join(root, filepath.FromSlash(r)))
			if err != nil {
				return err
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				return err
			}
			out[r] = string(b)
		}
		return nil
	}
	return out, walk(".")
}

// checkMemFSMatchesOS runs script on OS (in a temporary directory) and on a
// MemFS and requires identical outcomes, step by step and at the end.
func checkMemFSMatchesOS(t *testing.T, script []byte) {
	osRoot := t.TempDir()
	mem := NewMemFS()
	so, sm := &opScript{b: script}, &opScript{b: script}
	for step := 0; ; step++ {
		want := runModelStep(so, OS(), osRoot)
		got := runModelStep(sm, mem, "/")
		require.Equal(t, want, got, "step %d differs; MemFS now:\n%s", step, mem.Dump())
		if want == "" {
			break
		}
	}
	want, err := listTree(OS(), osRoot)
	require.NoError(t, err)
	got, err := listTree(mem, "/")
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// modelSeeds are scripts that reach the interesting cases: renames over
// files and directories, into subdirectories, links, removals of non-empty
// directories.
var modelSeeds = [][]byte{
	{0, 0, 3, 7, 2, 5, 0, 2, 10, 2, 8, 0},
	{7, 5, 0, 3, 5, 5, 0, 2, 5, 2, 0, 8, 3, 9, 3, 10, 2},
	{7, 6, 5, 2, 6, 5, 2, 5, 3, 3, 2, 4, 2, 10, 0},
	{0, 0, 1, 6, 0, 1, 1, 1, 8, 1, 2, 0, 9, 8, 0, 3, 0, 8, 1},
	{7, 2, 0, 7, 9, 5, 3, 2, 0, 3, 2, 5, 2, 3, 4, 2, 8, 3, 10, 2},
	{0, 7, 0, 7, 5, 0, 7, 6, 1, 0, 6, 2, 6, 7, 2, 0, 5, 0, 5, 7, 5},
	{7, 6, 5, 6, 2, 0, 6, 5, 2, 6, 10, 5, 10, 2, 9, 6},
}

// TestMemFSMatchesOS replays the seed scripts; FuzzMemFSMatchesOS explores
// further.
func TestMemFSMatchesOS(t *testing.T) {
	for i, script := range modelSeeds {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkMemFSMatchesOS(t, script) })
	}
}

// FuzzMemFSMatchesOS checks that any sequence of operations has the same
// outcome (results, errnos, final tree) on MemFS as on the real filesystem.
func FuzzMemFSMatchesOS(f *testing.F) {
	for _, s := range modelSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 256 {
			script = script[:256]
		}
		checkMemFSMatchesOS(t, script)
	})
}
