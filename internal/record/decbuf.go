package record

import (
	"encoding/binary"
	"fmt"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// decbuf reads the fields of one record front to back. The first failed read
// records a corrupt.ErrCorrupt-wrapping error naming the byte offset in the record;
// every later read then returns zero values, so callers check err once per
// entry instead of after every field.
type decbuf struct {
	rec []byte // the whole record
	off int    // offset of the next unread byte in rec
	typ Type   // for error messages
	err error
}

func (d *decbuf) len() int { return len(d.rec) - d.off }

func (d *decbuf) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s record, byte %d: %s", corrupt.ErrCorrupt, d.typ, d.off, what)
	}
	d.off = len(d.rec)
}

func (d *decbuf) byte1() byte {
	if d.err != nil {
		return 0
	}
	if d.len() < 1 {
		d.fail("truncated byte")
		return 0
	}
	c := d.rec[d.off]
	d.off++
	return c
}

func (d *decbuf) be64() uint64 {
	if d.err != nil {
		return 0
	}
	if d.len() < 8 {
		d.fail("truncated 64-bit field")
		return 0
	}
	v := binary.BigEndian.Uint64(d.rec[d.off:])
	d.off += 8
	return v
}

func (d *decbuf) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.rec[d.off:])
	if n <= 0 {
		d.fail(varintProblem(n))
		return 0
	}
	d.off += n
	return v
}

func (d *decbuf) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.rec[d.off:])
	if n <= 0 {
		d.fail(varintProblem(n))
		return 0
	}
	d.off += n
	return v
}

// str reads a uvarint length and that many bytes, returning the start and end
// offsets of the bytes in rec (so the caller can decide how to copy them).
func (d *decbuf) str() (start, end int) {
	l := d.uvarint()
	if d.err != nil {
		return 0, 0
	}
	if l > uint64(d.len()) {
		d.fail(fmt.Sprintf("string length %d exceeds the %d bytes left", l, d.len()))
		return 0, 0
	}
	start = d.off
	d.off += int(l)
	return start, d.off
}

func varintProblem(n int) string {
	if n == 0 {
		return "truncated varint"
	}
	return "varint overflows 64 bits"
}
