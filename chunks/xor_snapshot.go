package chunks

import "encoding/binary"

// XORSnapshot is an XORChunk as it was at one moment: it iterates exactly
// the samples the chunk held then, while appends to the chunk go on. It
// copies no sample bytes: it keeps the chunk's slice header, sample count
// and last byte, the three things a later Append can change under a reader
// (see the package documentation). Take it under the rule that applies to
// Iterator (not overlapping an Append); it may be used any time after.
//
// The zero value is an empty chunk.
type XORSnapshot struct {
	data  []byte
	total uint16
	last  byte
	from  seekPoint // see XORAppender.SnapshotFrom; num 0 if none
}

// Snapshot captures the chunk's current samples.
func (c *XORChunk) Snapshot() XORSnapshot {
	b := c.w.buf
	s := XORSnapshot{data: b}
	if len(b) >= headerSize {
		s.total = binary.BigEndian.Uint16(b)
	}
	if len(b) > 0 {
		s.last = b[len(b)-1]
	}
	return s
}

// NumSamples returns the number of samples captured.
func (s *XORSnapshot) NumSamples() int { return int(s.total) }

// Iterator returns an iterator over the captured samples; reuse, if it is
// an iterator of this package's XOR chunks, is recycled.
func (s *XORSnapshot) Iterator(reuse Iterator) Iterator {
	it, ok := reuse.(*xorIterator)
	if !ok {
		it = new(xorIterator)
	}
	it.resetTo(s.data, s.total, s.last)
	it.from = s.from
	return it
}
