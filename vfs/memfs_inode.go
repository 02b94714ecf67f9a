package vfs

import (
	"io/fs"
	"maps"
	"slices"
	"time"
)

// maxMemFileSize bounds a MemFS file so that a write or truncate at a huge
// offset fails with EFBIG instead of trying to allocate it: MemFS keeps files
// in memory and has no sparse files. 4 GiB is far beyond any test's needs.
const maxMemFileSize = 1 << 32

// inode is a MemFS file or directory. Directory entries point to inodes, so
// hard links are two entries pointing to one inode and an open file keeps
// working after its name is removed, as on a Unix filesystem.
//
// All fields are guarded by the owning MemFS's mu.
//
// Invariant on the bytes of durable: once a slice has been stored in
// durable, no byte of it is ever modified again, by this MemFS or by a
// MemFS made from it with Crash. data may share its backing array with
// durable (shared == true); any mutation that writes a byte below
// len(durable) first gives data its own copy (unshareLocked). That makes Sync
// and Crash O(1) instead of copying whole files.
type inode struct {
	dir     bool
	perm    fs.FileMode // permission bits only
	modTime time.Time

	// Files only.
	data    []byte // current contents
	durable []byte // contents as of the last successful Sync; cap == len
	shared  bool   // data and durable share a backing array

	// Directories only: name -> inode.
	entries        map[string]*inode // current entries
	durableEntries map[string]*inode // entries as of the last SyncDir
}

// newFileInode returns an empty file whose durable contents are empty too.
func newFileInode(perm fs.FileMode, now time.Time) *inode {
	return &inode{perm: perm & fs.ModePerm, modTime: now}
}

// newDirInode returns an empty directory whose durable entries are empty.
func newDirInode(perm fs.FileMode, now time.Time) *inode {
	return &inode{
		dir:            true,
		perm:           perm & fs.ModePerm,
		modTime:        now,
		entries:        map[string]*inode{},
		durableEntries: map[string]*inode{},
	}
}

// unshareLocked gives data its own backing array if a write starting at
// byte lo could otherwise modify bytes of durable.
func (n *inode) unshareLocked(lo int) {
	if n.shared && lo < len(n.durable) {
		n.data = slices.Clone(n.data)
		n.shared = false
	}
}

// resizeLocked sets len(data) to size, zero-filling any growth. The caller
// has checked 0 <= size <= maxMemFileSize.
func (n *inode) resizeLocked(size int) {
	old := len(n.data)
	if size <= old {
		n.data = n.data[:size] // writes no byte, so sharing is harmless
		return
	}
	n.unshareLocked(old)
	if size > cap(n.data) {
		// Double: append's own growth is only 1.25x for large slices, which
		// makes a long run of small appends copy the file many times over.
		grown := make([]byte, size, max(size, 2*cap(n.data)))
		copy(grown, n.data)
		n.data = grown
		n.shared = false
		return
	}
	n.data = n.data[:size]
	clear(n.data[old:]) // the spare capacity may hold stale bytes
}

// writeAtLocked writes p at off, zero-filling any gap past the old end. The
// caller has checked 0 <= off and off+len(p) <= maxMemFileSize.
func (n *inode) writeAtLocked(p []byte, off int) {
	if len(p) == 0 {
		return
	}
	n.unshareLocked(min(off, len(n.data)))
	if end := off + len(p); end > len(n.data) {
		n.resizeLocked(end)
	}
	copy(n.data[off:], p)
}

// syncLocked makes the current state durable: contents for a file, entries
// for a directory.
func (n *inode) syncLocked() {
	if n.dir {
		n.durableEntries = maps.Clone(n.entries)
		return
	}
	n.durable = n.data[:len(n.data):len(n.data)]
	n.shared = true
}

// infoLocked returns a snapshot of the inode's metadata under the given
// base name.
func (n *inode) infoLocked(name string) fileInfo {
	fi := fileInfo{name: name, size: int64(len(n.data)), mode: n.perm, modTime: n.modTime}
	if n.dir {
		fi.mode |= fs.ModeDir
		fi.size = 0
	}
	return fi
}

// fileInfo is the fs.FileInfo of a MemFS file: a copy taken at Stat time.
type fileInfo struct {
	name    string
	size    int64
	mode    fs.FileMode
	modTime time.Time
}

// Name implements fs.FileInfo.
func (fi fileInfo) Name() string { return fi.name }

// Size implements fs.FileInfo.
func (fi fileInfo) Size() int64 { return fi.size }

// Mode implements fs.FileInfo.
func (fi fileInfo) Mode() fs.FileMode { return fi.mode }

// ModTime implements fs.FileInfo.
func (fi fileInfo) ModTime() time.Time { return fi.modTime }

// IsDir implements fs.FileInfo.
func (fi fileInfo) IsDir() bool { return fi.mode.IsDir() }

// Sys implements fs.FileInfo; MemFS has no underlying data source.
func (fi fileInfo) Sys() any { return nil }
