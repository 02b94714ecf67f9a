package wlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/golang/snappy"
)

// Log appends the records, in order, as one uninterrupted run: the lock is
// held for the whole call, so the records of one call are contiguous in the
// log. The bytes reach the segment file before Log returns; under
// SyncEveryLog they are also fsynced. An empty record is valid.
//
// On error the WL is failed (see WL): the returned error wraps
// ErrWriteFailed and the cause, and every later Log returns the same error.
func (w *WL) Log(recs ...[]byte) error {
	return w.LogAfter(nil, recs...)
}

// LogAfter is Log calling first, if not nil, once the log is known to be
// writable, with the lock held, just before the records are written: what
// first does is ordered with the records' place in the log (it happens
// before every later Log, NextSegment or Segments call returns, and after
// every earlier one). first is not called if LogAfter returns an error
// before writing (the WL is closed or failed). first must not call the WL.
func (w *WL) LogAfter(first func(), recs ...[]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkWritableLocked(); err != nil {
		return err
	}
	if first != nil {
		first()
	}
	if len(recs) == 0 {
		return nil
	}
	for _, rec := range recs {
		if err := w.logLocked(rec); err != nil {
			return w.failLocked(err)
		}
	}
	if w.page.flushed < w.page.alloc {
		if err := w.flushLocked(false); err != nil {
			return w.failLocked(err)
		}
	}
	if w.opts.Sync == SyncEveryLog {
		if err := w.fsync(w.seg); err != nil {
			return w.failLocked(err)
		}
	}
	return nil
}

// spaceLeftLocked returns how many record bytes still fit in the active
// segment: the rest of the active page and every page after it up to the
// segment size, each minus one fragment header. It is negative once a
// segment has grown past its size (for an oversized record).
func (w *WL) spaceLeftLocked() int {
	pagesAfter := w.opts.SegmentSize/PageSize - w.donePages - 1
	return (PageSize - w.page.alloc - headerSize) + pagesAfter*(PageSize-headerSize)
}

// logLocked compresses rec if configured and writes it as fragments into
// the page buffer, writing out every page it completes.
func (w *WL) logLocked(rec []byte) error {
	enc, flags := rec, byte(0)
	if w.opts.Compression == CompressionSnappy && len(rec) > 0 {
		if n := snappy.MaxEncodedLen(len(rec)); n > 0 {
			if cap(w.cbuf) < n {
				w.cbuf = make([]byte, n)
			}
			if c := snappy.Encode(w.cbuf[:n], rec); len(c) < len(rec) {
				enc, flags = c, flagSnappy
			}
		}
	}
	// Records never span segments. An empty segment is not cut: a record
	// that does not fit an empty segment gets an oversized one.
	if len(enc) > w.spaceLeftLocked() && (w.donePages > 0 || w.page.alloc > 0) {
		if err := w.cutLocked(); err != nil {
			return err
		}
	}
	p := &w.page
	for first := true; ; first = false {
		room := PageSize - p.alloc - headerSize
		if room == 0 && len(enc) > 0 {
			// Exactly a header's worth left: rather than an empty first
			// fragment, pad the page and start in the next one.
			if err := w.flushLocked(true); err != nil {
				return err
			}
			room = PageSize - headerSize
		}
		n := min(len(enc), room)
		part := enc[:n]
		enc = enc[n:]
		var kind byte
		switch {
		case first && len(enc) == 0:
			kind = fragFull
		case first:
			kind = fragFirst
		case len(enc) == 0:
			kind = fragLast
		default:
			kind = fragMiddle
		}
		hdr := p.buf[p.alloc : p.alloc+headerSize]
		hdr[0] = kind | flags
		binary.BigEndian.PutUint16(hdr[1:], uint16(n))
		binary.BigEndian.PutUint32(hdr[3:], crc32.Checksum(part, castagnoli))
		copy(p.buf[p.alloc+headerSize:], part)
		p.alloc += headerSize + n
		if PageSize-p.alloc < headerSize {
			if err := w.flushLocked(true); err != nil {
				return err
			}
		}
		if len(enc) == 0 {
			return nil
		}
	}
}

// flushLocked writes the unwritten part of the active page to the segment.
// With complete, it first zero-pads the page to its end and then starts a
// new page. A failed write leaves flushed at what was written; the caller
// fails the WL.
func (w *WL) flushLocked(complete bool) error {
	p := &w.page
	end := p.alloc
	if complete {
		clear(p.buf[p.alloc:])
		end = PageSize
	}
	n, err := w.seg.Write(p.buf[p.flushed:end])
	p.flushed += n
	w.metrics.pageFlushes.Inc()
	w.metrics.bytesWritten.Add(float64(n))
	if err != nil {
		return fmt.Errorf("wlog: write %s: %w", w.seg.Name(), err)
	}
	if complete {
		p.alloc, p.flushed = 0, 0
		w.donePages++
		w.metrics.completedPages.Inc()
	}
	return nil
}
