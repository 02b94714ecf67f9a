package index

import (
	"bytes"
	"fmt"

	"github.com/isotsdb/tsdb/internal/encoding"
)

// symbolSample is how often the symbol table remembers where a symbol
// starts: looking a symbol up decodes at most symbolSample-1 others, and the
// table costs 4 bytes per symbolSample symbols of memory.
const symbolSample = 8

// symbolTable reads the symbol table section in place.
type symbolTable struct {
	b       []byte   // the entries, after the count and before the CRC
	file    string   // the index file, for errors
	base    int64    // file offset of b[0], for errors
	count   uint32   // number of symbols
	samples []uint32 // offset in b of symbols 0, 32, 64, ...
}

// newSymbolTable checks the entries of a symbol table section: exactly
// count length-prefixed strings filling b, in strictly increasing order.
// Decoding errors name file and their offset in it (b starts at base).
func newSymbolTable(b []byte, file string, base int64, count uint32) (symbolTable, error) {
	// Every symbol takes at least one byte, which bounds the allocation.
	if uint64(count) > uint64(len(b)) {
		return symbolTable{}, fmt.Errorf("symbol table of %d bytes claims %d symbols", len(b), count)
	}
	t := symbolTable{b: b, file: file, base: base, count: count}
	t.samples = make([]uint32, 0, count/symbolSample+1)
	d := t.decbuf(0)
	var prev []byte
	for i := range count {
		if i%symbolSample == 0 {
			t.samples = append(t.samples, uint32(d.Offset()))
		}
		s := d.UvarintBytes()
		if d.Failed() {
			return symbolTable{}, fmt.Errorf("symbol %d: %w", i, d.ErrIn(t.file, t.base))
		}
		if i > 0 && bytes.Compare(prev, s) >= 0 {
			return symbolTable{}, fmt.Errorf("symbol %d out of order", i)
		}
		prev = s
	}
	if d.Len() != 0 {
		return symbolTable{}, fmt.Errorf("%d bytes after the last symbol", d.Len())
	}
	return t, nil
}

// decbuf returns a Decbuf reading the table from offset off of b.
func (t *symbolTable) decbuf(off uint32) encoding.Decbuf {
	return encoding.NewDecbuf(t.b[off:])
}

// lookup returns symbol i, aliasing the table's memory.
func (t *symbolTable) lookup(i uint32) ([]byte, bool) {
	if i >= t.count {
		return nil, false
	}
	d := t.decbuf(t.samples[i/symbolSample])
	for range i % symbolSample {
		d.UvarintBytes()
	}
	s := d.UvarintBytes()
	return s, !d.Failed()
}

// reverseLookup returns the index of symbol s.
func (t *symbolTable) reverseLookup(s []byte) (uint32, bool) {
	// Find the last sample <= s, then walk from it.
	lo, hi := 0, len(t.samples)
	for lo < hi {
		mid := (lo + hi) / 2
		d := t.decbuf(t.samples[mid])
		if bytes.Compare(d.UvarintBytes(), s) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0, false
	}
	i := uint32(lo-1) * symbolSample
	d := t.decbuf(t.samples[lo-1])
	for ; i < t.count; i++ {
		c := bytes.Compare(d.UvarintBytes(), s)
		if d.Failed() || c > 0 {
			return 0, false
		}
		if c == 0 {
			return i, true
		}
	}
	return 0, false
}

// StringIter iterates over a sorted list of strings.
type StringIter interface {
	// Next advances to the next string and reports whether there is one.
	Next() bool
	// At returns the current string.
	At() string
	// Err returns the error that stopped the iteration, if any.
	Err() error
}

// symbolIter iterates over a checked symbol table, copying each symbol.
type symbolIter struct {
	d    encoding.Decbuf
	file string // the index file and the offset of the table in it,
	base int64  // for errors
	left uint32
	cur  string
}

func (it *symbolIter) Next() bool {
	if it.left == 0 {
		return false
	}
	it.left--
	it.cur = string(it.d.UvarintBytes())
	return !it.d.Failed()
}

func (it *symbolIter) At() string { return it.cur }
func (it *symbolIter) Err() error { return it.d.ErrIn(it.file, it.base) }
