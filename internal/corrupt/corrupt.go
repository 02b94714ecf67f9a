// Package corrupt defines the one error type of every kind of on-disk
// damage the database finds: in the block index, chunk segment files,
// tombstones, meta.json, WAL segments and records, and chunk bytes.
//
// Every such error is, or wraps, an *Error, and errors.Is(err, ErrCorrupt)
// holds for it. The root package re-exports both (tsdb.ErrCorrupt,
// tsdb.CorruptionError), so callers outside the module can test for damage
// and learn where it is.
package corrupt

import (
	"errors"
	"fmt"
)

// ErrCorrupt is matched, through errors.Is, by every *Error and by the
// errors of decoders that do not know which file their bytes came from.
var ErrCorrupt = errors.New("tsdb: corrupt data")

// Error reports damaged data: the file it is in, where in the file, and
// what is wrong. errors.Is(e, ErrCorrupt) holds for every *Error, and
// errors.Is and errors.As also see through Err.
type Error struct {
	// File is the path of the damaged file, or "" when the bytes came from
	// memory (a decoder given a byte slice).
	File string
	// Offset is the byte offset in File (or in the bytes decoded) where the
	// damaged structure starts, or -1 when it is not known.
	Offset int64
	// Err says what is wrong. It need not wrap ErrCorrupt.
	Err error
}

// At returns an *Error for file at off caused by err.
func At(file string, off int64, err error) *Error {
	return &Error{File: file, Offset: off, Err: err}
}

// Errorf returns an *Error for file at off whose Err is formatted as by
// fmt.Errorf (so %w wraps).
func Errorf(file string, off int64, format string, args ...any) *Error {
	return &Error{File: file, Offset: off, Err: fmt.Errorf(format, args...)}
}

// Error names the file and offset (those that are known) and the cause:
//
//	corrupt data in dir/index at offset 5: symbol table: checksum mismatch
func (e *Error) Error() string {
	switch {
	case e.File == "" && e.Offset < 0:
		return fmt.Sprintf("corrupt data: %v", e.Err)
	case e.File == "":
		return fmt.Sprintf("corrupt data at offset %d: %v", e.Offset, e.Err)
	case e.Offset < 0:
		return fmt.Sprintf("corrupt data in %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("corrupt data in %s at offset %d: %v", e.File, e.Offset, e.Err)
}

// Is reports whether target is ErrCorrupt.
func (e *Error) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Locate returns the file and offset of the outermost *Error in err's
// tree, and whether there is one.
func Locate(err error) (file string, off int64, ok bool) {
	var e *Error
	if !errors.As(err, &e) {
		return "", -1, false
	}
	return e.File, e.Offset, true
}
