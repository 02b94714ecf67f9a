package check

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/isotsdb/tsdb/internal/wlog"
)

// The WAL's page and fragment layout (see package wlog): 32 KiB pages;
// fragments never cross a page boundary, so every page starts with a
// fragment header or zero padding. A fragment header is type (low 3 bits:
// 1 full, 2 first, 3 middle, 4 last; bit 3 snappy, bit 4 zstd), length
// (uint16 BE) and the CRC-32C of the data (uint32 BE).
const (
	walPageSize   = wlog.PageSize
	walHeaderSize = 7
	walKindMask   = 0x07
	walFlagBits   = 0x08 | 0x10
	walKindFull   = 1
	walKindFirst  = 2
	walKindLast   = 4
)

var walCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// walRecordAfter reports whether b, the contents of a WAL segment, holds a
// valid fragment that starts a record (a full or first fragment with data
// and a matching checksum) at an offset greater than off. Pass off -1 to
// ask about the whole segment.
//
// It tells a torn tail from damage in the middle of the log: after a torn
// write nothing valid follows the damage, while a corrupted byte leaves
// the records after it intact. It walks the fragments from off; where the
// structure breaks (a malformed header, non-zero padding, a checksum
// mismatch) it searches the rest of that page byte by byte and then goes
// on with the next page, which starts at a fragment boundary.
func walRecordAfter(b []byte, off int64) bool {
	pos := max(off, 0)
	for pos < int64(len(b)) {
		pageEnd := min((pos/walPageSize+1)*walPageSize, int64(len(b)))
		if pageEnd-pos < walHeaderSize {
			pos = pageEnd
			continue
		}
		typ := b[pos]
		if typ == 0 {
			if !allZero(b[pos:pageEnd]) && walSearchPage(b, pos+1, pageEnd, off) {
				return true
			}
			pos = pageEnd
			continue
		}
		if n, ok := walFragment(b, pos, pageEnd); ok && walCRCOK(b, pos, n) {
			if pos > off && n > 0 && walStartsRecord(typ) {
				return true
			}
			pos += walHeaderSize + n
			continue
		}
		// Damage: nothing after it in this page can be found by walking.
		if walSearchPage(b, pos+1, pageEnd, off) {
			return true
		}
		pos = pageEnd
	}
	return false
}

// walSearchPage reports whether a valid record-starting fragment begins at
// any offset in [from, pageEnd) greater than off.
func walSearchPage(b []byte, from, pageEnd, off int64) bool {
	for p := max(from, off+1); p+walHeaderSize <= pageEnd; p++ {
		if !walStartsRecord(b[p]) {
			continue
		}
		if n, ok := walFragment(b, p, pageEnd); ok && n > 0 && walCRCOK(b, p, n) {
			return true
		}
	}
	return false
}

// walFragment returns the data length of the fragment whose header is at
// b[pos:], and whether the header is well formed and the fragment fits in
// its page.
func walFragment(b []byte, pos, pageEnd int64) (int64, bool) {
	typ := b[pos]
	kind := typ & walKindMask
	if kind < walKindFull || kind > walKindLast || typ&^(walKindMask|walFlagBits) != 0 {
		return 0, false
	}
	n := int64(binary.BigEndian.Uint16(b[pos+1:]))
	if pos+walHeaderSize+n > pageEnd {
		return 0, false
	}
	return n, true
}

func walStartsRecord(typ byte) bool {
	k := typ & walKindMask
	return (k == walKindFull || k == walKindFirst) && typ&^(walKindMask|walFlagBits) == 0
}

func walCRCOK(b []byte, pos, n int64) bool {
	data := b[pos+walHeaderSize : pos+walHeaderSize+n]
	return crc32.Checksum(data, walCastagnoli) == binary.BigEndian.Uint32(b[pos+3:])
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
