package vfs

import (
	"fmt"
	"io/fs"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mmapping is the Mapped that OS().Map returns.
//
// Bytes may be called concurrently; Close must not race with Bytes or with
// any use of the slice Bytes returned (after Close the memory is unmapped and
// touching it faults).
type mmapping struct {
	name string
	data []byte // nil after Close; non-nil but empty for an empty file
	// mapped is true when data came from mmap and must be unmapped.
	mapped bool
}

// mapFile maps the whole of the named file read-only. An empty file gets an
// empty, non-nil view without a mapping (mmap rejects length 0).
func mapFile(name string) (*mmapping, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	// The mapping stays valid after the descriptor is closed.
	defer f.Close()

	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &fs.PathError{Op: "mmap", Path: name, Err: unix.EISDIR}
	}
	size := fi.Size()
	if size == 0 {
		return &mmapping{name: name, data: []byte{}}, nil
	}
	if size < 0 || uint64(size) > math.MaxInt {
		return nil, &fs.PathError{Op: "mmap", Path: name,
			Err: fmt.Errorf("size %d does not fit in memory: %w", size, unix.EFBIG)}
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, &fs.PathError{Op: "mmap", Path: name, Err: err}
	}
	return &mmapping{name: name, data: data, mapped: true}, nil
}

// Bytes returns the mapped contents. The slice is read-only: writing to it
// faults.
func (m *mmapping) Bytes() []byte { return m.data }

// Evict implements Mapped with madvise(MADV_DONTNEED): for a shared file
// mapping that only unmaps the pages from this process; their contents stay
// in the page cache and the file.
func (m *mmapping) Evict() error {
	if !m.mapped || len(m.data) == 0 {
		return nil
	}
	if err := unix.Madvise(m.data, unix.MADV_DONTNEED); err != nil {
		return &fs.PathError{Op: "madvise", Path: m.name, Err: err}
	}
	return nil
}

// Close unmaps the file. Closing twice is a no-op.
func (m *mmapping) Close() error {
	if m.data == nil {
		return nil
	}
	data, mapped := m.data, m.mapped
	m.data, m.mapped = nil, false
	if !mapped {
		return nil
	}
	if err := unix.Munmap(data); err != nil {
		return &fs.PathError{Op: "munmap", Path: m.name, Err: err}
	}
	return nil
}
