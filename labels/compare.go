package labels

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"
)

// Compare orders label sets: it compares them label by label, first by name
// and then by value, and the first difference decides; if one set is a
// prefix of the other, the shorter one sorts first. It returns -1, 0 or +1.
func Compare(a, b Labels) int {
	x, y := a.data, b.data
	if x == y {
		return 0
	}
	// Comparing the encodings byte by byte is not the same order (a length
	// prefix precedes each string), but it finds where the sets first
	// differ. Every byte before i is shared, so both sets hold the same
	// fields up to the field that contains byte i.
	n := min(len(x), len(y))
	i := commonPrefixLen(x, y)
	if i == n {
		// One encoding is a prefix of the other. Encodings end on label
		// boundaries, so the shorter one has fewer labels.
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	// Find the field (a name or a value; the same kind in both sets, at the
	// same offset) that contains byte i, and compare the two versions of it.
	start := 0
	for {
		size, next := decodeSize(x, start)
		if next+size > i {
			break
		}
		start = next + size
	}
	fx, _ := decodeString(x, start)
	fy, _ := decodeString(y, start)
	return strings.Compare(fx, fy)
}

// Equal reports whether a and b hold the same labels.
func Equal(a, b Labels) bool { return a.data == b.data }

// commonPrefixLen returns the length of the longest common prefix of x and
// y, comparing eight bytes at a time.
func commonPrefixLen(x, y string) int {
	n := min(len(x), len(y))
	// Read-only byte views of the strings: nothing writes through them.
	bx := unsafe.Slice(unsafe.StringData(x), n)
	by := unsafe.Slice(unsafe.StringData(y), n)
	i := 0
	for ; i+8 <= n; i += 8 {
		if d := binary.LittleEndian.Uint64(bx[i:]) ^ binary.LittleEndian.Uint64(by[i:]); d != 0 {
			return i + bits.TrailingZeros64(d)/8
		}
	}
	for i < n && bx[i] == by[i] {
		i++
	}
	return i
}
