package remote

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/wlog"
)

// errTornTail means reading a segment stopped at an incomplete or damaged
// record: in the newest segment, a write in progress; in a completed one,
// damage. The caller retries later or moves on.
var errTornTail = errors.New("remote: segment ends inside a record")

// fragment header layout of the WAL page format (Prometheus's): type byte,
// big-endian uint16 length, big-endian CRC-32C of the data.
const (
	fragHeaderSize = 7
	fragTypeFull   = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// filler returns n bytes (7 <= n < wlog.PageSize) that form one complete,
// uncompressed record of n-7 zero bytes. Put in front of a segment's bytes
// from offset off (n = off mod PageSize), it makes a wlog.Reader, which
// parses whole pages, start parsing at off: the page the reader sees is
// the page of the segment that holds off. A record never ends fewer than 7
// bytes into a page (its header alone takes 7), so any record boundary
// that is not page aligned leaves room for the filler.
func filler(n int) []byte {
	b := make([]byte, n)
	b[0] = fragTypeFull
	binary.BigEndian.PutUint16(b[1:], uint16(n-fragHeaderSize))
	binary.BigEndian.PutUint32(b[3:], crc32.Checksum(b[fragHeaderSize:], castagnoli))
	return b
}

// readSegment reads the records of the segment file at path that start at
// or after off, which must be 0 or the end of a record, and calls fn with
// each record and the offset just past it. rec is valid only during the
// call. It returns the end of the last record read (off if none) and nil
// at a clean end, errTornTail (wrapping the reader's *corrupt.Error) when
// the file ends inside a record or is damaged there, fn's error, or an I/O
// error (wrapping fs.ErrNotExist if the file is gone).
func readSegment(path string, off int64, fn func(rec []byte, end int64) error) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return off, fmt.Errorf("remote: open segment: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return off, fmt.Errorf("remote: seek segment %s: %w", path, err)
	}
	inPage := int(off % wlog.PageSize)
	pageStart := off - int64(inPage)
	var src io.Reader = f
	if inPage > 0 {
		if inPage < fragHeaderSize {
			return off, fmt.Errorf("%w: offset %d of %s is not a record boundary", errTornTail, off, path)
		}
		src = io.MultiReader(bytes.NewReader(filler(inPage)), f)
	}
	r := wlog.NewReader(src)
	last := off
	for r.Next() {
		end := pageStart + r.Offset()
		if end <= off { // the filler
			continue
		}
		if err := fn(r.Record(), end); err != nil {
			return last, err
		}
		last = end
	}
	if err := r.Err(); err != nil {
		if errors.Is(err, corrupt.ErrCorrupt) {
			return last, fmt.Errorf("%w: %s: %w", errTornTail, path, err)
		}
		return last, fmt.Errorf("remote: read segment %s: %w", path, err)
	}
	return last, nil
}
