package headchunks

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/corrupt"
)

// record is one record parsed from a file. data aliases the file's bytes.
type record struct {
	seriesRef  uint64
	mint, maxt int64
	enc        byte // as stored: OutOfOrderFlag may be set
	data       []byte
	size       int // bytes of the whole record, CRC included
}

// outOfOrder reports whether the record holds an out-of-order chunk.
func (r *record) outOfOrder() bool { return r.enc&OutOfOrderFlag != 0 }

// encoding returns the chunk's encoding, without the out-of-order flag.
func (r *record) encoding() chunks.Encoding { return chunks.Encoding(r.enc &^ OutOfOrderFlag) }

// parseRecord parses the record at offset off of b, the contents of the
// file name. It reports end, with no error, when the bytes from off on are
// all zero: the unused tail of a file (Prometheus preallocates its files)
// rather than a record.
//
// Damage yields a *corrupt.Error at off. Besides torn or garbled bytes,
// that includes what Prometheus's reader would stop at or reject: a record
// whose series ref, mint and maxt are all zero (Prometheus takes them for
// the zero tail and ignores everything after), and fewer than minTailSize
// bytes left that are not all zero. It also includes a chunk encoding
// chunks does not know and mint > maxt, which no writer produces.
func parseRecord(name string, b []byte, off int) (rec record, end bool, err *corrupt.Error) {
	rest := b[off:]
	if len(rest) < minTailSize {
		if allZero(rest) {
			return record{}, true, nil
		}
		return record{}, false, corrupt.Errorf(name, int64(off),
			"%d bytes left at the end of the file, fewer than the %d a record takes there, and not all zero", len(rest), minTailSize)
	}
	rec.seriesRef = binary.BigEndian.Uint64(rest)
	rec.mint = int64(binary.BigEndian.Uint64(rest[8:]))
	rec.maxt = int64(binary.BigEndian.Uint64(rest[16:]))
	if rec.seriesRef == 0 && rec.mint == 0 && rec.maxt == 0 {
		if allZero(rest) {
			return record{}, true, nil
		}
		return record{}, false, corrupt.Errorf(name, int64(off),
			"record with series ref, mint and maxt all zero (where a reader stops) followed by non-zero bytes")
	}
	rec.enc = rest[metaSize-1]
	dataLen, n := binary.Uvarint(rest[metaSize : metaSize+maxLenSize])
	if n <= 0 {
		return record{}, false, corrupt.Errorf(name, int64(off), "unreadable data length")
	}
	// Compare in uint64 so that a huge length cannot overflow.
	if avail := uint64(len(rest) - metaSize - n - crcSize); dataLen > avail {
		return record{}, false, corrupt.Errorf(name, int64(off),
			"record of %d data bytes runs past the end of the %d-byte file", dataLen, len(b))
	}
	dataEnd := metaSize + n + int(dataLen)
	if want, got := binary.BigEndian.Uint32(rest[dataEnd:]), crc32.Checksum(rest[:dataEnd], castagnoli); want != got {
		return record{}, false, corrupt.Errorf(name, int64(off), "record checksum %#08x, stored %#08x", got, want)
	}
	if e := rec.encoding(); !e.IsKnown() {
		return record{}, false, corrupt.Errorf(name, int64(off), "unknown chunk encoding %d", uint8(e))
	}
	if rec.mint > rec.maxt {
		return record{}, false, corrupt.Errorf(name, int64(off), "mint %d > maxt %d", rec.mint, rec.maxt)
	}
	// Full slice expression: the chunk must not see (or append over) the
	// CRC and the records after it.
	rec.data = rest[metaSize+n : dataEnd : dataEnd]
	rec.size = dataEnd + crcSize
	return rec, false, nil
}

// chunk returns the chunk of rec, reading mp in place. A chunk whose bytes
// chunks cannot even start to decode yields a *corrupt.Error at off
// wrapping the chunks error.
func (r *record) chunk(name string, off int, mp *mapping) (chunks.Chunk, *corrupt.Error) {
	c, err := chunks.FromData(r.encoding(), r.data)
	if err != nil {
		return nil, corrupt.At(name, int64(off), err)
	}
	if r.encoding() == chunks.EncXOR {
		// The common case, in one object of 32 bytes (FromData checked
		// the header).
		return &mappedXOR{b: r.data[:len(r.data):len(r.data)], m: mp}, nil
	}
	return &mappedChunk{Chunk: c, m: mp}, nil
}

// allZero reports whether every byte of b is zero.
func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// checkHeader returns a *corrupt.Error if b does not start with a valid
// file header, at offset 0 for a short file or bad magic, 4 for the version
// and 5 for the padding.
func checkHeader(name string, b []byte) *corrupt.Error {
	if len(b) < HeaderSize {
		return corrupt.Errorf(name, 0, "file of %d bytes is shorter than the %d-byte header", len(b), HeaderSize)
	}
	if m := binary.BigEndian.Uint32(b); m != Magic {
		return corrupt.Errorf(name, 0, "magic %#08x, want %#08x", m, uint32(Magic))
	}
	if v := b[4]; v != Version {
		return corrupt.Errorf(name, 4, "format version %d, want %d", v, Version)
	}
	if b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return corrupt.Errorf(name, 5, "header padding % x is not zero", b[5:8])
	}
	return nil
}
