package wlog

import (
	"fmt"
	"hash/crc32"
	"path/filepath"
)

const (
	// PageSize is the size of a segment page. Fragments never cross a page
	// boundary.
	PageSize = 32 << 10
	// DefaultSegmentSize is the segment size used when Options.SegmentSize
	// is 0: 128 MiB, as in Prometheus.
	DefaultSegmentSize = 128 << 20

	// headerSize is the size of a fragment header: type, length, CRC.
	headerSize = 7
)

// Fragment kinds: the low 3 bits of a fragment's type byte.
const (
	fragPadding = 0 // the rest of the page is zeros
	fragFull    = 1 // a whole record
	fragFirst   = 2 // the first fragment of a record
	fragMiddle  = 3 // a middle fragment of a record
	fragLast    = 4 // the last fragment of a record

	fragKindMask = 0x07
)

// Flag bits of a fragment's type byte. Every fragment of a record carries
// the same flags.
const (
	flagSnappy = 1 << 3 // the record is snappy-compressed
	flagZstd   = 1 << 4 // the record is zstd-compressed (Prometheus only)

	// flagUnknown are the bits no writer of the format sets.
	flagUnknown = 0xff &^ (fragKindMask | flagSnappy | flagZstd)
)

// castagnoli is the CRC-32C table used for fragment checksums. It is built
// once at package initialisation and only read afterwards.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SegmentName returns the path of segment i in dir: dir/%08d.
func SegmentName(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("%08d", i))
}
