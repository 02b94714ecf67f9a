package index

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
)

// castagnoli is the CRC32C table all checksums of the format use. It is
// never modified after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Decoding failures; they are wrapped in a *corrupt.Error by the Reader.
var (
	errShort    = errors.New("unexpected end of data")
	errVarint   = errors.New("invalid varint")
	errOverflow = errors.New("value out of range")
)

// decoder reads the primitives of the format from b. The first failure
// sticks: later reads return zero values and err keeps the first error, so
// a sequence of reads can be checked once at the end. It never reads
// outside b and never allocates.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) len() int { return len(d.b) }

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		if n == 0 {
			d.fail(errShort)
		} else {
			d.fail(errVarint)
		}
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail(errOverflow)
		return 0
	}
	return uint32(v)
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		if n == 0 {
			d.fail(errShort)
		} else {
			d.fail(errVarint)
		}
		return 0
	}
	d.b = d.b[n:]
	return v
}

// uvarintBytes reads a uvarint length and that many bytes, returning a
// sub-slice of the input.
func (d *decoder) uvarintBytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

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
