package wlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// Repair fixes the log after reading it ended in origErr, which must be (or
// wrap) a *corrupt.Error for a segment of this log (see CorruptSegment). It keeps every whole
// record of the damaged segment that ends at or before the corruption
// offset, truncates the segment after the last of them (zero-padding its
// last page), deletes every later segment (the active one included: the
// records after a corruption cannot be trusted to be complete or in order),
// and starts a new active segment after the repaired one. What is dropped
// is logged as a warning.
//
// Repair is meant to be called right after Open and the replay that found
// the corruption, before anything is logged. An error wrapping
// ErrCannotRepair means origErr was not something Repair can act on and
// nothing was changed; any other error fails the WL.
func (w *WL) Repair(origErr error) error {
	var ce *corrupt.Error
	if !errors.As(origErr, &ce) {
		return fmt.Errorf("%w: not a corruption error: %w", ErrCannotRepair, origErr)
	}
	dir, seg, off, ok := CorruptSegment(origErr)
	if !ok {
		return fmt.Errorf("%w: corruption error names no segment: %w", ErrCannotRepair, origErr)
	}
	if filepath.Clean(dir) != w.dir {
		return fmt.Errorf("%w: corruption is in %s, not in this log: %w", ErrCannotRepair, dir, origErr)
	}
	cerr := segmentDamage{seg: seg, off: off, err: ce.Err}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkWritableLocked(); err != nil {
		return err
	}
	if cerr.seg > w.segIdx {
		return fmt.Errorf("%w: segment %d is after the active segment %d", ErrCannotRepair, cerr.seg, w.segIdx)
	}
	refs, err := listSegments(w.fsys, w.dir)
	if err != nil {
		return err
	}
	if len(refs) == 0 || cerr.seg < refs[0].index {
		return fmt.Errorf("%w: segment %d does not exist", ErrCannotRepair, cerr.seg)
	}
	// Find the cut point before changing anything.
	keep, err := w.wholeRecordsEnd(cerr.seg, cerr.off)
	if err != nil {
		return err
	}
	if err := w.repairLocked(refs, cerr, keep); err != nil {
		return w.failLocked(err)
	}
	w.metrics.corruptionsRepaired.Inc()
	return nil
}

// wholeRecordsEnd reads segment seg and returns the offset just past the
// last whole record that ends at or before limit.
func (w *WL) wholeRecordsEnd(seg int, limit int64) (int64, error) {
	sr := newMultiSegmentsReader(w.fsys, []segmentRef{{dir: w.dir, index: seg}})
	defer sr.Close()
	r := NewReader(sr)
	var end int64
	for r.Next() {
		if r.Offset() > limit {
			break
		}
		end = r.Offset()
	}
	var ce *corrupt.Error
	if err := r.Err(); err != nil && !errors.As(err, &ce) {
		// An I/O error (or an unsupported record) before the limit:
		// do not guess.
		return 0, fmt.Errorf("wlog: repair: re-read segment %d: %w", seg, err)
	}
	return end, nil
}

// segmentDamage is where Repair cuts: the damaged segment, the offset of
// the damage in it, and what is wrong.
type segmentDamage struct {
	seg int
	off int64
	err error
}

// repairLocked does the destructive part of Repair.
func (w *WL) repairLocked(refs []segmentRef, cerr segmentDamage, keep int64) error {
	// Retire the active segment: it is either deleted below or, if it is
	// the damaged one, reopened for truncation.
	w.bg.Wait()
	if w.page.alloc > 0 {
		if err := w.flushLocked(true); err != nil {
			return err
		}
	}
	if err := w.seg.Close(); err != nil {
		return fmt.Errorf("wlog: repair: close active segment: %w", err)
	}
	w.seg = nil

	// Later segments go first (durably): if a crash interrupts the repair,
	// the next open finds the same corruption again rather than records
	// that follow a hole.
	for _, r := range refs {
		if r.index <= cerr.seg {
			continue
		}
		if err := w.fsys.Remove(r.path()); err != nil {
			return fmt.Errorf("wlog: repair: delete later segment: %w", err)
		}
		w.logger.Warn("wlog: deleted segment after corruption", "segment", r.path())
	}
	if err := w.fsys.SyncDir(w.dir); err != nil {
		return fmt.Errorf("wlog: repair: sync log dir: %w", err)
	}
	name := SegmentName(w.dir, cerr.seg)
	f, err := w.fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("wlog: repair: %w", err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		err = truncateAndPad(f, keep)
	}
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("wlog: repair: truncate %s: %w", name, err)
	}
	w.logger.Warn("wlog: truncated corrupt segment",
		"segment", name, "corruption_offset", cerr.off, "kept_bytes", keep,
		"dropped_bytes", size-keep, "cause", cerr.err)

	next, err := w.createSegment(cerr.seg + 1)
	if err != nil {
		return err
	}
	w.setSegmentLocked(next, cerr.seg+1)
	return nil
}

// truncateAndPad cuts f to size and appends zeros up to the next page
// boundary, so the segment ends in a whole, padded page.
func truncateAndPad(f interface {
	Truncate(int64) error
	io.WriteSeeker
}, size int64) error {
	if err := f.Truncate(size); err != nil {
		return err
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		return err
	}
	pad := (PageSize - size%PageSize) % PageSize
	if pad == 0 {
		return nil
	}
	_, err := f.Write(make([]byte, pad))
	return err
}
