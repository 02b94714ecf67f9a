package index

import "errors"

// Errors of the index package. Errors returned wrap one of these, an I/O
// error of the filesystem, or are a *corrupt.Error (damaged index data:
// errors.Is(err, corrupt.ErrCorrupt) holds) so errors.Is can classify them.
var (
	// ErrChecksum is wrapped by the *corrupt.Error of a CRC32C that does
	// not match.
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
