package chunks

import (
	"errors"
	"fmt"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

var (
	// ErrCorrupt is matched (errors.Is) by every error reporting chunk
	// bytes that cannot be decoded: truncated data, malformed varints,
	// impossible bit widths, stray trailing bytes. It is the database's
	// one corruption sentinel, tsdb.ErrCorrupt; errors.As with a
	// *tsdb.CorruptionError gives the byte offset within the chunk's bytes
	// (counting the 2-byte header) at which the failing field starts. The
	// chunk does not know which file it came from; readers of chunk files
	// wrap the error with the file and the chunk's position in it.
	ErrCorrupt = corrupt.ErrCorrupt

	// ErrUnknownEncoding is wrapped by the error FromData returns for an
	// encoding this package cannot decode.
	ErrUnknownEncoding = errors.New("chunks: unknown chunk encoding")
)

// corruptAt returns the error of chunk bytes that fail to decode at byte
// off, while decoding sample (or -1 if the error is not about one sample).
func corruptAt(off, sample int, reason string) error {
	if sample < 0 {
		return corrupt.At("", int64(off), fmt.Errorf("chunks: %s", reason))
	}
	return corrupt.At("", int64(off), fmt.Errorf("chunks: sample %d: %s", sample, reason))
}
