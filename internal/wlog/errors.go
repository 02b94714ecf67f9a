package wlog

import (
	"errors"
	"path/filepath"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// Sentinel errors. Errors returned by this package wrap them with context;
// test with errors.Is.
var (
	// ErrUnsupportedCompression means a record uses a compression this
	// package cannot decode (zstd, written by Prometheus), or Options asked
	// for one it cannot write. Such records are valid: the error is not a
	// *corrupt.Error, so Repair refuses it instead of deleting data.
	ErrUnsupportedCompression = errors.New("wlog: unsupported compression")
	// ErrClosed is returned by operations on a closed WL.
	ErrClosed = errors.New("wlog: log closed")
	// ErrWriteFailed is wrapped, together with the cause, by the error a
	// WL returns once a write, sync or segment creation has failed. From
	// then on every write operation returns that same error: the owner
	// must Close the WL and open it again (replaying and, if needed,
	// repairing the log).
	ErrWriteFailed = errors.New("wlog: write failed, log must be reopened")
	// ErrInvalidOptions means Options hold an impossible value.
	ErrInvalidOptions = errors.New("wlog: invalid options")
	// ErrNotSequential means the segment numbers in a directory have a gap.
	ErrNotSequential = errors.New("wlog: segments are not sequential")
	// ErrNotFound is returned by LastCheckpoint when there is no checkpoint.
	ErrNotFound = errors.New("wlog: not found")
	// ErrCannotRepair is returned by Repair for an error it cannot act on.
	ErrCannotRepair = errors.New("wlog: cannot repair")
	// ErrInvalidRange means segment indexes passed in are out of order or
	// out of the log's range.
	ErrInvalidRange = errors.New("wlog: invalid segment range")
)

// A Reader reports damaged or torn log data as a *corrupt.Error (for which
// errors.Is(err, corrupt.ErrCorrupt) holds). Its File is the segment file
// (SegmentName of the directory and index), or "" when the Reader was not
// reading segments through NewSegmentsReader or NewSegmentsRangeReader;
// then Offset counts from the start of the stream. Offset is where the bad
// data starts in that segment: the first fragment of a record that is torn
// or cut off at the end of the segment, or the bad fragment or padding.
// Every whole record that ends at or before Offset is intact.

// corruptSegment returns the *corrupt.Error of damage at off in segment seg
// of dir, or at off in a plain stream if seg < 0.
func corruptSegment(dir string, seg int, off int64, err error) *corrupt.Error {
	if seg < 0 {
		return corrupt.At("", off, err)
	}
	return corrupt.At(SegmentName(dir, seg), off, err)
}

// CorruptSegment returns the segment that err, a corruption reported by a
// Reader (or wrapping one), names: its directory, index and the offset of
// the damage. ok is false if err holds no *corrupt.Error or its File is not
// a segment file (a plain stream's corruption names none).
func CorruptSegment(err error) (dir string, seg int, off int64, ok bool) {
	var ce *corrupt.Error
	if !errors.As(err, &ce) || ce.File == "" {
		return "", -1, 0, false
	}
	seg, ok = parseSegmentName(filepath.Base(ce.File))
	if !ok {
		return "", -1, 0, false
	}
	return filepath.Dir(ce.File), seg, ce.Offset, true
}
