package wlog

import (
	"errors"
	"fmt"
	"io"

	"github.com/isotsdb/tsdb/vfs"
)

// pageInfo describes a page handed to a Reader: n bytes of it are real
// (fewer than PageSize only for the last page of a segment or stream; the
// rest counts as zero padding), and it starts at off in segment seg of dir
// (seg -1 for a plain stream, where off counts from the stream's start).
type pageInfo struct {
	dir string
	seg int
	off int64
	n   int
}

// pageSource yields a log one page at a time. nextPage returns io.EOF once
// there are no more pages.
type pageSource interface {
	nextPage(p *[PageSize]byte) (pageInfo, error)
}

// streamSource reads pages from a plain io.Reader.
type streamSource struct {
	r   io.Reader
	off int64
	eof bool
}

func (s *streamSource) nextPage(p *[PageSize]byte) (pageInfo, error) {
	if s.eof {
		return pageInfo{seg: -1, off: s.off}, io.EOF
	}
	n, err := io.ReadFull(s.r, p[:])
	info := pageInfo{seg: -1, off: s.off, n: n}
	s.off += int64(n)
	switch {
	case err == nil:
		return info, nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		s.eof = true
		return info, nil
	case errors.Is(err, io.EOF):
		s.eof = true
		return info, io.EOF
	default:
		return info, fmt.Errorf("wlog: read at offset %d: %w", info.off, err)
	}
}

// segmentsReader reads a list of segment files in order, opening one file
// at a time. It is a pageSource for Reader (which then knows which segment
// and offset each record comes from) and an io.Reader that presents the
// segments as one stream, padding a short last page of a segment with
// zeros so that the stream stays page aligned. Use one interface or the
// other, not both.
type segmentsReader struct {
	fsys vfs.FS
	segs []segmentRef
	i    int      // index in segs of the segment being read
	f    vfs.File // open file of segs[i], nil if not opened yet
	off  int64    // offset of the next byte to read in segs[i]
	pad  int      // zero bytes still to emit by Read after a short page
}

// NewSegmentsReader returns a reader over all segments in dir, in order.
// Pass it to NewReader: corruption errors then name the segment and offset.
// Segments are opened one at a time as reading reaches them.
func NewSegmentsReader(fsys vfs.FS, dir string) (io.ReadCloser, error) {
	return NewSegmentsRangeReader(fsys, dir, -1, -1)
}

// NewSegmentsRangeReader is like NewSegmentsReader but only reads segments
// with index in [first, last]; -1 leaves that end open.
func NewSegmentsRangeReader(fsys vfs.FS, dir string, first, last int) (io.ReadCloser, error) {
	if first >= 0 && last >= 0 && first > last {
		return nil, fmt.Errorf("%w: first %d > last %d", ErrInvalidRange, first, last)
	}
	refs, err := listSegments(fsys, dir)
	if err != nil {
		return nil, err
	}
	sel := refs[:0]
	for _, r := range refs {
		if (first < 0 || r.index >= first) && (last < 0 || r.index <= last) {
			sel = append(sel, r)
		}
	}
	return &segmentsReader{fsys: fsys, segs: sel}, nil
}

// newMultiSegmentsReader reads the given segments (possibly of several
// directories) in the given order.
func newMultiSegmentsReader(fsys vfs.FS, segs []segmentRef) *segmentsReader {
	return &segmentsReader{fsys: fsys, segs: segs}
}

// open makes sure segs[i] is open; it reports false when all are read.
func (r *segmentsReader) open() (bool, error) {
	if r.f != nil {
		return true, nil
	}
	if r.i >= len(r.segs) {
		return false, nil
	}
	f, err := r.fsys.Open(r.segs[r.i].path())
	if err != nil {
		return false, fmt.Errorf("wlog: open segment: %w", err)
	}
	r.f, r.off = f, 0
	return true, nil
}

// advance closes the current segment and moves to the next one.
func (r *segmentsReader) advance() error {
	err := r.f.Close()
	r.f = nil
	r.i++
	if err != nil {
		return fmt.Errorf("wlog: close segment: %w", err)
	}
	return nil
}

func (r *segmentsReader) nextPage(p *[PageSize]byte) (pageInfo, error) {
	for {
		ok, err := r.open()
		if err != nil {
			return pageInfo{}, err
		}
		if !ok {
			info := pageInfo{seg: -1}
			if len(r.segs) > 0 {
				last := r.segs[len(r.segs)-1]
				info = pageInfo{dir: last.dir, seg: last.index, off: r.off}
			}
			return info, io.EOF
		}
		s := r.segs[r.i]
		n, err := io.ReadFull(r.f, p[:])
		info := pageInfo{dir: s.dir, seg: s.index, off: r.off, n: n}
		r.off += int64(n)
		switch {
		case err == nil:
			return info, nil
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			if aerr := r.advance(); aerr != nil {
				return info, aerr
			}
			if n > 0 {
				return info, nil
			}
		default:
			return info, fmt.Errorf("wlog: read segment %s at offset %d: %w", s.path(), info.off, err)
		}
	}
}

// Read implements io.Reader over the concatenated, page-aligned segments.
func (r *segmentsReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if r.pad > 0 {
		n := min(r.pad, len(b))
		clear(b[:n])
		r.pad -= n
		return n, nil
	}
	for {
		ok, err := r.open()
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, io.EOF
		}
		n, err := r.f.Read(b)
		r.off += int64(n)
		if n > 0 {
			return n, nil
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("wlog: read segment %s: %w", r.segs[r.i].path(), err)
		}
		r.pad = int((PageSize - r.off%PageSize) % PageSize)
		if err := r.advance(); err != nil {
			return 0, err
		}
		if r.pad > 0 {
			return r.Read(b)
		}
	}
}

// Close closes the open segment, if any.
func (r *segmentsReader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	r.i = len(r.segs)
	return err
}
