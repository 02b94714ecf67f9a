package labels

import (
	"encoding/binary"
	"unsafe"
)

// The encoding of a label set (see the package comment): for each label in
// name order, uvarint(len(name)) name uvarint(len(value)) value. Lengths use
// the minimal uvarint form, so every set has exactly one encoding.
//
// The decoding helpers below trust their input: it can only have been made by
// encode, so they do no bounds checks beyond Go's own.

// encodedLen returns how many bytes s occupies in the encoding.
func encodedLen(s string) int {
	n := len(s)
	size := 1
	for x := uint64(n); x >= 0x80; x >>= 7 {
		size++
	}
	return size + n
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

// putString writes s with its length prefix at b[i:], which has room for
// it, and returns the offset just past it.
func putString(b []byte, i int, s string) int {
	if len(s) < 0x80 {
		b[i] = byte(len(s))
		i++
	} else {
		i += binary.PutUvarint(b[i:], uint64(len(s)))
	}
	return i + copy(b[i:], s)
}

// decodeSize reads the uvarint at data[i] and returns it and the offset just
// past it.
func decodeSize(data string, i int) (int, int) {
	b := data[i]
	i++
	if b < 0x80 {
		return int(b), i
	}
	size := int(b & 0x7f)
	for shift := 7; ; shift += 7 {
		b = data[i]
		i++
		size |= int(b&0x7f) << shift
		if b < 0x80 {
			return size, i
		}
	}
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
