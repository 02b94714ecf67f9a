package wlog

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/vfs"
)

const (
	checkpointPrefix = "checkpoint."
	tmpSuffix        = ".tmp"

	// checkpointBatchSize is how many encoded bytes Checkpoint gathers
	// before logging them in one call: big enough to amortise the call,
	// small enough not to matter for memory.
	checkpointBatchSize = 1 << 20

	// checkpointMetadataBatch is how many series one Metadata record of a
	// checkpoint holds, so that a head of millions of series does not
	// make one record of hundreds of megabytes.
	checkpointMetadataBatch = 1000
)

// CheckpointStats counts what Checkpoint read and what it dropped.
type CheckpointStats struct {
	DroppedSeries     int
	DroppedSamples    int
	DroppedTombstones int // intervals, not records
	DroppedMetadata   int // metadata entries of dropped series, or replaced by a later entry
	DroppedExemplars  int // exemplars of dropped series, or before the checkpoint's mint
	DroppedRecords    int // records of types other than series, samples, tombstones, metadata and exemplars
	TotalSeries       int // series read, dropped ones included
	TotalSamples      int // samples read, dropped ones included
	TotalTombstones   int // tombstone intervals read, dropped ones included
	TotalMetadata     int // metadata entries read, dropped ones included
	TotalExemplars    int // exemplars read, dropped ones included
}

// checkpointName returns the directory name of checkpoint i.
func checkpointName(i int) string { return fmt.Sprintf(checkpointPrefix+"%08d", i) }

// checkpointRef names one checkpoint directory.
type checkpointRef struct {
	name  string
	index int
}

// listCheckpoints returns the finished checkpoints in dir by index.
// Temporary directories of unfinished checkpoints are not included.
func listCheckpoints(fsys vfs.FS, dir string) ([]checkpointRef, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wlog: list checkpoints: %w", err)
	}
	var refs []checkpointRef
	for _, e := range entries {
		name := e.Name()
		k, ok := checkpointIndex(name)
		if !ok {
			continue
		}
		if !e.IsDir() {
			return nil, fmt.Errorf("wlog: checkpoint %s is not a directory: %w", filepath.Join(dir, name), syscall.ENOTDIR)
		}
		refs = append(refs, checkpointRef{name: name, index: k})
	}
	slices.SortFunc(refs, func(a, b checkpointRef) int { return a.index - b.index })
	return refs, nil
}

// LastCheckpoint returns the path and index of the newest checkpoint in the
// log directory dir, or an error wrapping ErrNotFound if there is none.
func LastCheckpoint(fsys vfs.FS, dir string) (name string, idx int, err error) {
	refs, err := listCheckpoints(fsys, dir)
	if err != nil {
		return "", 0, err
	}
	if len(refs) == 0 {
		return "", 0, fmt.Errorf("%w: no checkpoint in %s", ErrNotFound, dir)
	}
	last := refs[len(refs)-1]
	return filepath.Join(dir, last.name), last.index, nil
}

// DeleteCheckpoints deletes the checkpoints in dir with an index below
// maxIndex. It tries all of them and returns the errors joined.
func DeleteCheckpoints(fsys vfs.FS, dir string, maxIndex int) error {
	refs, err := listCheckpoints(fsys, dir)
	if err != nil {
		return err
	}
	var errs []error
	removed := false
	for _, r := range refs {
		if r.index >= maxIndex {
			break
		}
		if err := fsys.RemoveAll(filepath.Join(dir, r.name)); err != nil {
			errs = append(errs, fmt.Errorf("wlog: delete checkpoint: %w", err))
			continue
		}
		removed = true
	}
	if removed {
		if err := fsys.SyncDir(dir); err != nil {
			errs = append(errs, fmt.Errorf("wlog: delete checkpoints: sync dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

// removeTempCheckpoints deletes the temporary directories of checkpoints
// that did not finish (a crash, or an error that could not clean up).
func removeTempCheckpoints(logger *slog.Logger, fsys vfs.FS, dir string) error {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("wlog: list log dir: %w", err)
	}
	for _, e := range entries {
		if isTempCheckpoint(e) {
			p := filepath.Join(dir, e.Name())
			if err := fsys.RemoveAll(p); err != nil {
				return fmt.Errorf("wlog: remove unfinished checkpoint: %w", err)
			}
			logger.Info("wlog: removed unfinished checkpoint", "dir", p)
		}
	}
	return nil
}

func isTempCheckpoint(e fs.DirEntry) bool {
	return strings.HasPrefix(e.Name(), checkpointPrefix) && strings.HasSuffix(e.Name(), tmpSuffix)
}

// Checkpoint writes the records of segments [from, to] of w that are still
// needed (a nil keep keeps every series), together with those of the newest existing checkpoint, into a new
// checkpoint dir/checkpoint.<to>. It keeps:
//
//   - series for which keep(ref) is true;
//   - samples of kept series with T >= mint;
//   - tombstone intervals of kept series that end at or after mint (those
//     ending before mint only cover samples the checkpoint no longer has);
//   - exemplars of kept series with T >= mint (as Prometheus keeps them:
//     the head's exemplar storage outlives the samples' truncation);
//   - the last metadata entry of each kept series, written after
//     everything else, in Metadata records ordered by ref.
//
// Records of any other type are dropped. The checkpoint is written to
// checkpoint.<to>.tmp, fsynced, renamed into place and the rename made
// durable, so after a crash either the complete checkpoint or none exists
// (a leftover .tmp directory is ignored, and removed by Open and the next
// Checkpoint). When an earlier checkpoint exists, from is raised to the
// segment after it; a gap between it and from is an error.
//
// Segment to must be below the active segment (call w.NextSegment first if
// needed). Afterwards the caller deletes segments <= to with w.Truncate(to+1) and
// older checkpoints with DeleteCheckpoints(fsys, w.Dir(), to). Checkpoint
// may run while w is logging; it must not run concurrently with itself,
// Truncate or DeleteCheckpoints on the same log. Damage in the segments
// read is returned as an error (not repaired): a checkpoint that silently
// lost series would be worse than none.
func Checkpoint(logger *slog.Logger, fsys vfs.FS, w *WL, from, to int, keep func(ref uint64) bool, mint int64) (*CheckpointStats, error) {
	if keep == nil {
		keep = func(uint64) bool { return true }
	}
	return CheckpointFrom(logger, fsys, w, from, to, func(ref uint64) (int64, bool) { return mint, keep(ref) })
}

// CheckpointFrom is Checkpoint with a time bound per series: mintOf(ref)
// returns whether the series is kept and, if so, the time from which its
// samples (and the tombstone intervals ending at or after it) are.
func CheckpointFrom(logger *slog.Logger, fsys vfs.FS, w *WL, from, to int, mintOf func(ref uint64) (mint int64, keep bool)) (*CheckpointStats, error) {
	return CheckpointMarked(logger, fsys, w, from, to, mintOf, nil)
}

// Mark says that the samples logged before Position with a time before
// MaxTime are not needed (the owner has them elsewhere).
type Mark struct {
	Position Position
	MaxTime  int64
}

// CheckpointMarked is CheckpointFrom that also drops, if mark is not nil,
// the samples of records that lie before mark.Position with a time before
// mark.MaxTime, whatever mintOf says. The records of the previous
// checkpoint stand at its end (EndOf its index), the others where they
// end in their segment.
func CheckpointMarked(logger *slog.Logger, fsys vfs.FS, w *WL, from, to int, mintOf func(ref uint64) (mint int64, keep bool), mark *Mark) (*CheckpointStats, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if from > to {
		return nil, fmt.Errorf("%w: checkpoint from %d to %d", ErrInvalidRange, from, to)
	}
	dir := w.Dir()
	w.mu.Lock()
	active, closed := w.segIdx, w.closed
	w.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if to >= active {
		return nil, fmt.Errorf("%w: checkpoint up to %d includes the active segment %d", ErrInvalidRange, to, active)
	}
	var segs []segmentRef
	prevName, prevIdx, err := LastCheckpoint(fsys, dir)
	// at returns where a record read from segs ends, for mark.
	at := func(r *Reader) Position {
		if r.recDir != dir {
			return EndOf(prevIdx)
		}
		return Position{Segment: r.Segment(), Offset: r.Offset()}
	}
	switch {
	case err == nil:
		if to <= prevIdx {
			return nil, fmt.Errorf("%w: checkpoint %d already covers segment %d", ErrInvalidRange, prevIdx, to)
		}
		if from > prevIdx+1 {
			return nil, fmt.Errorf("%w: checkpoint %d is followed by a gap to segment %d", ErrInvalidRange, prevIdx, from)
		}
		from = prevIdx + 1
		prev, err := listSegments(fsys, prevName)
		if err != nil {
			return nil, err
		}
		segs = append(segs, prev...)
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	walSegs, err := listSegments(fsys, dir)
	if err != nil {
		return nil, err
	}
	for _, s := range walSegs {
		if s.index >= from && s.index <= to {
			segs = append(segs, s)
		}
	}
	if len(walSegs) == 0 || walSegs[0].index > from || walSegs[len(walSegs)-1].index < to {
		return nil, fmt.Errorf("%w: segments %d..%d are not all in %s", ErrInvalidRange, from, to, dir)
	}

	logger.Info("wlog: creating checkpoint", "from_segment", from, "to_segment", to)
	if err := removeTempCheckpoints(logger, fsys, dir); err != nil {
		return nil, err
	}
	final := filepath.Join(dir, checkpointName(to))
	tmp := final + tmpSuffix
	if err := fsys.MkdirAll(tmp, 0o777); err != nil {
		return nil, fmt.Errorf("wlog: create checkpoint dir: %w", err)
	}
	cp, err := Open(nil, nil, fsys, tmp, Options{SegmentSize: w.opts.SegmentSize, Compression: w.opts.Compression})
	if err != nil {
		_ = fsys.RemoveAll(tmp)
		return nil, fmt.Errorf("wlog: open checkpoint: %w", err)
	}
	stats, err := copyNeeded(fsys, segs, cp, mintOf, mark, at)
	if cerr := cp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("wlog: close checkpoint: %w", cerr)
	}
	if err == nil {
		err = publishDir(fsys, tmp, final)
	}
	if err != nil {
		_ = fsys.RemoveAll(tmp) // best effort; Open and the next Checkpoint retry
		return nil, err
	}
	return stats, nil
}

// publishDir makes the finished directory tmp durable and renames it to
// final, making the rename durable too.
func publishDir(fsys vfs.FS, tmp, final string) error {
	if err := fsys.SyncDir(tmp); err != nil {
		return fmt.Errorf("wlog: sync checkpoint dir: %w", err)
	}
	if err := fsys.Rename(tmp, final); err != nil {
		return fmt.Errorf("wlog: rename checkpoint dir: %w", err)
	}
	if err := syncParent(fsys, final); err != nil {
		return fmt.Errorf("wlog: sync log dir after checkpoint: %w", err)
	}
	return nil
}

// copyNeeded reads segs and logs what the checkpoint keeps into cp. at
// says where a record ends, for mark (nil: none).
func copyNeeded(fsys vfs.FS, segs []segmentRef, cp *WL, mintOf func(uint64) (int64, bool), mark *Mark, at func(*Reader) Position) (*CheckpointStats, error) {
	keep := func(ref uint64) bool { _, ok := mintOf(ref); return ok }
	// marked: the current record lies before mark's position.
	marked := false
	// before reports whether a sample of ref at t is not kept (tombstones
	// are kept as mintOf says: the mark is about samples).
	bound := func(ref uint64, t int64) bool { m, ok := mintOf(ref); return !ok || t < m }
	before := func(ref uint64, t int64) bool { return marked && t < mark.MaxTime || bound(ref, t) }
	sr := newMultiSegmentsReader(fsys, segs)
	defer sr.Close()
	r := NewReader(sr)

	var (
		stats   CheckpointStats
		dec     record.Decoder
		enc     record.Encoder
		samples []record.RefSample
		stones  []record.Stone
		exs     []record.RefExemplar
		hists   []record.RefHistogramSample
		fhists  []record.RefFloatHistogramSample
		meta    []record.RefMetadata
		buf     []byte   // encoded records of the batch, back to back
		recs    [][]byte // the records of the batch, slices of buf
		err     error
		// lastMeta is the last metadata entry read of each kept series.
		lastMeta = map[uint64]record.RefMetadata{}
	)
	for r.Next() {
		rec := r.Record()
		start := len(buf)
		marked = mark != nil && mark.Position.Before(at(r))
		switch record.RecordType(rec) {
		case record.Series:
			// The kept entries are copied as they are: no label set is
			// built for the series of the whole head.
			var n, kept int
			buf, n, kept, err = dec.FilterSeries(rec, keep, buf)
			if err != nil {
				return nil, fmt.Errorf("wlog: checkpoint: segment %d: %w", r.Segment(), err)
			}
			stats.TotalSeries += n
			stats.DroppedSeries += n - kept
		case record.Samples, record.SamplesV2:
			samples, err = dec.Samples(rec, samples[:0])
			if err != nil {
				return nil, fmt.Errorf("wlog: checkpoint: segment %d: %w", r.Segment(), err)
			}
			n := len(samples)
			kept := slices.DeleteFunc(samples, func(s record.RefSample) bool { return before(s.Ref, s.T) })
			stats.TotalSamples += n
			stats.DroppedSamples += n - len(kept)
			switch {
			case len(kept) == 0:
			case len(kept) == n:
				buf = append(buf, rec...) // all kept: the record as it is
			case slices.ContainsFunc(kept, func(s record.RefSample) bool { return s.ST != 0 }):
				buf = enc.SamplesV2(kept, buf)
			default:
				buf = enc.Samples(kept, buf)
			}
		case record.HistogramSamples, record.CustomBucketsHistogramSamples, record.HistogramSamplesV2:
			hists, err = dec.HistogramSamples(rec, hists[:0])
			if err != nil {
				return nil, fmt.Errorf("wlog: checkpoint: segment %d: %w", r.Segment(), err)
			}
			n := len(hists)
			kept := slices.DeleteFunc(hists, func(s record.RefHistogramSample) bool { return before(s.Ref, s.T) })
			stats.TotalSamples += n
			stats.DroppedSamples += n - len(kept)
			if len(kept) == n && n > 0 {
				buf = append(buf, rec...) // all kept: the record as it is
			} else if slices.ContainsFunc(kept, func(s record.RefHistogramSample) bool { return s.ST != 0 }) {
				buf = enc.HistogramSamplesV2(kept, buf)
			} else if len(kept) > 0 {
				var custom []record.RefHistogramSample
				buf, custom = enc.HistogramSamples(kept, buf)
				if len(buf) > start {
					recs = append(recs, buf[start:])
					start = len(buf)
				}
				if len(custom) > 0 {
					buf = enc.CustomBucketsHistogramSamples(custom, buf)
				}
			}
		case record.FloatHistogramSamples, record.CustomBucketsFloatHistogramSamples, record.FloatHistogramSamplesV2:
			fhists, err = dec.FloatHistogramSamples(rec, fhists[:0])
			if err != nil {
				return nil, fmt.Errorf("wlog: checkpoint: segment %d: %w", r.Segment(), err)
			}
			n := len(fhists)
			kept := slices.DeleteFunc(fhists, func(s record.RefFloatHistogramSample) bool { return before(s.Ref, s.T) })
			stats.TotalSamples += n
			stats.DroppedSamples += n - len(kept)
			if len(kept) == n && n > 0 {
				buf = append(buf, rec...) // all kept: the record as it is
			} else if slices.ContainsFunc(kept, func(s record.RefFloatHistogramSample) bool { return s.ST != 0 }) {
				buf = enc.FloatHistogramSamplesV2(kept, buf)
			} else if len(kept) > 0 {
				var custom []record.RefFloatHistogramSample
				buf, custom = enc.FloatHistogramSamples(kept, buf)
				if len(buf) > start {
					recs = append(recs, buf[start:])
					start = len(buf)
				}
				if len(custom) > 0 {
					buf = enc.CustomBucketsFloatHistogramSamples(custom, buf)
				}
			}
		case record.Tombstones:
			stones, err = dec.Tombstones(rec, stones[:0])
			if err != nil {
				return nil, fmt.Errorf("wlog: checkpoint: segment %d: %w", r.Segment(), err)
			}
			n := len(stones)
			kept := slices.DeleteFunc(stones, func(s record.Stone) bool {
				return len(s.Intervals) == 0 || bound(s.Ref, s.Intervals[0].Maxt)
			})
			stats.TotalTombstones += n
			stats.DroppedTombstones += n - len(kept)
			switch {
			case len(kept) == 0:
			case len(kept) == n:
				buf = append(buf, rec...)
			default:
				buf = enc.Tombstones(kept, buf)
			}
		case record.Metadata:
			meta, err = dec.Metadata(rec, meta[:0])
			if err != nil {
				return nil, fmt.Errorf("wlog: checkpoint: segment %d: %w", r.Segment(), err)
			}
			stats.TotalMetadata += len(meta)
			for _, m := range meta {
				if _, ok := lastMeta[m.Ref]; ok || !keep(m.Ref) {
					stats.DroppedMetadata++ // replaced, or of a dropped series
				}
				if keep(m.Ref) {
					lastMeta[m.Ref] = m
				}
			}
		case record.Exemplars:
			exs, err = dec.Exemplars(rec, exs[:0])
			if err != nil {
				return nil, fmt.Errorf("wlog: checkpoint: segment %d: %w", r.Segment(), err)
			}
			n := len(exs)
			kept := slices.DeleteFunc(exs, func(e record.RefExemplar) bool { return bound(e.Ref, e.T) })
			stats.TotalExemplars += n
			stats.DroppedExemplars += n - len(kept)
			switch {
			case len(kept) == 0:
			case len(kept) == n:
				buf = append(buf, rec...)
			default:
				buf = enc.Exemplars(kept, buf)
			}
			clear(exs[:n]) // drop label references
		default:
			stats.DroppedRecords++
		}
		if len(buf) > start {
			recs = append(recs, buf[start:])
		}
		if len(buf) >= checkpointBatchSize {
			if err := cp.Log(recs...); err != nil {
				return nil, fmt.Errorf("wlog: checkpoint: %w", err)
			}
			buf, recs = buf[:0], recs[:0]
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("wlog: checkpoint: read segments: %w", err)
	}
	if err := logMetadata(cp, lastMeta, meta[:0], buf, recs); err != nil {
		return nil, err
	}
	return &stats, nil
}

// logMetadata logs into cp the records recs (slices of buf) not logged
// yet, then the entries of last, ordered by ref, in Metadata records of up
// to checkpointMetadataBatch entries each, in calls of about
// checkpointBatchSize bytes. scratch is reused.
func logMetadata(cp *WL, last map[uint64]record.RefMetadata, scratch []record.RefMetadata, buf []byte, recs [][]byte) error {
	var enc record.Encoder
	refs := slices.Sorted(maps.Keys(last))
	for len(refs) > 0 {
		n := min(len(refs), checkpointMetadataBatch)
		scratch = scratch[:0]
		for _, ref := range refs[:n] {
			scratch = append(scratch, last[ref])
		}
		refs = refs[n:]
		start := len(buf)
		buf = enc.Metadata(scratch, buf)
		recs = append(recs, buf[start:])
		if len(buf) >= checkpointBatchSize {
			if err := cp.Log(recs...); err != nil {
				return fmt.Errorf("wlog: checkpoint: %w", err)
			}
			buf, recs = buf[:0], recs[:0]
		}
	}
	if err := cp.Log(recs...); err != nil {
		return fmt.Errorf("wlog: checkpoint: %w", err)
	}
	return nil
}

// checkpointIndex parses the index out of a checkpoint directory name.
func checkpointIndex(name string) (int, bool) {
	if !strings.HasPrefix(name, checkpointPrefix) {
		return 0, false
	}
	return parseSegmentName(name[len(checkpointPrefix):])
}

// CheckpointName returns the path of checkpoint i in the log directory
// dir.
func CheckpointName(dir string, i int) string { return filepath.Join(dir, checkpointName(i)) }

// CreateEmptyCheckpoint publishes an empty checkpoint i in the log
// directory dir (through a temporary directory, renamed into place, as
// Checkpoint does). It records that the log's state up to segment i is
// nothing: for an owner that accepts the loss of segments [0, i] it makes
// the log look as if they had been checkpointed and deleted.
func CreateEmptyCheckpoint(fsys vfs.FS, dir string, i int) error {
	final := CheckpointName(dir, i)
	tmp := final + tmpSuffix
	if err := fsys.MkdirAll(tmp, 0o777); err != nil {
		return fmt.Errorf("wlog: create checkpoint dir: %w", err)
	}
	if err := publishDir(fsys, tmp, final); err != nil {
		return errors.Join(err, fsys.RemoveAll(tmp))
	}
	return nil
}
