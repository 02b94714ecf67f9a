package labels

import (
	"encoding/binary"
	"unsafe"
)

// The encoding of a label set (see the package comment): for each label in
// name order, size(name) name size(value) value, where size(n) is
//
//   - one byte n, if n < 255;
//   - 0xFF and n in three bytes, little-endian, if n < 0xFFFFFF;
//   - 0xFF 0xFF 0xFF 0xFF and n in eight bytes, little-endian, otherwise.
//
// The first two forms are exactly the sizes of Prometheus's stringlabels
// encoding, so a set shorter than MaxPromCompatible bytes (and so every
// field in it) is byte for byte the string a Prometheus label set of the
// same labels holds. The third form exists only so that no string is
// unrepresentable. Each size has exactly one form, so every set has exactly
// one encoding.
//
// The decoding helpers below trust their input: it can only have been made by
// encode, so they do no bounds checks beyond Go's own.

// Size thresholds of the encoding.
const (
	shortSizeEnd = 0xFF     // sizes below this take one byte
	midSizeEnd   = 0xFFFFFF // sizes below this (and not short) take four
)

// MaxPromCompatible bounds the encodings that are Prometheus's: a set
// whose Encoding is shorter than this has every field below 0xFFFFFF
// bytes, so its encoding is Prometheus stringlabels' for the same labels.
const MaxPromCompatible = midSizeEnd

// encodedLen returns how many bytes s occupies in the encoding.
func encodedLen(s string) int {
	switch n := len(s); {
	case n < shortSizeEnd:
		return 1 + n
	case n < midSizeEnd:
		return 4 + n
	default:
		return 12 + n
	}
}

// encode returns the label set holding ls, which must already be sorted by
// name. It makes exactly one allocation (none for an empty set) and the
// result shares no memory with ls.
func encode(ls []Label) Labels {
	size := 0
	for _, l := range ls {
		size += encodedLen(l.Name) + encodedLen(l.Value)
	}
	if size == 0 {
		return Labels{}
	}
	b := make([]byte, size)
	i := 0
	for _, l := range ls {
		i = putString(b, i, l.Name)
		i = putString(b, i, l.Value)
	}
	// b is not used after this, so the string is immutable, as Go requires.
	return Labels{data: unsafe.String(&b[0], len(b))}
}

// putString writes s with its size at b[i:], which has room for it, and
// returns the offset just past it.
func putString(b []byte, i int, s string) int {
	switch n := len(s); {
	case n < shortSizeEnd:
		b[i] = byte(n)
		i++
	case n < midSizeEnd:
		b[i], b[i+1], b[i+2], b[i+3] = 0xFF, byte(n), byte(n>>8), byte(n>>16)
		i += 4
	default:
		b[i], b[i+1], b[i+2], b[i+3] = 0xFF, 0xFF, 0xFF, 0xFF
		binary.LittleEndian.PutUint64(b[i+4:], uint64(n))
		i += 12
	}
	return i + copy(b[i:], s)
}

// decodeSize reads the size at data[i] and returns it and the offset just
// past it.
func decodeSize(data string, i int) (int, int) {
	if b := data[i]; b != 0xFF {
		return int(b), i + 1
	}
	n := int(data[i+1]) | int(data[i+2])<<8 | int(data[i+3])<<16
	if n != midSizeEnd {
		return n, i + 4
	}
	var x uint64
	for k := 7; k >= 0; k-- {
		x = x<<8 | uint64(data[i+4+k])
	}
	return int(x), i + 12
}

// decodeString returns the length-prefixed string at data[i] and the offset
// just past it. The result is a substring of data: no allocation.
func decodeString(data string, i int) (string, int) {
	size, i := decodeSize(data, i)
	return data[i : i+size], i + size
}

// decodeLabel returns the label at data[i] and the offset of the next one.
func decodeLabel(data string, i int) (Label, int) {
	var l Label
	l.Name, i = decodeString(data, i)
	l.Value, i = decodeString(data, i)
	return l, i
}

// FromEncoding returns the label set whose Encoding is data. The set
// shares data's memory: nothing is copied, so the caller must keep that
// memory unchanged while the set is in use (a string's memory is immutable
// unless made with package unsafe, as a caller aliasing another library's
// label string does). FromEncoding reports false, with an empty set, if
// data is not an encoding encode could have written: a size in a longer
// form than its value needs, a field running past the end, or names out of
// order.
//
// It exists for adapters whose own label sets hold this encoding
// (MaxPromCompatible), so that a lookup costs no copy. Whoever keeps a set
// beyond a call keeps a Clone: the DB's Appender clones the labels of each
// series it creates and retains no other.
func FromEncoding(data string) (Labels, bool) {
	var prev string
	for i, n := 0, 0; i < len(data); n++ {
		name, next, ok := checkedString(data, i)
		if !ok || (n > 0 && name < prev) {
			return Labels{}, false
		}
		if _, next, ok = checkedString(data, next); !ok {
			return Labels{}, false
		}
		prev, i = name, next
	}
	return Labels{data: data}, true
}

// checkedString is decodeString for untrusted data: it reports false if
// the size at data[i] is not in its one canonical form or the string runs
// past the end of data.
func checkedString(data string, i int) (string, int, bool) {
	if i >= len(data) {
		return "", 0, false
	}
	var size int
	switch {
	case data[i] != 0xFF:
		size, i = int(data[i]), i+1
	case len(data)-i < 4:
		return "", 0, false
	default:
		size = int(data[i+1]) | int(data[i+2])<<8 | int(data[i+3])<<16
		switch {
		case size < shortSizeEnd:
			return "", 0, false
		case size != midSizeEnd:
			i += 4
		case len(data)-i < 12:
			return "", 0, false
		default:
			var x uint64
			for k := 7; k >= 0; k-- {
				x = x<<8 | uint64(data[i+4+k])
			}
			if x < midSizeEnd || x > uint64(len(data)) {
				return "", 0, false
			}
			size, i = int(x), i+12
		}
	}
	if size > len(data)-i {
		return "", 0, false
	}
	return data[i : i+size], i + size, true
}
