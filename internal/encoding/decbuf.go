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
// the start of the slice; ErrIn places it in a file) and empties the
// buffer: every later read returns a zero value and Err keeps the first
// error, so a sequence of reads can be checked once at the end.
// Reads never go outside the slice, never panic and never allocate, except
// for the error itself. The zero Decbuf is empty.
//
// A Decbuf is a small value: copy it to remember a position. It is not
// safe for concurrent use.
//
// It holds no file name or base offset, which would make every Decbuf
// larger on hot paths; the caller that knows them adds them with ErrIn.
//
// It advances an offset rather than reslicing, so that a read stores no
// pointer (and needs no write barrier) in a Decbuf of the caller's.
type Decbuf struct {
	b   []byte // the whole slice
	off int    // offset of the next unread byte; len(b) after a failure
	err *corrupt.Error
}

// NewDecbuf returns a Decbuf reading b.
func NewDecbuf(b []byte) Decbuf { return Decbuf{b: b} }

// Err returns the first error, a *corrupt.Error naming no file with its
// offset from the start of the slice, or nil.
func (d *Decbuf) Err() error {
	if d.err == nil {
		return nil
	}
	return d.err
}

// ErrIn returns the first error as Err does, but placed in file: the
// slice starts at offset base of file. It returns nil if there is none.
func (d *Decbuf) ErrIn(file string, base int64) error {
	if d.err == nil {
		return nil
	}
	return corrupt.At(file, base+d.err.Offset, d.err.Err)
}

// Failed reports whether a read has failed.
func (d *Decbuf) Failed() bool { return d.err != nil }

// Len returns the number of unread bytes.
func (d *Decbuf) Len() int { return len(d.b) - d.off }

// Offset returns the offset of the next unread byte from the start of the
// slice (the slice's length after a failure).
func (d *Decbuf) Offset() int { return d.off }

// Bytes returns the unread bytes, aliasing the slice.
func (d *Decbuf) Bytes() []byte { return d.b[d.off:] }

// Failf records, unless an error is recorded already, a failure at the
// current offset with a formatted cause, and empties the buffer.
func (d *Decbuf) Failf(format string, args ...any) {
	d.FailAt(d.Offset(), fmt.Errorf(format, args...))
}

// FailAt records, unless an error is recorded already, a failure at offset
// off of the slice caused by err, and empties the buffer.
func (d *Decbuf) FailAt(off int, err error) {
	if d.err == nil {
		d.err = corrupt.At("", int64(off), err)
	}
	d.off = len(d.b)
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
	if n < 0 || n > d.Len() {
		d.fail(fmt.Sprintf("skip %d bytes", n), ErrShort)
		return
	}
	d.off += n
}

// Byte reads one byte.
func (d *Decbuf) Byte() byte {
	if d.off >= len(d.b) {
		d.failShort("byte")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

// Be32 reads a big-endian uint32.
func (d *Decbuf) Be32() uint32 {
	if d.Len() < 4 {
		d.failShort("32-bit field")
		return 0
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

// Be64 reads a big-endian uint64.
func (d *Decbuf) Be64() uint64 {
	if d.Len() < 8 {
		d.failShort("64-bit field")
		return 0
	}
	v := binary.BigEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

// Uvarint reads an unsigned varint.
func (d *Decbuf) Uvarint() uint64 {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.varintFailed(n)
		return 0
	}
	d.off += n
	return v
}

// Uvarint32 reads an unsigned varint that must fit 32 bits.
func (d *Decbuf) Uvarint32() uint32 {
	off := d.Offset()
	v := d.Uvarint()
	if v > math.MaxUint32 {
		d.failOverflow(off, v)
		return 0
	}
	return uint32(v)
}

// Varint reads a signed (zig-zag) varint.
func (d *Decbuf) Varint() int64 {
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.varintFailed(n)
		return 0
	}
	d.off += n
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
	if l > uint64(d.Len()) {
		d.failLength(off, l)
		return nil
	}
	end := d.off + int(l)
	v := d.b[d.off:end:end]
	d.off = end
	return v
}

// The failure paths below are kept out of line so that the reads that call
// them stay small.

//go:noinline
func (d *Decbuf) failOverflow(off int, v uint64) {
	d.FailAt(off, fmt.Errorf("uvarint %d: %w", v, ErrOverflow))
}

//go:noinline
func (d *Decbuf) failLength(off int, l uint64) {
	d.FailAt(off, fmt.Errorf("length %d exceeds the %d bytes left: %w", l, d.Len(), ErrShort))
}

// failShort records that the fixed-size field what runs past the end.
//
//go:noinline
func (d *Decbuf) failShort(what string) {
	if d.err == nil {
		d.fail(what, ErrShort)
	}
}
