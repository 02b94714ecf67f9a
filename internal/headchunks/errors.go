package headchunks

import "errors"

var (
	// ErrClosed is wrapped by the errors of every Writer method called
	// after Close (except Close itself, which returns nil again).
	ErrClosed = errors.New("headchunks: writer is closed")

	// ErrInvalidRef is wrapped by the error Writer.Chunk returns for a
	// reference that names no record it can read: a file that is not (or no
	// longer) there, or an offset inside a file's header or past its end.
	ErrInvalidRef = errors.New("headchunks: invalid chunk reference")

	// ErrNotFlushed is wrapped by the error Writer.Chunk returns for a
	// reference returned by Add whose record has not been flushed yet.
	ErrNotFlushed = errors.New("headchunks: chunk not flushed yet")

	// ErrInvalidChunk is wrapped by the error Add returns for a record it
	// refuses to write because a reader would reject it or stop at it (see
	// Writer.Add).
	ErrInvalidChunk = errors.New("headchunks: invalid chunk")

	// ErrInvalidOption is wrapped by the error Open returns for an option
	// value out of range.
	ErrInvalidOption = errors.New("headchunks: invalid option")
)
