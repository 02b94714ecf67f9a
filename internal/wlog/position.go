package wlog

import (
	"errors"
	"fmt"
	"math"
)

// Position is a place in a log: the byte offset Offset in segment Segment.
// Positions order the records of a log: a record lies before p if it ends
// at or before p (see Before). Records of a checkpoint have no byte offset
// of their own; a checkpoint of segments up to N stands for "the end of
// segment N" (EndOf(N)).
type Position struct {
	Segment int
	Offset  int64
}

// EndOf returns the position of the end of segment seg, after every record
// in it.
func EndOf(seg int) Position { return Position{Segment: seg, Offset: math.MaxInt64} }

// Compare returns -1, 0 or +1 as p is before, at or after q.
func (p Position) Compare(q Position) int {
	switch {
	case p.Segment < q.Segment:
		return -1
	case p.Segment > q.Segment:
		return 1
	case p.Offset < q.Offset:
		return -1
	case p.Offset > q.Offset:
		return 1
	}
	return 0
}

// Before reports whether a record ending at end (a Reader's Segment and
// Offset after Next) lies before p: a record never straddles a position
// that Position returned, so it ends at or before p, or after it.
func (p Position) Before(end Position) bool { return end.Compare(p) <= 0 }

// Position returns the position just after the last record logged: every
// record a Log call that returned before it wrote ends at or before it, and
// every record a later Log writes ends after it (within one log history:
// see StartAfter). Taken with the lock held, so it is ordered with Log
// calls as LogAfter's first is.
func (w *WL) Position() (Position, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkWritableLocked(); err != nil {
		return Position{}, err
	}
	return Position{Segment: w.segIdx, Offset: int64(w.donePages*PageSize + w.page.alloc)}, nil
}

// maxSkip bounds StartAfter: a log more than this many segments behind the
// position it must start after is not padded (each empty segment costs a
// file and a directory sync; the owner has another way out).
const maxSkip = 1024

// ErrTooFarBehind is returned by StartAfter when the log is too far behind.
var ErrTooFarBehind = errors.New("wlog: the log is too far behind the position")

// StartAfter makes sure every record logged from now on lies after the end
// of segment seg. A log whose active segment is seg or below (its segments
// after that were lost, deleted or cut by Repair, so its numbering went
// back) and holds nothing yet gets empty segments up to seg and a new
// active segment seg+1; the empty segments keep the numbering without a
// gap. Meant for right after Open (and Repair), before anything is logged:
// if records were logged into the active segment already it returns an
// error and changes nothing. More than maxSkip segments behind, it returns
// ErrTooFarBehind and changes nothing.
func (w *WL) StartAfter(seg int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkWritableLocked(); err != nil {
		return err
	}
	if w.segIdx > seg {
		return nil
	}
	if seg-w.segIdx >= maxSkip {
		return fmt.Errorf("%w: active segment %d, position in segment %d", ErrTooFarBehind, w.segIdx, seg)
	}
	if w.donePages > 0 || w.page.alloc > 0 {
		return fmt.Errorf("wlog: StartAfter after records were logged into segment %d", w.segIdx)
	}
	for w.segIdx <= seg {
		if err := w.cutLocked(); err != nil {
			return w.failLocked(err)
		}
	}
	return nil
}
