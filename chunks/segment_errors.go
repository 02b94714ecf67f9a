package chunks

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidRef is wrapped by the error SegmentReader.Chunk returns for
	// a reference that cannot name a chunk of this block: its segment index
	// is past the last file, or its offset lies inside the file header.
	ErrInvalidRef = errors.New("chunks: invalid chunk reference")

	// ErrClosed is wrapped by the errors a SegmentWriter or SegmentReader
	// returns once it has been closed.
	ErrClosed = errors.New("chunks: segment writer or reader is closed")

	// ErrInvalidOption is wrapped by the error NewSegmentWriter returns for
	// an option value out of range.
	ErrInvalidOption = errors.New("chunks: invalid option")

	// ErrNoChunk is wrapped by the error SegmentWriter.WriteChunks returns
	// for a Meta whose Chunk is nil.
	ErrNoChunk = errors.New("chunks: meta has no chunk")
)

// CorruptionError reports a segment file whose bytes are not a valid
// segment: bad header, a record running past the end of the file, a
// checksum mismatch, chunk data too short to decode. Callers can test for
// it with errors.As (to learn the file and offset) or errors.Is(err,
// ErrCorrupt).
//
// CorruptError is the error of a chunk's own bytes and knows no file;
// CorruptionError is about a file and may wrap a CorruptError.
type CorruptionError struct {
	// File is the path of the segment file.
	File string
	// Offset is where the bad part starts in File: 0 for a bad magic or a
	// file too short for its header, 4 for the version, 5 for the padding,
	// and the chunk's offset (the offset in its reference) for a bad record.
	Offset int64
	// Err says what is wrong. It need not wrap ErrCorrupt.
	Err error
}

// Error implements error.
func (e *CorruptionError) Error() string {
	return fmt.Sprintf("chunks: corrupt segment file %s at offset %d: %v", e.File, e.Offset, e.Err)
}

// Unwrap returns ErrCorrupt and Err, so that errors.Is(err, ErrCorrupt)
// holds and errors.Is and errors.As also see what Err wraps (such as a
// *CorruptError from decoding the chunk header).
func (e *CorruptionError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// corruptf returns a *CorruptionError for file at off with a formatted
// reason.
func corruptf(file string, off int64, format string, args ...any) error {
	return &CorruptionError{File: file, Offset: off, Err: fmt.Errorf(format, args...)}
}
