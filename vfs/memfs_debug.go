package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
)

// WriteFile is os.WriteFile on m: it creates or truncates name and writes
// data, going through the hook like any other caller. Nothing is synced.
func (m *MemFS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := m.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile is os.ReadFile on m: it returns name's current contents, going
// through the hook like any other caller.
func (m *MemFS) ReadFile(name string) ([]byte, error) {
	f, err := m.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Dump describes m for debugging failed tests: one line per path in the
// current tree, in name order, with each file's current and durable sizes,
// a mark on entries not yet durable in their directory, and lines for
// durable entries whose current entry is gone or points elsewhere (they come
// back on Crash). Hard-linked files are listed under each name.
func (m *MemFS) Dump() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	b.WriteString("/ dir\n")
	onPath := map[*inode]bool{m.root: true}
	var walk func(dir *inode, prefix string)
	walk = func(dir *inode, prefix string) {
		names := slices.Sorted(maps.Keys(dir.entries))
		for _, name := range names {
			n := dir.entries[name]
			p := prefix + name
			note := ""
			if dir.durableEntries[name] != n {
				note = " (entry not durable)"
			}
			if n.dir {
				fmt.Fprintf(&b, "%s/ dir%s\n", p, note)
				if !onPath[n] {
					onPath[n] = true
					walk(n, p+"/")
					delete(onPath, n)
				}
				continue
			}
			fmt.Fprintf(&b, "%s file size=%d durable=%d%s\n", p, len(n.data), len(n.durable), note)
		}
		for _, name := range slices.Sorted(maps.Keys(dir.durableEntries)) {
			if n := dir.durableEntries[name]; dir.entries[name] != n {
				kind := "file"
				if n.dir {
					kind = "dir"
				}
				fmt.Fprintf(&b, "%s%s %s (durable entry only: removed or replaced)\n", prefix, name, kind)
			}
		}
	}
	walk(m.root, "/")
	return b.String()
}
