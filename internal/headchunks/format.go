package headchunks

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
)

// Head chunk file layout (see the package documentation):
//
//	header:  magic uint32 BE | version byte | 3 zero bytes
//	records: series ref uint64 BE | mint int64 BE | maxt int64 BE |
//	         encoding byte | len uvarint | data [len]byte | crc uint32 BE
//
// where crc is the CRC-32C (Castagnoli) of everything before it in the
// record.
const (
	// Magic is the big-endian uint32 that starts every head chunk file.
	Magic = 0x0130BC91

	// Version is the only format version this package reads and writes.
	Version = 1

	// HeaderSize is the size of a file's header: magic, version and three
	// bytes of zero padding. The first record starts here.
	HeaderSize = 8

	// DefaultMaxFileSize is the size a file may reach before the writer
	// starts the next one: 128 MiB, as Prometheus writes them. Truncation
	// drops whole files, so smaller files free disk sooner; larger ones mean
	// fewer mappings and directory entries.
	DefaultMaxFileSize = 128 << 20

	// MaxFileSizeLimit is the largest accepted Options.MaxFileSize: a
	// record's offset must fit in the 32 low bits of its reference.
	MaxFileSizeLimit = 1 << 32

	// OutOfOrderFlag is the bit Prometheus sets in a record's encoding byte
	// for an out-of-order chunk.
	OutOfOrderFlag = 0x80

	// metaSize is the size of the fixed fields before a record's length:
	// series ref, mint, maxt and the encoding byte.
	metaSize = 8 + 8 + 8 + 1

	// maxLenSize is the most bytes of the length field Prometheus reads
	// (a 32-bit uvarint).
	maxLenSize = binary.MaxVarintLen32

	// crcSize is the size of the checksum that ends a record.
	crcSize = crc32.Size

	// minTailSize is the fewest bytes Prometheus's reader accepts from a
	// record's start to the end of its file unless they are all zero: it
	// reads the fixed fields, a 5-byte length and the CRC before looking
	// at the length. A file ending in a shorter record is corrupt to it,
	// so the writer never writes one (see minDataSize) and Open treats one
	// as damage.
	minTailSize = metaSize + maxLenSize + crcSize

	// minDataSize is the smallest chunk the writer accepts, in bytes: with
	// a 1-byte length field it makes the record minTailSize long. Only an
	// empty chunk (its 2-byte header and no sample) is smaller.
	minDataSize = minTailSize - metaSize - 1 - crcSize

	// maxDataSize is the largest chunk the writer accepts, in bytes:
	// Prometheus reads the length as a 32-bit uvarint.
	maxDataSize = 1<<31 - 1
)

// castagnoli is the CRC-32C table, built once at package initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Ref returns the reference of the record at byte offset off of the file
// with sequence number seq: seq in the upper 32 bits, off in the lower 32,
// as Prometheus's ChunkDiskMapperRef.
func Ref(seq, off uint32) uint64 {
	return uint64(seq)<<32 | uint64(off)
}

// SplitRef is the inverse of Ref.
func SplitRef(ref uint64) (seq, off uint32) {
	return uint32(ref >> 32), uint32(ref)
}

// FileName returns the name, relative to the directory, of the file with
// sequence number seq: six digits, zero-padded, wider only if seq needs it
// ("000001", "1234567").
func FileName(seq int) string {
	return fmt.Sprintf("%06d", seq)
}

// parseFileName returns the sequence number a file name stands for and
// whether it is a head chunk file's name at all: decimal digits only, as
// Prometheus decides (so "7" and "000007" are both file 7). ok is true
// with inRange false for a number too large for a reference.
func parseFileName(name string) (seq uint32, ok, inRange bool) {
	if name == "" {
		return 0, false, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false, false
		}
	}
	n, err := strconv.ParseUint(name, 10, 32)
	if err != nil {
		return 0, true, false
	}
	return uint32(n), true, true
}

// recordSize returns the size of the record of a chunk of dataLen bytes.
func recordSize(dataLen int) int64 {
	return metaSize + int64(uvarintLen(uint64(dataLen))) + int64(dataLen) + crcSize
}

// uvarintLen returns how many bytes binary.PutUvarint writes for x.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// appendHeader appends a file header to b.
func appendHeader(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, Magic)
	return append(b, Version, 0, 0, 0)
}

// appendRecord appends the record of a chunk to b.
func appendRecord(b []byte, seriesRef uint64, mint, maxt int64, enc byte, data []byte) []byte {
	start := len(b)
	b = binary.BigEndian.AppendUint64(b, seriesRef)
	b = binary.BigEndian.AppendUint64(b, uint64(mint))
	b = binary.BigEndian.AppendUint64(b, uint64(maxt))
	b = append(b, enc)
	b = binary.AppendUvarint(b, uint64(len(data)))
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}
