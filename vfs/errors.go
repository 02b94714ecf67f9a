package vfs

import (
	"errors"
	"fmt"
	"io"
)

// ErrLocked is wrapped by the error that FS.Lock returns when the lock is
// already held by another holder (another process, or an earlier Lock on the
// same path that has not been released).
var ErrLocked = errors.New("vfs: file is locked by another holder")

// ShortWrite is an error a MemFS hook may return for an OpWrite to simulate a
// partial write: the first N bytes of the buffer (clamped to [0, len(p)]) are
// written, then Write returns that count together with Err wrapped in an
// *fs.PathError. A nil Err stands for io.ErrShortWrite.
//
// Returned for any other operation, a ShortWrite fails that operation like
// any other error; errors.Is sees through it to Err.
type ShortWrite struct {
	// N is how many bytes of the buffer are written before the failure.
	N int
	// Err is the error the write reports after the first N bytes.
	Err error
}

// Error implements error.
func (s ShortWrite) Error() string {
	return fmt.Sprintf("vfs: short write of %d bytes: %v", s.N, s.cause())
}

// Unwrap returns the error the write reports, so errors.Is(err, syscall.ENOSPC)
// holds for ShortWrite{N: n, Err: syscall.ENOSPC}.
func (s ShortWrite) Unwrap() error { return s.cause() }

// cause returns Err, or io.ErrShortWrite when Err is nil.
func (s ShortWrite) cause() error {
	if s.Err == nil {
		return io.ErrShortWrite
	}
	return s.Err
}
