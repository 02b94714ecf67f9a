package record

import "errors"

// Errors returned by Decoder. They are wrapped with context (record type,
// entry number, byte offset in the record); test with errors.Is. A record
// whose bytes do not follow the format of its type (truncated fields,
// overlong varints, counts larger than the remaining bytes, unsorted labels
// or trailing garbage) gives an error for which errors.Is(err,
// corrupt.ErrCorrupt) holds.
var (
	// ErrWrongType means the record's type byte is not one the called
	// Decoder method reads.
	ErrWrongType = errors.New("record: wrong record type")
)
