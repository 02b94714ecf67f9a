package chunkseg

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/isotsdb/tsdb/chunks"
)

// Segment file layout (Prometheus's block chunk format, see the package
// documentation):
//
//	header:  magic uint32 BE | version byte | 3 zero bytes
//	records: len uvarint | encoding byte | data [len]byte | crc uint32 BE
//
// where crc is the CRC-32C (Castagnoli) of the encoding byte followed by data.
const (
	// SegmentMagic is the big-endian uint32 that starts every segment file.
	SegmentMagic = 0x85BD40DD

	// SegmentVersion is the only segment format version this package reads
	// and writes.
	SegmentVersion = 1

	// SegmentHeaderSize is the size of a segment file's header: magic,
	// version and three bytes of zero padding. The first chunk starts here.
	SegmentHeaderSize = 8

	// DefaultMaxSegmentSize is the size a segment file is allowed to reach
	// before the writer starts the next one: 512 MiB, as in Prometheus.
	// Large enough that a typical block has a handful of files, small enough
	// that mapping one never needs a huge contiguous address range.
	DefaultMaxSegmentSize = 512 << 20

	// MaxSegmentSize is the largest accepted segment size limit: a chunk's
	// offset in its file must fit in the 32 low bits of its reference.
	MaxSegmentSize = 1 << 32

	// recordOverhead is the size of a record's fixed fields: encoding byte
	// and CRC. The length uvarint comes on top.
	recordOverhead = 1 + crc32.Size
)

// castagnoli is the CRC-32C table. It is computed once and never written
// after package initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// chunkCRC returns the checksum a record stores for a chunk: CRC-32C over
// the encoding byte followed by the chunk's bytes.
func chunkCRC(enc chunks.Encoding, data []byte) uint32 {
	// Fold in the encoding byte by hand (one table step on the inverted
	// register, as crc32 does internally): passing a one-byte slice to
	// crc32.Update would allocate it on every call.
	const initial = ^uint32(0)
	reg := castagnoli[0xFF^byte(enc)] ^ initial>>8
	return crc32.Update(^reg, castagnoli, data)
}

// recordSize returns the encoded size of the record holding a chunk of
// dataLen bytes.
func recordSize(dataLen int) int64 {
	return int64(uvarintLen(uint64(dataLen))) + recordOverhead + int64(dataLen)
}

// uvarintLen returns how many bytes binary.PutUvarint writes for x.
func uvarintLen(x uint64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutUvarint(buf[:], x)
}

// BlockRef packs a chunk's segment index and byte offset into the reference
// the index stores: segment in the upper 32 bits, offset in the lower 32.
// segment is the 0-based position of the file among the block's segment
// files in name order, so file 000001 is segment 0; offset is where the
// chunk's length field starts in that file.
func BlockRef(segment, offset uint32) uint64 {
	return uint64(segment)<<32 | uint64(offset)
}

// SplitBlockRef is the inverse of BlockRef.
func SplitBlockRef(ref uint64) (segment, offset uint32) {
	return uint32(ref >> 32), uint32(ref)
}

// SegmentFileName returns the name, relative to the chunks directory, of
// the file with 1-based sequence number seq: six digits, zero-padded, wider
// only if seq needs it ("000001", "1234567").
func SegmentFileName(seq int) string {
	return fmt.Sprintf("%06d", seq)
}

// isSegmentFileName reports whether name is a segment file's name: decimal
// digits only, of a value that fits in a uint64. This is the set of names a
// reader loads, so the writer refuses directories already holding one.
func isSegmentFileName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseUint(name, 10, 64)
	return err == nil
}
