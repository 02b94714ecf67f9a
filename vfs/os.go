package vfs

import (
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// OS returns the real filesystem: every call goes to package os, and errors
// are the ones package os returns (*fs.PathError or *os.LinkError wrapping
// the syscall errno), so errors.Is(err, fs.ErrNotExist) and
// errors.Is(err, syscall.ENOSPC) work. Files are *os.File. The returned FS
// holds no state and is safe for concurrent use.
//
// Map uses mmap(2) and Lock uses flock(2), so OS is for Unix-like systems.
func OS() FS { return osFS{} }

// osFS is the stateless FS returned by OS.
type osFS struct{}

var (
	_ FS   = osFS{}
	_ File = (*os.File)(nil)
)

// Create implements FS.
func (osFS) Create(name string) (File, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err // Not f: a nil *os.File in a File is not a nil File.
	}
	return f, nil
}

// Open implements FS.
func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// OpenFile implements FS.
func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Remove implements FS.
func (osFS) Remove(name string) error { return os.Remove(name) }

// RemoveAll implements FS.
func (osFS) RemoveAll(name string) error { return os.RemoveAll(name) }

// Rename implements FS.
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// Link implements FS.
func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

// MkdirAll implements FS.
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }

// ReadDir implements FS.
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// Stat implements FS.
func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// SyncDir implements FS by opening the directory and fsyncing it. It opens
// with O_DIRECTORY so that naming a file fails with ENOTDIR, as on MemFS,
// instead of quietly syncing the file.
func (osFS) SyncDir(name string) error {
	d, err := os.OpenFile(name, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close() // The sync error is the one that matters.
		return err
	}
	return d.Close()
}

// Map implements FS with a read-only shared memory mapping.
func (osFS) Map(name string) (Mapped, error) {
	m, err := mapFile(name)
	if err != nil {
		return nil, err // not m: a nil *mmapping in a Mapped is not nil
	}
	return m, nil
}

// Lock implements FS with flock(2).
func (osFS) Lock(name string) (io.Closer, error) {
	l, err := lockFile(name)
	if err != nil {
		return nil, err
	}
	return l, nil
}
