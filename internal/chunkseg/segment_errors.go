package chunkseg

import (
	"errors"

	"github.com/isotsdb/tsdb/internal/corrupt"
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
	// for a chunks.Meta whose Chunk is nil.
	ErrNoChunk = errors.New("chunks: meta has no chunk")
)

// corruptf returns the *corrupt.Error of a segment file that is not a
// valid segment (bad header, a record running past the end of the file, a
// checksum mismatch, chunk data too short to decode) at off: 0 for a bad
// magic or a file too short for its header, 4 for the version, 5 for the
// padding, and the chunk's offset (the offset in its reference) for a bad
// record.
func corruptf(file string, off int64, format string, args ...any) error {
	return corrupt.Errorf(file, off, format, args...)
}
