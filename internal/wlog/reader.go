package wlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/golang/snappy"
)

// maxSnappyExpansion bounds how much larger than its compressed form a
// snappy block can decode to. The densest snappy element is a 3-byte copy
// producing 64 bytes (ratio 21.3), so a block claiming more than this many
// times its size is corrupt and is rejected before allocating for it.
const maxSnappyExpansion = 22

// Reader reads the records of a log from an io.Reader, normally one made by
// NewSegmentsReader or NewSegmentsRangeReader (then errors and positions
// name segments). It verifies every fragment's checksum and sequence,
// decompresses snappy records, and reports a torn or damaged tail as a
// *corrupt.Error rather than as the end of the log. Zero padding at the end
// of a page (and a short last page of a segment) is not an error.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	src  pageSource
	page [PageSize]byte
	cur  pageInfo // the page in page; cur.n == 0 before the first
	pos  int      // next unparsed byte in page

	rec  []byte // the current record
	zbuf []byte // compressed bytes of the current record

	recSeg int    // segment of the current record
	recEnd int64  // offset just past the current record in its segment
	recDir string // directory of the current record's segment

	done bool
	err  error
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{recSeg: -1}
	if sr, ok := r.(*segmentsReader); ok {
		rd.src = sr
	} else {
		rd.src = &streamSource{r: r}
	}
	return rd
}

// Record returns the current record. It is valid until the next call to Next.
func (r *Reader) Record() []byte { return r.rec }

// Err returns the error that ended reading, or nil if the log ended
// cleanly. Damage is reported as a *corrupt.Error; a record with an
// unsupported compression as an error wrapping ErrUnsupportedCompression
// (not a *corrupt.Error: the data is valid); I/O errors as they are,
// wrapped with context.
func (r *Reader) Err() error { return r.err }

// Segment returns the segment of the last record returned by Next, or -1
// for a plain stream or before the first record.
func (r *Reader) Segment() int { return r.recSeg }

// Offset returns the offset just past the last record returned by Next, in
// its segment (in the stream, for a plain stream).
func (r *Reader) Offset() int64 { return r.recEnd }

// corrupt ends reading with a *corrupt.Error at offset off of the page's
// segment.
func (r *Reader) corrupt(info pageInfo, off int64, format string, args ...any) bool {
	r.err = corruptSegment(info.dir, info.seg, off, fmt.Errorf("wlog: "+format, args...))
	r.done = true
	return false
}

// Next advances to the next record and reports whether there is one. After
// it returns false, Err says why.
func (r *Reader) Next() bool {
	if r.done {
		return false
	}
	r.rec = r.rec[:0]
	r.zbuf = r.zbuf[:0]
	var (
		inRecord bool
		recFlags byte
		recStart int64 // offset of the current record's first fragment
		recInfo  pageInfo
	)
	for {
		if r.pos >= r.cur.n {
			info, err := r.src.nextPage(&r.page)
			if errors.Is(err, io.EOF) {
				if inRecord {
					return r.corrupt(recInfo, recStart, "record is torn: the log ends inside it")
				}
				r.done = true
				return false
			}
			if err != nil {
				r.err, r.done = err, true
				return false
			}
			if inRecord && (info.seg != recInfo.seg || info.dir != recInfo.dir) {
				return r.corrupt(recInfo, recStart, "record is torn: its segment ends inside it")
			}
			r.cur, r.pos = info, 0
		}
		at := r.cur.off + int64(r.pos) // offset of the fragment being parsed
		rest := PageSize - r.pos       // bytes to the end of the page
		avail := r.page[r.pos:r.cur.n] // bytes actually present

		if rest < headerSize || avail[0] == fragPadding {
			// Page padding, explicit or because no header fits. Records
			// in progress never meet padding: their first and middle
			// fragments end at page boundaries.
			if inRecord {
				return r.corrupt(r.cur, at, "padding where a record's next fragment belongs")
			}
			for i, c := range avail {
				if c != 0 {
					return r.corrupt(r.cur, at+int64(i), "non-zero byte %#x in page padding", c)
				}
			}
			r.pos = r.cur.n
			continue
		}
		if len(avail) < headerSize {
			return r.corrupt(r.cur, r.startOf(inRecord, recStart, at), "fragment header cut off by the end of the segment")
		}
		typ := avail[0]
		kind, flags := typ&fragKindMask, typ&^fragKindMask
		length := int(binary.BigEndian.Uint16(avail[1:]))
		sum := binary.BigEndian.Uint32(avail[3:])
		if length > rest-headerSize {
			return r.corrupt(r.cur, at, "fragment length %d runs past the page end", length)
		}
		if length > len(avail)-headerSize {
			return r.corrupt(r.cur, r.startOf(inRecord, recStart, at), "fragment cut off by the end of the segment")
		}
		data := avail[headerSize : headerSize+length]
		if got := crc32.Checksum(data, castagnoli); got != sum {
			return r.corrupt(r.cur, at, "fragment checksum %#08x, header says %#08x", got, sum)
		}
		if flags&flagUnknown != 0 || flags == flagSnappy|flagZstd {
			return r.corrupt(r.cur, at, "invalid flags in fragment type byte %#x", typ)
		}
		switch kind {
		case fragFull, fragFirst:
			if inRecord {
				return r.corrupt(r.cur, at, "new record starts before the previous one ended")
			}
		case fragMiddle, fragLast:
			if !inRecord {
				return r.corrupt(r.cur, at, "continuation fragment without a first fragment")
			}
			if flags != recFlags {
				return r.corrupt(r.cur, at, "compression flags change inside a record")
			}
		default:
			return r.corrupt(r.cur, at, "unknown fragment type %d", kind)
		}
		if (kind == fragFirst || kind == fragMiddle) && r.pos+headerSize+length != PageSize {
			return r.corrupt(r.cur, at, "non-final fragment does not fill its page")
		}
		if flags&flagZstd != 0 {
			r.err = fmt.Errorf("%w: zstd-compressed record in segment %s at offset %d",
				ErrUnsupportedCompression, SegmentName(r.cur.dir, r.cur.seg), at)
			if r.cur.seg < 0 {
				r.err = fmt.Errorf("%w: zstd-compressed record at offset %d", ErrUnsupportedCompression, at)
			}
			r.done = true
			return false
		}
		if flags&flagSnappy != 0 {
			r.zbuf = appendFragment(r.zbuf, data)
		} else {
			r.rec = appendFragment(r.rec, data)
		}
		r.pos += headerSize + length
		if kind == fragFirst {
			inRecord, recFlags, recStart, recInfo = true, flags, at, r.cur
			continue
		}
		if kind == fragMiddle {
			continue
		}
		// A full or last fragment completes the record.
		if !inRecord {
			recStart, recInfo = at, r.cur
		}
		if flags&flagSnappy != 0 && len(r.zbuf) > 0 {
			if !r.decompress(recInfo, recStart) {
				return false
			}
		}
		r.recSeg, r.recEnd, r.recDir = r.cur.seg, r.cur.off+int64(r.pos), r.cur.dir
		return true
	}
}

// startOf returns where a problem found at fragment offset at should be
// reported: the record's start if a record is in progress.
func (r *Reader) startOf(inRecord bool, recStart, at int64) int64 {
	if inRecord {
		return recStart
	}
	return at
}

// decompress decodes the snappy block in zbuf into rec, refusing claimed
// sizes that no valid block of that size can have.
func (r *Reader) decompress(info pageInfo, start int64) bool {
	n, err := snappy.DecodedLen(r.zbuf)
	if err != nil {
		return r.corrupt(info, start, "snappy header: %v", err)
	}
	if n > maxSnappyExpansion*len(r.zbuf) {
		return r.corrupt(info, start, "snappy block of %d bytes claims %d decoded bytes", len(r.zbuf), n)
	}
	if cap(r.rec) < n {
		r.rec = make([]byte, n)
	}
	out, err := snappy.Decode(r.rec[:cap(r.rec)], r.zbuf)
	if err != nil {
		return r.corrupt(info, start, "snappy: %v", err)
	}
	r.rec = out
	return true
}

// appendFragment appends a fragment's data to the record being assembled
// in b, doubling b's capacity when it is short: a record of many pages then
// costs about twice its size in allocations, not the five times or more of
// append's gentler growth for large slices.
func appendFragment(b, data []byte) []byte {
	if cap(b)-len(b) < len(data) {
		b = slices.Grow(b, max(len(data), len(b)))
	}
	return append(b, data...)
}
