package index

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/isotsdb/tsdb/internal/encoding"
)

// castagnoli is the CRC32C table all checksums of the format use. It is
// never modified after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errShort is the cause of a section or list that runs past the end of
// the file.
var errShort = encoding.ErrShort

// appendUvarintStr appends s prefixed by its uvarint length.
func appendUvarintStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// uvarintStrLen is the encoded size of appendUvarintStr(nil, s).
func uvarintStrLen(s string) int {
	return uvarintLen(uint64(len(s))) + len(s)
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
