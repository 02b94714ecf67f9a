package vfs

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MemFS is an in-memory FS for crash and fault-injection tests. It is safe
// for concurrent use.
//
// # Durability model
//
// MemFS follows the durability contract on FS literally, the way a strict
// POSIX filesystem may behave on power loss. Like a Unix filesystem it has
// inodes: a directory maps names to inodes, hard links share one inode, and
// an open file stays usable after its name is removed.
//
//   - Each file inode has its current contents and its durable contents: the
//     contents as of the last successful Sync of any handle to it (or a write
//     through a handle opened with os.O_SYNC). A new file's durable contents
//     are empty.
//   - Each directory has its current entries and its durable entries: the
//     entries as of the last SyncDir of that directory (or Sync of a handle
//     opened on it). Creating, removing, renaming and linking change only
//     current entries. A new directory's durable entries are empty; the root
//     always exists.
//
// Crash returns what a machine would find after power loss: the tree of
// durable entries from the root, each file holding its durable contents. So
// a synced file whose entry was never synced is lost; a rename survives only
// when the destination directory was synced, and the old name disappears
// only when the source directory was synced too (if only the destination
// was, both names survive, pointing to one inode). CrashKeep also keeps a
// random prefix of each file's unsynced appends (torn writes).
//
// # Fault injection
//
// SetHook installs a function called before every operation. If it returns
// an error the operation fails with it (inside an *fs.PathError, or an
// *os.LinkError for Rename and Link, as package os does) and has no effect;
// a ShortWrite makes a Write write a prefix and then fail.
//
// # Crash at every operation
//
// Ops counts the mutating operations started so far (see Op.Mutating). A
// test runs its workload once to learn how many it makes (n), then for each
// k in [0, n] runs it again on a fresh MemFS armed with CrashAfter(k), and
// checks the state CrashState returns: exactly what a power loss right after
// the workload's k-th mutating operation leaves behind.
//
// # Paths
//
// Paths are cleaned and resolved against the root, so "a/b", "./a/b" and
// "/a/b" name the same file; ".." never leaves the root. There are no
// symbolic links. Errors carry syscall errnos (ENOENT, EEXIST, ENOTDIR,
// EISDIR, ENOTEMPTY, ...) so errors.Is works with both the errno and the
// io/fs sentinels, as with OS.
type MemFS struct {
	mu sync.Mutex // protects all fields below, every inode, and every memFile's mutable fields

	root  *inode
	hook  func(op Op, path string) error
	ops   int             // mutating operations started
	locks map[*inode]bool // inodes locked by Lock and not yet released
	crash *crashPoint     // armed by CrashAfter; nil if none
}

// crashPoint records the state of a MemFS when its (after+1)-th mutating
// operation since NewMemFS starts; see MemFS.CrashAfter.
type crashPoint struct {
	after int    // absolute Ops count to capture at
	state *MemFS // nil until captured
}

var _ FS = (*MemFS)(nil)

// NewMemFS returns an empty MemFS holding only its root directory, which is
// durable.
func NewMemFS() *MemFS {
	return &MemFS{root: newDirInode(0o755, time.Now()), locks: map[*inode]bool{}}
}

// SetHook installs h to be called before every operation with the operation
// and the path it acts on (the new name for Rename and Link; the handle's
// name for File methods). A nil h removes the hook.
//
// If h returns a non-nil error, the operation returns it wrapped in an
// *fs.PathError (an *os.LinkError for Rename and Link) and has no effect,
// except that a ShortWrite returned for an OpWrite writes its first N bytes
// first. The operation still counts in Ops.
//
// h is called without MemFS's lock held, so it may call MemFS methods (Ops,
// Crash, Dump, even file operations). It may be called concurrently if the
// MemFS is used concurrently.
func (m *MemFS) SetHook(h func(op Op, path string) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hook = h
}

// Ops returns the number of mutating operations (see Op.Mutating) started
// on m so far, including those that failed. Inside a hook it includes the
// operation the hook was called for.
func (m *MemFS) Ops() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

// before counts op, captures the armed crash point if op is the one it waits
// for, and runs the hook. It must be called without m.mu held, before the
// operation does anything.
func (m *MemFS) before(op Op, name string) error {
	m.mu.Lock()
	if op.Mutating() {
		m.ops++
		if c := m.crash; c != nil && c.state == nil && m.ops == c.after+1 {
			c.state = m.crashLocked(nil)
		}
	}
	h := m.hook
	m.mu.Unlock()
	if h == nil {
		return nil
	}
	return h(op, name)
}

// pathError wraps err the way package os would for op on name.
func pathError(op Op, name string, err error) error {
	return &fs.PathError{Op: op.String(), Path: name, Err: err}
}

// linkError wraps err the way package os does for Rename and Link.
func linkError(op Op, oldname, newname string, err error) error {
	return &os.LinkError{Op: op.String(), Old: oldname, New: newname, Err: err}
}

// splitPath returns the components of name resolved against the root; no
// components means the root itself.
func splitPath(name string) ([]string, error) {
	if name == "" {
		return nil, syscall.ENOENT
	}
	p := path.Clean("/" + filepath.ToSlash(name))
	if p == "/" {
		return nil, nil
	}
	return strings.Split(p[1:], "/"), nil
}

// walkLocked returns the directory inode named by comps.
func (m *MemFS) walkLocked(comps []string) (*inode, error) {
	dir := m.root
	for _, c := range comps {
		next := dir.entries[c]
		if next == nil {
			return nil, syscall.ENOENT
		}
		if !next.dir {
			return nil, syscall.ENOTDIR
		}
		dir = next
	}
	return dir, nil
}

// parentLocked resolves name to its parent directory and base name. For the
// root, dir is nil and base is "".
func (m *MemFS) parentLocked(name string) (dir *inode, base string, err error) {
	comps, err := splitPath(name)
	if err != nil || len(comps) == 0 {
		return nil, "", err
	}
	dir, err = m.walkLocked(comps[:len(comps)-1])
	if err != nil {
		return nil, "", err
	}
	return dir, comps[len(comps)-1], nil
}

// lookupLocked returns the inode named by name.
func (m *MemFS) lookupLocked(name string) (*inode, error) {
	dir, base, err := m.parentLocked(name)
	if err != nil {
		return nil, err
	}
	if dir == nil {
		return m.root, nil
	}
	n := dir.entries[base]
	if n == nil {
		return nil, syscall.ENOENT
	}
	return n, nil
}

// Create implements FS: it opens name read-write, creating or truncating it.
func (m *MemFS) Create(name string) (File, error) {
	return m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Open implements FS: it opens name read-only.
func (m *MemFS) Open(name string) (File, error) {
	return m.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile implements FS. It honours os.O_RDONLY, os.O_WRONLY, os.O_RDWR,
// os.O_CREATE, os.O_EXCL, os.O_TRUNC, os.O_APPEND and os.O_SYNC (each write
// is made durable as if followed by Sync). A directory may be opened
// read-only; Sync on such a handle syncs the directory's entries.
func (m *MemFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	op := OpOpen
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		op = OpCreate
	}
	if err := m.before(op, name); err != nil {
		return nil, pathError(op, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, err := m.openLocked(name, flag, perm)
	if err != nil {
		return nil, pathError(op, name, err)
	}
	return f, nil
}

// openLocked does the work of OpenFile; its errors are bare errnos.
func (m *MemFS) openLocked(name string, flag int, perm fs.FileMode) (*memFile, error) {
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	f := &memFile{
		m:        m,
		name:     name,
		readable: acc == os.O_RDONLY || acc == os.O_RDWR,
		writable: acc == os.O_WRONLY || acc == os.O_RDWR,
		append:   flag&os.O_APPEND != 0,
		sync:     flag&os.O_SYNC != 0,
	}
	dir, base, err := m.parentLocked(name)
	if err != nil {
		return nil, err
	}
	n := m.root
	if dir != nil {
		n = dir.entries[base]
	}
	switch {
	case n == nil && flag&os.O_CREATE == 0:
		return nil, syscall.ENOENT
	case n == nil:
		now := time.Now()
		n = newFileInode(perm, now)
		dir.entries[base] = n
		dir.modTime = now
	case flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, syscall.EEXIST
	}
	if n.dir && (f.writable || flag&os.O_TRUNC != 0) {
		return nil, syscall.EISDIR
	}
	if flag&os.O_TRUNC != 0 && len(n.data) > 0 {
		n.resizeLocked(0)
		n.modTime = time.Now()
	}
	f.ino = n
	return f, nil
}

// Remove implements FS: it removes a file or an empty directory.
func (m *MemFS) Remove(name string) error {
	if err := m.before(OpRemove, name); err != nil {
		return pathError(OpRemove, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(name)
	if err == nil && dir == nil {
		err = syscall.EBUSY // the root
	}
	if err != nil {
		return pathError(OpRemove, name, err)
	}
	n := dir.entries[base]
	switch {
	case n == nil:
		return pathError(OpRemove, name, syscall.ENOENT)
	case n.dir && len(n.entries) > 0:
		return pathError(OpRemove, name, syscall.ENOTEMPTY)
	}
	delete(dir.entries, base)
	dir.modTime = time.Now()
	return nil
}

// RemoveAll implements FS. Like os.RemoveAll it removes every entry below
// name (so their directories' current entries change too) and returns nil
// if name does not exist.
func (m *MemFS) RemoveAll(name string) error {
	if err := m.before(OpRemove, name); err != nil {
		return pathError(OpRemove, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(name)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return nil
	case err == nil && dir == nil:
		err = syscall.EBUSY // the root
	}
	if err != nil {
		return pathError(OpRemove, name, err)
	}
	n := dir.entries[base]
	if n == nil {
		return nil
	}
	now := time.Now()
	clearTreeLocked(n, now)
	delete(dir.entries, base)
	dir.modTime = now
	return nil
}

// clearTreeLocked removes every current entry below n.
func clearTreeLocked(n *inode, now time.Time) {
	if !n.dir || len(n.entries) == 0 {
		return
	}
	for _, c := range n.entries {
		clearTreeLocked(c, now)
	}
	clear(n.entries)
	n.modTime = now
}

// Rename implements FS with the semantics of os.Rename on Unix: a file
// newname is replaced atomically (by a file only; ENOTDIR for a directory);
// an existing directory newname is never replaced (EEXIST); renaming a
// directory into itself fails with EINVAL; renaming a name onto another
// name of the same inode does nothing.
func (m *MemFS) Rename(oldname, newname string) error {
	if err := m.before(OpRename, newname); err != nil {
		return linkError(OpRename, oldname, newname, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.renameLocked(oldname, newname); err != nil {
		return linkError(OpRename, oldname, newname, err)
	}
	return nil
}

// renameLocked does the work of Rename; its errors are bare errnos. It
// reports errors in the order os.Rename on Linux does: os.Rename's own check
// for an existing directory newname first, then rename(2)'s path lookups,
// then its checks on the two entries.
func (m *MemFS) renameLocked(oldname, newname string) error {
	oldComps, err := splitPath(oldname)
	if err != nil {
		return err
	}
	newComps, err := splitPath(newname)
	if err != nil {
		return err
	}
	if len(oldComps) == 0 || len(newComps) == 0 {
		return syscall.EBUSY // the root
	}
	if dst, err := m.lookupLocked(newname); err == nil && dst.dir {
		// os.Rename refuses to replace a directory, even an empty one, to
		// behave as on Windows; it allows only renaming a directory onto
		// another spelling of itself.
		src, err := m.lookupLocked(oldname)
		if err != nil {
			return err
		}
		if oldname == newname || src != dst {
			return syscall.EEXIST
		}
	}
	odir, err := m.walkLocked(oldComps[:len(oldComps)-1])
	if err != nil {
		return err
	}
	ndir, err := m.walkLocked(newComps[:len(newComps)-1])
	if err != nil {
		return err
	}
	obase, nbase := oldComps[len(oldComps)-1], newComps[len(newComps)-1]
	n := odir.entries[obase]
	if n == nil {
		return syscall.ENOENT
	}
	if n.dir && len(newComps) > len(oldComps) && slices.Equal(newComps[:len(oldComps)], oldComps) {
		return syscall.EINVAL // into its own subtree
	}
	if dst := ndir.entries[nbase]; dst != nil {
		switch {
		case dst == n:
			return nil // two names of one inode: rename(2) does nothing
		case n.dir && !dst.dir:
			return syscall.ENOTDIR
		case !n.dir && dst.dir:
			return syscall.EISDIR
		case dst.dir && len(dst.entries) > 0:
			return syscall.ENOTEMPTY
		}
	}
	now := time.Now()
	delete(odir.entries, obase)
	ndir.entries[nbase] = n
	odir.modTime, ndir.modTime = now, now
	return nil
}

// Link implements FS: newname becomes another entry for oldname's inode.
// Directories cannot be linked (EPERM) and newname must not exist (EEXIST).
func (m *MemFS) Link(oldname, newname string) error {
	if err := m.before(OpLink, newname); err != nil {
		return linkError(OpLink, oldname, newname, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Errors in link(2)'s order: oldname's lookup, newname's, then the
	// check that oldname is not a directory.
	n, err := m.lookupLocked(oldname)
	if err != nil {
		return linkError(OpLink, oldname, newname, err)
	}
	dir, base, err := m.parentLocked(newname)
	switch {
	case err != nil:
	case dir == nil || dir.entries[base] != nil:
		err = syscall.EEXIST
	case n.dir:
		err = syscall.EPERM
	}
	if err != nil {
		return linkError(OpLink, oldname, newname, err)
	}
	dir.entries[base] = n
	dir.modTime = time.Now()
	return nil
}

// MkdirAll implements FS. Each directory it creates is a new entry in its
// parent, durable only once the parent is synced.
func (m *MemFS) MkdirAll(name string, perm fs.FileMode) error {
	if err := m.before(OpMkdir, name); err != nil {
		return pathError(OpMkdir, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	comps, err := splitPath(name)
	if err != nil {
		return pathError(OpMkdir, name, err)
	}
	dir := m.root
	for _, c := range comps {
		next := dir.entries[c]
		if next == nil {
			now := time.Now()
			next = newDirInode(perm, now)
			dir.entries[c] = next
			dir.modTime = now
		} else if !next.dir {
			return pathError(OpMkdir, name, syscall.ENOTDIR)
		}
		dir = next
	}
	return nil
}

// ReadDir implements FS: the current entries, sorted by name.
func (m *MemFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := m.before(OpReadDir, name); err != nil {
		return nil, pathError(OpReadDir, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(name)
	if err == nil && !n.dir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, pathError(OpReadDir, name, err)
	}
	names := slices.Sorted(maps.Keys(n.entries))
	out := make([]fs.DirEntry, len(names))
	for i, b := range names {
		out[i] = fs.FileInfoToDirEntry(n.entries[b].infoLocked(b))
	}
	return out, nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (fs.FileInfo, error) {
	if err := m.before(OpStat, name); err != nil {
		return nil, pathError(OpStat, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(name)
	if err != nil {
		return nil, pathError(OpStat, name, err)
	}
	return n.infoLocked(baseName(name)), nil
}

// baseName returns the last element of name as os.Stat reports it.
func baseName(name string) string { return filepath.Base(name) }

// SyncDir implements FS: the directory's current entries become durable.
// Like OS().SyncDir it fails with ENOTDIR on a file.
func (m *MemFS) SyncDir(name string) error {
	if err := m.before(OpSyncDir, name); err != nil {
		return pathError(OpSyncDir, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(name)
	if err == nil && !n.dir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return pathError(OpSyncDir, name, err)
	}
	n.syncLocked()
	return nil
}

// Map implements FS. The view is a copy of the current contents (a
// snapshot): later writes do not show in it.
func (m *MemFS) Map(name string) (Mapped, error) {
	if err := m.before(OpMap, name); err != nil {
		return nil, pathError(OpMap, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(name)
	if err == nil && n.dir {
		err = syscall.EISDIR
	}
	if err != nil {
		return nil, pathError(OpMap, name, err)
	}
	return &memMapping{data: append([]byte{}, n.data...)}, nil
}

// memMapping is the Mapped that MemFS.Map returns: a private copy.
type memMapping struct{ data []byte }

// Bytes returns the copied contents (non-nil, possibly empty), or nil after
// Close.
func (mm *memMapping) Bytes() []byte { return mm.data }

// Evict does nothing: the copy is heap memory.
func (mm *memMapping) Evict() error { return nil }

// Close drops the copy. Closing twice is a no-op.
func (mm *memMapping) Close() error {
	mm.data = nil
	return nil
}

// Lock implements FS. The lock belongs to the inode, so it is also held
// against other names of the same file; it is not inherited by a MemFS made
// with Crash (the process holding it is gone). Creating the lock file is a
// directory-entry change like any other.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	if err := m.before(OpLock, name); err != nil {
		return nil, pathError(OpLock, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, err := m.openLocked(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, pathError(OpLock, name, err)
	}
	if m.locks[f.ino] {
		return nil, pathError(OpLock, name, ErrLocked)
	}
	m.locks[f.ino] = true
	return &memLock{m: m, ino: f.ino}, nil
}

// memLock is a lock held on a MemFS inode.
type memLock struct {
	m   *MemFS
	ino *inode
	// released is guarded by m.mu.
	released bool
}

// Close releases the lock. Closing twice is a no-op.
func (l *memLock) Close() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if !l.released {
		l.released = true
		delete(l.m.locks, l.ino)
	}
	return nil
}
