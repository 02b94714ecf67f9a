package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// flushAt is how much encoded data the streaming encoders buffer before
// handing it to their output.
const flushAt = 32 << 10

// encodePostingsList encodes a postings list section: len <4b>, count <4b>,
// the references <4b each>, CRC32C of count and references. It streams the
// encoding through out in pieces of about flushAt bytes, using b as the
// buffer, and returns the buffer for reuse.
func encodePostingsList(b []byte, refs []uint32, out func([]byte) error) ([]byte, error) {
	size := 4 + 4*uint64(len(refs))
	if size > math.MaxUint32 {
		return b, fmt.Errorf("%w: postings list of %d series", ErrTooLarge, len(refs))
	}
	b = binary.BigEndian.AppendUint32(b[:0], uint32(size))
	b = binary.BigEndian.AppendUint32(b, uint32(len(refs)))
	crc := crc32.Update(0, castagnoli, b[4:])
	for _, r := range refs {
		if len(b) >= flushAt {
			if err := out(b); err != nil {
				return b, err
			}
			b = b[:0]
		}
		start := len(b)
		b = binary.BigEndian.AppendUint32(b, r)
		crc = crc32.Update(crc, castagnoli, b[start:])
	}
	b = binary.BigEndian.AppendUint32(b, crc)
	return b, out(b)
}

// decodePostingsList returns the postings of the list section starting at
// b[off:], checking its bounds, length and checksum. The result aliases b.
func decodePostingsList(b []byte, off uint64) (Postings, error) {
	if off > uint64(len(b)) || uint64(len(b))-off < 12 {
		return nil, errShort
	}
	size := uint64(binary.BigEndian.Uint32(b[off:]))
	if size > uint64(len(b))-off-8 {
		return nil, errShort
	}
	data := b[off+4 : off+4+size]
	if crc32.Checksum(data, castagnoli) != binary.BigEndian.Uint32(b[off+4+size:]) {
		return nil, ErrChecksum
	}
	if size < 4 {
		return nil, errShort
	}
	n := uint64(binary.BigEndian.Uint32(data))
	if 4+4*n != size {
		return nil, fmt.Errorf("postings list of %d bytes claims %d entries", size, n)
	}
	if n == 0 {
		return EmptyPostings(), nil
	}
	return &bigEndianPostings{b: data[4:], i: -1}, nil
}

// bigEndianPostings iterates over a list of 4-byte big-endian references
// in place, without decoding it up front.
type bigEndianPostings struct {
	b []byte
	i int // index of the current value; -1 before the start
}

func (p *bigEndianPostings) n() int { return len(p.b) / 4 }

func (p *bigEndianPostings) at(i int) uint64 {
	return uint64(binary.BigEndian.Uint32(p.b[4*i:]))
}

func (p *bigEndianPostings) Next() bool {
	if p.i < p.n() {
		p.i++
	}
	return p.i < p.n()
}

func (p *bigEndianPostings) Seek(v uint64) bool {
	n := p.n()
	if p.i < 0 {
		p.i = 0
	}
	if p.i >= n {
		return false
	}
	if p.at(p.i) >= v {
		return true
	}
	// Gallop as ListPostings.Seek does. Invariant: p.at(lo-1) < v.
	lo, hi, step := p.i+1, p.i+1, 1
	for hi < n && p.at(hi) < v {
		lo = hi + 1
		hi += step
		step <<= 1
	}
	hi = min(hi, n)
	for lo < hi { // first index in [lo, hi) with a value >= v, else hi
		mid := int(uint(lo+hi) >> 1)
		if p.at(mid) < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	p.i = lo
	return p.i < n
}

func (p *bigEndianPostings) At() uint64 {
	if p.i < 0 || p.i >= p.n() {
		return 0
	}
	return p.at(p.i)
}

func (p *bigEndianPostings) Err() error { return nil }
