package index

import (
	"errors"
	"fmt"
)

// Errors of the index package. Errors returned wrap one of these (or an
// I/O error of the filesystem) so errors.Is can classify them.
var (
	// ErrCorrupt is wrapped by every *CorruptionError.
	ErrCorrupt = errors.New("index: corrupt index")
	// ErrChecksum is wrapped, with ErrCorrupt, when a CRC32C does not match.
	ErrChecksum = errors.New("index: checksum mismatch")
	// ErrUnsupportedVersion is returned for an index file whose magic is
	// right but whose format version this package does not read.
	ErrUnsupportedVersion = errors.New("index: unsupported format version")
	// ErrOutOfOrder is returned by the Writer for symbols, series or
	// series references that do not strictly increase, and for calls made
	// in the wrong stage (AddSymbol after AddSeries).
	ErrOutOfOrder = errors.New("index: out of order")
	// ErrInvalidLabels is returned by the Writer for a label set with an
	// empty or repeated label name.
	ErrInvalidLabels = errors.New("index: invalid label set")
	// ErrUnknownSymbol is returned by the Writer for a label name or value
	// that was not added with AddSymbol.
	ErrUnknownSymbol = errors.New("index: string not in symbol table")
	// ErrInvalidChunk is returned by the Writer for chunk metadata that is
	// unsorted, overlapping or has MaxTime < MinTime.
	ErrInvalidChunk = errors.New("index: invalid chunk metadata")
	// ErrTooLarge is returned when the index would exceed a limit of the
	// format (series beyond 64 GiB, sections over 4 GiB).
	ErrTooLarge = errors.New("index: exceeds format limits")
	// ErrClosed is returned by a Writer or Reader used after Close.
	ErrClosed = errors.New("index: closed")
	// ErrNotFound is returned for a symbol or series reference that does not
	// point into the index.
	ErrNotFound = errors.New("index: not found")
)

// CorruptionError reports damaged index data: where it was found and what
// was wrong. errors.Is(err, ErrCorrupt) holds for it, as does errors.Is(err,
// Err).
type CorruptionError struct {
	// File is the path of the index file, empty for an in-memory index.
	File string
	// Offset is the byte offset in the file of the damaged structure.
	Offset int64
	// Err describes the damage.
	Err error
}

// Error implements error.
func (e *CorruptionError) Error() string {
	file := e.File
	if file == "" {
		file = "<memory>"
	}
	return fmt.Sprintf("index: corrupt index %s at offset %d: %v", file, e.Offset, e.Err)
}

// Unwrap returns ErrCorrupt and the underlying error.
func (e *CorruptionError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }
