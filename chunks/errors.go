package chunks

import (
	"errors"
	"fmt"
)

var (
	// ErrCorrupt is wrapped by every error reporting chunk bytes that cannot
	// be decoded: truncated data, malformed varints, impossible bit widths,
	// stray trailing bytes.
	ErrCorrupt = errors.New("chunks: corrupt chunk")

	// ErrUnknownEncoding is wrapped by the error FromData returns for an
	// encoding this package cannot decode.
	ErrUnknownEncoding = errors.New("chunks: unknown chunk encoding")
)

// CorruptError describes where decoding a chunk failed. It wraps ErrCorrupt,
// so errors.Is(err, ErrCorrupt) holds. The chunk does not know which file it
// came from; readers of chunk files wrap it with the file and the chunk's
// position in it.
type CorruptError struct {
	// Offset is the byte offset within the chunk's bytes (counting the
	// 2-byte header) at which the failing field starts.
	Offset int
	// Sample is the index of the sample being decoded, or -1 if the error
	// is not about one sample.
	Sample int
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *CorruptError) Error() string {
	if e.Sample < 0 {
		return fmt.Sprintf("%v: %s at byte %d", ErrCorrupt, e.Reason, e.Offset)
	}
	return fmt.Sprintf("%v: sample %d: %s at byte %d", ErrCorrupt, e.Sample, e.Reason, e.Offset)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }
