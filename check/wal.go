package check

import (
	"errors"
	"slices"
	"strconv"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
)

// walCheck is the state of the check of a WAL.
type walCheck struct {
	c   *checker
	sum *WALSummary
	// known holds the series references defined so far (checkpoint
	// first), to find samples of series never defined.
	known map[uint64]struct{}

	dec     record.Decoder
	series  []record.RefSeries
	samples []record.RefSample
	stones  []record.Stone
	meta    []record.RefMetadata
}

// checkWAL checks the WAL in dir: the last checkpoint, then the segments
// after it, as a replay would read them.
func (c *checker) checkWAL(dir string) {
	wc := &walCheck{c: c, sum: &c.rp.rep.WAL, known: map[uint64]struct{}{}}
	wc.sum.Dir = dir
	from := 0
	switch cp, idx, err := wlog.LastCheckpoint(c.fs, dir); {
	case err == nil:
		wc.sum.Checkpoint = cp
		wc.checkCheckpoint(cp)
		from = idx + 1
	case errors.Is(err, wlog.ErrNotFound):
	default:
		c.rp.errorf(dir, -1, "", err, "checkpoints cannot be listed")
	}

	segs, err := listWALSegments(c, dir)
	if err != nil {
		c.rp.errorf(dir, -1, "", err, "segments cannot be listed")
		return
	}
	// Segments up to the checkpoint are leftovers a replay skips; a gap
	// among them loses nothing (the next open removes them).
	i, _ := slices.BinarySearch(segs, from)
	covered := segs[:i]
	for j := 1; j < len(covered); j++ {
		if covered[j] != covered[j-1]+1 {
			c.rp.warnf(dir, -1, "", nil, "segments %d to %d are missing, but the checkpoint covers them", covered[j-1]+1, covered[j]-1)
		}
	}
	segs = segs[i:]
	// The DB opens only a log whose segments run from the one after the
	// checkpoint (0 without one) to the last without a gap; a missing
	// segment lost the records in it (Open fails with ErrWALIncomplete).
	if len(segs) == 0 {
		if from > 0 {
			c.rp.errorf(dir, -1, "", nil, "segment %d (the one after the checkpoint) and any after it are missing", from)
		}
		return
	}
	if segs[0] > from {
		what := "between the checkpoint and the first segment"
		if from == 0 {
			what = "before the first segment, with no checkpoint covering them"
		}
		c.rp.errorf(dir, -1, "", nil, "segments %d to %d, %s, are missing", from, segs[0]-1, what)
	}
	for j := 1; j < len(segs); j++ {
		if segs[j] != segs[j-1]+1 {
			c.rp.errorf(dir, -1, "", nil, "segments %d to %d are missing", segs[j-1]+1, segs[j]-1)
		}
	}
	first, last := segs[0], segs[len(segs)-1]
	wc.sum.FirstSegment, wc.sum.LastSegment = first, last
	for start := first; start <= last; {
		next, done := wc.readSegments(dir, start, last)
		if done {
			return
		}
		start = next
	}
}

// checkCheckpoint reads every record of the checkpoint cp. Checkpoints are
// published whole, so any damage is an error.
func (wc *walCheck) checkCheckpoint(cp string) {
	r, err := wlog.NewSegmentsReader(wc.c.fs, cp)
	if err != nil {
		wc.c.rp.errorf(cp, -1, "", err, "checkpoint does not open")
		return
	}
	defer r.Close()
	rd := wlog.NewReader(r)
	wc.readRecords(rd, cp)
	if err := rd.Err(); err != nil {
		wc.c.rp.fromErr(Error, cp, -1, "", err, "checkpoint is damaged")
	}
}

// readSegments reads segments [start, last] of dir until the end or the
// first damage. It returns the segment to go on with after damage, or done.
func (wc *walCheck) readSegments(dir string, start, last int) (next int, done bool) {
	rp := wc.c.rp
	r, err := wlog.NewSegmentsRangeReader(wc.c.fs, dir, start, last)
	if err != nil {
		rp.errorf(dir, -1, "", err, "segments do not open")
		return 0, true
	}
	defer r.Close()
	rd := wlog.NewReader(r)
	wc.readRecords(rd, dir)
	err = rd.Err()
	_, seg, off, isCorrupt := wlog.CorruptSegment(err)
	switch {
	case err == nil:
		return 0, true
	case isCorrupt && seg >= start:
		path := wlog.SegmentName(dir, seg)
		if wc.recordAfter(dir, seg, off, last) {
			rp.fromErr(Error, path, off, "", err,
				"damaged WAL data followed by valid records: the records from here to the end of the segment are lost")
		} else {
			rp.fromErr(Warning, path, off, "", err,
				"torn tail of the WAL (as a crash while writing leaves it): the next open cuts the log here")
		}
		return seg + 1, seg >= last
	case errors.Is(err, wlog.ErrUnsupportedCompression):
		rp.warnf(dir, -1, "", err, "the rest of the WAL cannot be checked")
		return 0, true
	}
	rp.errorf(dir, -1, "", err, "WAL does not read")
	return 0, true
}

// recordAfter reports whether a valid record follows offset off of
// segment seg, in it or in a later segment up to last.
func (wc *walCheck) recordAfter(dir string, seg int, off int64, last int) bool {
	for s := seg; s <= last; s++ {
		path := wlog.SegmentName(dir, s)
		m, err := wc.c.fs.Map(path)
		if err != nil {
			continue
		}
		from := int64(-1)
		if s == seg {
			from = off
		}
		found := walRecordAfter(m.Bytes(), from)
		_ = m.Close()
		if found {
			return true
		}
	}
	return false
}

// readRecords decodes every record rd yields. src is the directory read,
// for messages.
func (wc *walCheck) readRecords(rd *wlog.Reader, src string) {
	rp := wc.c.rp
	unknownRefs, unknownTypes := 0, 0
	var firstUnknown string
	for rd.Next() {
		rec := rd.Record()
		wc.sum.Records++
		var err error
		switch typ := record.RecordType(rec); typ {
		case record.Series:
			if wc.series, err = wc.dec.Series(rec, wc.series[:0]); err == nil {
				for _, s := range wc.series {
					wc.known[s.Ref] = struct{}{}
				}
				wc.sum.Series += len(wc.series)
				clear(wc.series)
			}
		case record.Samples, record.SamplesV2:
			if wc.samples, err = wc.dec.Samples(rec, wc.samples[:0]); err == nil {
				for _, s := range wc.samples {
					if _, ok := wc.known[s.Ref]; !ok {
						if unknownRefs++; unknownRefs == 1 {
							firstUnknown = wc.where(src, rd)
						}
					}
				}
				wc.sum.Samples += len(wc.samples)
			}
		case record.Tombstones:
			wc.stones, err = wc.dec.Tombstones(rec, wc.stones[:0])
		case record.Metadata:
			// Replay cuts the log at a Metadata record that does not
			// decode, as at any other.
			wc.meta, err = wc.dec.Metadata(rec, wc.meta[:0])
			clear(wc.meta)
		case record.Exemplars:
			// Only decoding is checked: replay skips exemplars of
			// series no record defines, as it skips such samples.
			_, err = wc.dec.Exemplars(rec, nil)
		case record.Unknown:
			unknownTypes++
		}
		if err != nil {
			path, off := src, int64(-1)
			if rd.Segment() >= 0 {
				path, off = wlog.SegmentName(src, rd.Segment()), rd.Offset()
			}
			rp.errorf(path, off, "", err, "the record ending at this offset passed its checksum but does not decode")
		}
	}
	if unknownRefs > 0 {
		rp.warnf(src, -1, "", nil, "%d samples of series no record defines (replay skips them; first in %s)", unknownRefs, firstUnknown)
	}
	if unknownTypes > 0 {
		rp.warnf(src, -1, "", nil, "%d records of unknown type (replay skips them)", unknownTypes)
	}
}

// where names the position of the record rd just returned.
func (wc *walCheck) where(src string, rd *wlog.Reader) string {
	if rd.Segment() < 0 {
		return src
	}
	return wlog.SegmentName(src, rd.Segment()) + " before offset " + strconv.FormatInt(rd.Offset(), 10)
}

// listWALSegments returns the indexes of the segment files in dir, sorted.
func listWALSegments(c *checker, dir string) ([]int, error) {
	ents, err := c.fs.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []int
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !isDigits(name) || len(name) > 9 {
			continue
		}
		k, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		segs = append(segs, k)
	}
	slices.Sort(segs)
	return segs, nil
}
