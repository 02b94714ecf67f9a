// Package vfs is the one small filesystem interface through which isotsdb
// does all of its file I/O.
//
// The real implementation (OS) forwards to package os. Tests use MemFS, an
// in-memory implementation that remembers which writes were made durable by
// Sync/SyncDir, can simulate a crash that drops everything else, and can
// inject errors (ENOSPC, EIO, ...) into any operation. Because every layer of
// the database (WAL, blocks, snapshots, lock file) goes through FS, a test can
// crash the database at every single write and check what survives.
package vfs

import (
	"io"
	"io/fs"
)

// File is an open file. Implementations need not be safe for concurrent use
// except that ReadAt may be called concurrently with itself.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Seeker
	io.Closer
	// Sync makes the file's contents durable. Until Sync returns nil, a crash
	// may lose any write made since the previous successful Sync.
	Sync() error
	// Stat returns the file's metadata.
	Stat() (fs.FileInfo, error)
	// Truncate changes the size of the file. It does not move the offset.
	Truncate(size int64) error
	// Name returns the path the file was opened with.
	Name() string
}

// Mapped is a read-only view of a whole file's contents. The OS
// implementation memory-maps the file; Bytes must not be used after Close.
type Mapped interface {
	Bytes() []byte
	// Evict drops the view's pages from the process's resident set
	// without changing what Bytes reads: a later read faults the page back
	// in from the file (which the mapping keeps, even once it is removed).
	// It may be called concurrently with reads of Bytes, but not with or
	// after Close. Views that are not mappings do nothing.
	Evict() error
	io.Closer
}

// FS is the filesystem. All paths are slash- or OS-separated paths as taken
// by package os. Implementations must be safe for concurrent use.
//
// Durability contract (which MemFS enforces in crash tests): file contents
// survive a crash only up to the last successful File.Sync; the creation,
// removal or renaming of a directory entry survives only once the parent
// directory has been synced with SyncDir.
type FS interface {
	// Create creates or truncates the named file, opened read-write.
	Create(name string) (File, error)
	// Open opens the named file read-only.
	Open(name string) (File, error)
	// OpenFile is the generalized open call (flags as in package os:
	// os.O_RDWR, os.O_CREATE, os.O_APPEND, os.O_TRUNC, os.O_EXCL, ...).
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Remove removes the named file or empty directory.
	Remove(name string) error
	// RemoveAll removes the path and any children it contains. It returns nil
	// if the path does not exist.
	RemoveAll(name string) error
	// Rename atomically replaces newname by oldname.
	Rename(oldname, newname string) error
	// Link creates newname as a hard link to oldname.
	Link(oldname, newname string) error
	// MkdirAll creates a directory and any missing parents.
	MkdirAll(name string, perm fs.FileMode) error
	// ReadDir returns the directory's entries sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// Stat returns the named file's metadata.
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the directory's entries (creations, removals, renames)
	// durable.
	SyncDir(name string) error
	// Map returns a read-only view of the named file's whole contents.
	Map(name string) (Mapped, error)
	// Lock takes an exclusive advisory lock on the named file, creating it if
	// needed. It fails at once, with an error wrapping ErrLocked, when another
	// holder (another process, or another Lock on the same FS) has it.
	// Closing the returned Closer releases the lock.
	Lock(name string) (io.Closer, error)
}
