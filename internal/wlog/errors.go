package wlog

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap them with context;
// test with errors.Is.
var (
	// ErrCorrupt is wrapped by the Err of every *CorruptionErr.
	ErrCorrupt = errors.New("wlog: corrupt log")
	// ErrUnsupportedCompression means a record uses a compression this
	// package cannot decode (zstd, written by Prometheus), or Options asked
	// for one it cannot write. Such records are valid: the error is not a
	// *CorruptionErr, so Repair refuses it instead of deleting data.
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

// CorruptionErr reports damaged or torn log data found by a Reader. Dir and
// Segment name the segment file (Segment is -1, Dir empty, and Offset
// counts from the start of the stream when the Reader was not reading
// segments through NewSegmentsReader or NewSegmentsRangeReader). Offset is
// where the bad data starts in that segment: the first fragment of a record
// that is torn or cut off at the end of the segment, or the bad fragment or
// padding. Every whole record that ends at or before Offset is intact.
type CorruptionErr struct {
	Dir     string
	Segment int
	Offset  int64
	Err     error // wraps ErrCorrupt
}

// Error names the segment file and offset and says what is wrong.
func (e *CorruptionErr) Error() string {
	if e.Segment < 0 {
		return fmt.Sprintf("wlog: corruption at offset %d of the stream: %v", e.Offset, e.Err)
	}
	return fmt.Sprintf("wlog: corruption in segment %s at offset %d: %v", SegmentName(e.Dir, e.Segment), e.Offset, e.Err)
}

// Unwrap returns Err, so errors.Is(err, ErrCorrupt) holds.
func (e *CorruptionErr) Unwrap() error { return e.Err }
