// Package encoding reads the primitives the on-disk formats are built
// from (bytes, big-endian integers, varints, length-prefixed strings) with
// one decoder, Decbuf, shared by the index, the WAL records and the
// tombstones file.
package encoding

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// Causes of decoding failures, wrapped in the *corrupt.Error a Decbuf
// records.
var (
	// ErrShort: a field runs past the end of the data.
	ErrShort = errors.New("unexpected end of data")
	// ErrVarint: a varint longer than 64 bits.
	ErrVarint = errors.New("varint overflows 64 bits")
	// ErrOverflow: a value larger than its field allows.
	ErrOverflow = errors.New("value out of range")
)

// Decbuf reads the fields of a byte slice front to back. The first failed
// read records a *corrupt.Error at the offset of the failing field (from
// the start of the slice, plus the base given to NewDecbufAt) and empties
// the buffer: every later read returns a zero value and Err keeps the
// first error, so a sequence of reads can be checked once at the end.
// Reads never go outside the slice, never panic and never allocate, except
// for the error itself. The zero Decbuf is empty.
//
// A Decbuf is a small value: copy it to remember a position. It is not
// safe for concurrent use.
type Decbuf struct {
	b    []byte // the unread bytes
	n    int    // length of the whole slice: n-len(b) is the offset
	file string // for errors; "" if not known
	base int64  // offset of the slice in file, for errors
	err  error
}

// NewDecbuf returns a Decbuf reading b. Its errors name no file and count
// offsets from the start of b.
func NewDecbuf(b []byte) Decbuf { return Decbuf{b: b, n: len(b)} }

// NewDecbufAt returns a Decbuf reading b, which starts at offset base of
// file: its errors name file and count offsets in it.
func NewDecbufAt(b []byte, file string, base int64) Decbuf {
	return Decbuf{b: b, n: len(b), file: file, base: base}
}

// Err returns the first error, a *corrupt.Error, or nil.
func (d *Decbuf) Err() error { return d.err }

// Len returns the number of unread bytes.
func (d *Decbuf) Len() int { return len(d.b) }

// Offset returns the offset of the next unread byte from the start of the
// slice (the slice's length after a failure).
func (d *Decbuf) Offset() int { return d.n - len(d.b) }

// Bytes returns the unread bytes, aliasing the slice.
func (d *Decbuf) Bytes() []byte { return d.b }

// Failf records, unless an error is recorded already, a failure at the
// current offset with a formatted cause, and empties the buffer.
func (d *Decbuf) Failf(format string, args ...any) {
	d.FailAt(d.Offset(), fmt.Errorf(format, args...))
}

// FailAt records, unless an error is recorded already, a failure at offset
// off of the slice caused by err, and empties the buffer.
func (d *Decbuf) FailAt(off int, err error) {
	if d.err == nil {
		d.err = corrupt.At(d.file, d.base+int64(off), err)
	}
	d.b = d.b[len(d.b):]
}

// fail records a failure of a read of what at the current offset.
func (d *Decbuf) fail(what string, cause error) {
	d.FailAt(d.Offset(), fmt.Errorf("%s: %w", what, cause))
}

// Skip advances past n bytes.
func (d *Decbuf) Skip(n int) {
	if d.err != nil {
		return
	}
	if n < 0 || n > len(d.b) {
		d.fail(fmt.Sprintf("skip %d bytes", n), ErrShort)
		return
	}
	d.b = d.b[n:]
}

// Byte reads one byte.
func (d *Decbuf) Byte() byte {
	if len(d.b) < 1 {
		if d.err == nil {
			d.fail("byte", ErrShort)
		}
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// Be32 reads a big-endian uint32.
func (d *Decbuf) Be32() uint32 {
	if len(d.b) < 4 {
		if d.err == nil {
			d.fail("32-bit field", ErrShort)
		}
		return 0
	}
	v := binary.BigEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

// Be64 reads a big-endian uint64.
func (d *Decbuf) Be64() uint64 {
	if len(d.b) < 8 {
		if d.err == nil {
			d.fail("64-bit field", ErrShort)
		}
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Decbuf) Uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.varintFailed(n)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Uvarint32 reads an unsigned varint that must fit 32 bits.
func (d *Decbuf) Uvarint32() uint32 {
	off := d.Offset()
	v := d.Uvarint()
	if v > math.MaxUint32 {
		d.FailAt(off, fmt.Errorf("uvarint %d: %w", v, ErrOverflow))
		return 0
	}
	return uint32(v)
}

// Varint reads a signed (zig-zag) varint.
func (d *Decbuf) Varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.varintFailed(n)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varintFailed records the failure of a varint read that returned n <= 0:
// an empty buffer after an earlier failure, truncated data, or overflow.
func (d *Decbuf) varintFailed(n int) {
	switch {
	case d.err != nil:
	case n == 0:
		d.fail("varint", ErrShort)
	default:
		d.fail("varint", ErrVarint)
	}
}

// UvarintBytes reads a uvarint length and that many bytes, returning a
// sub-slice of the input whose capacity ends with it (appending to it
// never overwrites the input).
func (d *Decbuf) UvarintBytes() []byte {
	off := d.Offset()
	l := d.Uvarint()
	if d.err != nil {
		return nil
	}
	if l > uint64(len(d.b)) {
		d.FailAt(off, fmt.Errorf("length %d exceeds the %d bytes left: %w", l, len(d.b), ErrShort))
		return nil
	}
	v := d.b[:l:l]
	d.b = d.b[l:]
	return v
}
