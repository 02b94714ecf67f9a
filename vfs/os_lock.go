package vfs

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// flockLock is the io.Closer that OS().Lock returns. Its Close releases the
// lock and is safe to call more than once and from several goroutines.
//
// flock(2) locks belong to the open file description, so a second Lock of
// the same path in the same process opens a new description and conflicts
// with the first one, exactly as a Lock from another process would. No
// in-process bookkeeping is needed for that.
type flockLock struct {
	once sync.Once
	f    *os.File
	err  error // result of the first Close; written once under once
}

// lockFile opens (creating if needed) the named file and takes an exclusive,
// non-blocking flock on it.
func lockFile(name string) (*flockLock, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close() // The flock error is the one to report.
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
		}
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	return &flockLock{f: f}, nil
}

// Close releases the lock by closing the descriptor (which drops the flock).
func (l *flockLock) Close() error {
	l.once.Do(func() { l.err = l.f.Close() })
	return l.err
}
