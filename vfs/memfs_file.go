package vfs

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
	"time"
)

// memFile is an open MemFS file or directory. Its methods are safe for
// concurrent use (more than File requires): all of them take the MemFS's
// lock, which guards offset, closed and the inode.
type memFile struct {
	m    *MemFS
	ino  *inode
	name string // as passed to OpenFile

	readable bool
	writable bool
	append   bool // every write goes to the end of the file
	sync     bool // every write is made durable (os.O_SYNC)

	offset int64 // guarded by m.mu
	closed bool  // guarded by m.mu
}

var _ File = (*memFile)(nil)

// Name implements File.
func (f *memFile) Name() string { return f.name }

// checkLocked returns the error for using a closed handle or for reading
// (write == false) or writing through a handle that does not allow it.
func (f *memFile) checkLocked(write bool) error {
	switch {
	case f.closed:
		return fs.ErrClosed
	case write && !f.writable, !write && !f.readable:
		return syscall.EBADF
	case !write && f.ino.dir:
		return syscall.EISDIR
	}
	return nil
}

// Read implements File.
func (f *memFile) Read(p []byte) (int, error) {
	if err := f.m.before(OpRead, f.name); err != nil {
		return 0, pathError(OpRead, f.name, err)
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.checkLocked(false); err != nil {
		return 0, pathError(OpRead, f.name, err)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if f.offset >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[f.offset:])
	f.offset += int64(n)
	return n, nil
}

// ReadAt implements File. It returns io.EOF when it reads fewer than len(p)
// bytes.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.m.before(OpRead, f.name); err != nil {
		return 0, pathError(OpRead, f.name, err)
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.checkLocked(false); err != nil {
		return 0, pathError(OpRead, f.name, err)
	}
	if off < 0 {
		return 0, pathError(OpRead, f.name, syscall.EINVAL)
	}
	if off >= int64(len(f.ino.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Write implements File. A hook returning ShortWrite{N, Err} makes it write
// the first N bytes of p and then fail.
func (f *memFile) Write(p []byte) (int, error) {
	limit := len(p)
	hookErr := f.m.before(OpWrite, f.name)
	if hookErr != nil {
		var sw ShortWrite
		if !errors.As(hookErr, &sw) {
			return 0, pathError(OpWrite, f.name, hookErr)
		}
		limit = max(0, min(sw.N, len(p)))
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.checkLocked(true); err != nil {
		return 0, pathError(OpWrite, f.name, err)
	}
	off := f.offset
	if f.append {
		off = int64(len(f.ino.data))
	}
	if off+int64(limit) > maxMemFileSize {
		return 0, pathError(OpWrite, f.name, syscall.EFBIG)
	}
	if limit > 0 {
		f.ino.writeAtLocked(p[:limit], int(off))
		f.ino.modTime = time.Now()
		if f.sync {
			f.ino.syncLocked()
		}
	}
	f.offset = off + int64(limit)
	if hookErr != nil {
		return limit, pathError(OpWrite, f.name, hookErr)
	}
	return limit, nil
}

// Seek implements File. Seeking past the end is allowed; a later Write
// zero-fills the gap.
func (f *memFile) Seek(offset int64, whence int) (int64, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.closed {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrClosed}
	}
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.offset
	case io.SeekEnd:
		base = int64(len(f.ino.data))
	default:
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	pos := base + offset
	if pos < 0 || (offset > 0 && pos < base) {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	f.offset = pos
	return pos, nil
}

// Close implements File. Closing twice fails with fs.ErrClosed, as with
// *os.File.
func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	f.closed = true
	return nil
}

// Sync implements File: the file's current contents (or, for a directory
// handle, its current entries) become durable. As with fsync(2), a
// read-only handle may sync.
func (f *memFile) Sync() error {
	if err := f.m.before(OpSync, f.name); err != nil {
		return pathError(OpSync, f.name, err)
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.closed {
		return pathError(OpSync, f.name, fs.ErrClosed)
	}
	f.ino.syncLocked()
	return nil
}

// Stat implements File.
func (f *memFile) Stat() (fs.FileInfo, error) {
	if err := f.m.before(OpStat, f.name); err != nil {
		return nil, pathError(OpStat, f.name, err)
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.closed {
		return nil, pathError(OpStat, f.name, fs.ErrClosed)
	}
	return f.ino.infoLocked(baseName(f.name)), nil
}

// Truncate implements File. It needs a writable handle (EINVAL otherwise,
// as ftruncate(2) reports) and does not move the offset.
func (f *memFile) Truncate(size int64) error {
	if err := f.m.before(OpTruncate, f.name); err != nil {
		return pathError(OpTruncate, f.name, err)
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	switch {
	case f.closed:
		return pathError(OpTruncate, f.name, fs.ErrClosed)
	case !f.writable || size < 0:
		return pathError(OpTruncate, f.name, syscall.EINVAL)
	case size > maxMemFileSize:
		return pathError(OpTruncate, f.name, syscall.EFBIG)
	}
	f.ino.resizeLocked(int(size))
	f.ino.modTime = time.Now()
	if f.sync {
		f.ino.syncLocked()
	}
	return nil
}
