package remote

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/prometheus/prometheus/prompb"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	isolabels "github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
	"github.com/isotsdb/tsdb/vfs"
)

// errSkip makes the reader stop queueing and skip ahead (keep.go).
var errSkip = errors.New("remote: skipping ahead")

// errPastTarget stops a series-only scan at the resume position.
var errPastTarget = errors.New("remote: past the resume position")

// read is the reader goroutine: it rebuilds the series map up to the
// acknowledged position, then tails the WAL from there until ctx ends.
func (s *Sender) read(ctx context.Context) {
	cur := s.catchUp(ctx)
	for ctx.Err() == nil {
		s.maybeReshard(ctx)
		if skip := int(s.skipTo.Load()); skip > cur.Segment {
			cur = s.skipAhead(ctx, cur, skip)
			continue
		}
		s.metrics.walSegment.Set(float64(cur.Segment))
		path := wlog.SegmentName(s.walDir, cur.Segment)
		off, err := readSegment(path, cur.Offset, s.sendRecord(ctx, cur.Segment, cur.Offset))
		if err == nil || errors.Is(err, errTornTail) {
			// If a newer segment exists, a group this read ended inside
			// may go on there: the second read below decides.
			cur.Offset = off
		} else {
			cur = s.endRead(cur, off)
		}
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errSkip):
			continue
		case err == nil || errors.Is(err, errTornTail):
			segs := s.listSegments()
			i, _ := slices.BinarySearch(segs, cur.Segment+1)
			if i == len(segs) {
				cur = s.endRead(cur, cur.Offset)
				s.wait(ctx) // at the end of the newest segment: tail it
				continue
			}
			// A newer segment exists, so this one is complete; what the
			// first read missed was written before the new one began.
			off, err = readSegment(path, cur.Offset, s.sendRecord(ctx, cur.Segment, cur.Offset))
			cur.Offset = off
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errSkip) {
				continue
			}
			if errNotExist(err) {
				cur = s.lost(cur)
				continue
			}
			if err != nil {
				s.logger.Error("remote write: damaged WAL segment, skipping its rest", "segment", cur.Segment, "offset", off, "err", err)
				s.group = commitGroup{} // a group torn by the damage is lost
			}
			// A group still open goes on in the next segment.
			if gap := segs[i] - cur.Segment - 1; gap > 0 {
				s.metrics.segmentsLost.Add(float64(gap))
				s.logger.Warn("remote write: WAL segments missing", "from", cur.Segment+1, "to", segs[i]-1)
			}
			cur = wlog.Position{Segment: segs[i]}
			s.gcSeries(cur.Segment)
		case errNotExist(err):
			segs := s.listSegments()
			if len(segs) == 0 || cur.Segment > segs[len(segs)-1] {
				s.wait(ctx) // not created yet
				continue
			}
			cur = s.lost(cur)
		default:
			s.logger.Error("remote write: reading WAL", "segment", cur.Segment, "err", err)
			s.wait(ctx)
		}
	}
}

// wait sleeps for a poll interval, or until Notify or ctx ends.
func (s *Sender) wait(ctx context.Context) {
	t := time.NewTimer(s.cfg.PollInterval)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.notify:
	case <-ctx.Done():
	}
}

// listSegments returns the WAL's segment indexes (nil on error, which is
// logged) and records the newest for KeepWALFrom.
func (s *Sender) listSegments() []int {
	segs, err := wlog.SegmentIndexes(vfs.OS(), s.walDir)
	if err != nil {
		s.logger.Error("remote write: listing WAL segments", "err", err)
		return nil
	}
	if len(segs) > 0 {
		s.newestSeg.Store(int64(segs[len(segs)-1]))
	}
	return segs
}

// lost handles the segment of cur having been removed before the reader
// finished it (a checkpoint truncated it): the samples are lost. It counts
// and logs the loss, reloads series from the newest checkpoint and returns
// the start of the first segment present after cur.
func (s *Sender) lost(cur wlog.Position) wlog.Position {
	s.group = commitGroup{}
	segs := s.listSegments()
	i, _ := slices.BinarySearch(segs, cur.Segment+1)
	next := cur.Segment + 1
	if i < len(segs) {
		next = segs[i]
	}
	s.metrics.segmentsLost.Add(float64(next - cur.Segment))
	s.logger.Warn("remote write: WAL segments removed before they were sent; their samples are lost",
		"from", cur.Segment, "to", next-1)
	s.loadCheckpoint()
	return wlog.Position{Segment: next}
}

// loadCheckpoint reads the series of the newest checkpoint, if any, into
// the series map. It returns the checkpoint's index, or -1.
func (s *Sender) loadCheckpoint() int {
	name, idx, err := wlog.LastCheckpoint(vfs.OS(), s.walDir)
	if errors.Is(err, wlog.ErrNotFound) {
		return -1
	}
	if err != nil {
		s.logger.Error("remote write: finding checkpoint", "err", err)
		return -1
	}
	rd, err := wlog.NewSegmentsReader(vfs.OS(), name)
	if err != nil {
		s.logger.Error("remote write: reading checkpoint", "checkpoint", name, "err", err)
		return -1
	}
	defer rd.Close()
	r := wlog.NewReader(rd)
	for r.Next() {
		s.seriesOnly(r.Record(), idx)
	}
	if err := r.Err(); err != nil {
		s.logger.Error("remote write: reading checkpoint", "checkpoint", name, "err", err)
	}
	return idx
}

// seriesOnly applies a Series or Metadata record to the series map and
// ignores other records. It returns the number of float samples in a samples record,
// for counting what a skip gives up (histograms are not counted).
func (s *Sender) seriesOnly(rec []byte, seg int) int {
	if len(rec) == 0 {
		return 0
	}
	switch record.Type(rec[0]) {
	case record.Series:
		s.defineSeries(rec, seg)
	case record.Metadata:
		s.applyMetadata(rec)
	case record.Samples, record.SamplesV2:
		var err error
		s.samples, err = s.dec.Samples(rec, s.samples[:0])
		if err == nil {
			return len(s.samples)
		}
	}
	return 0
}

func (s *Sender) defineSeries(rec []byte, seg int) {
	var err error
	s.refs, err = s.dec.Series(rec, s.refs[:0])
	if err != nil {
		s.logger.Error("remote write: bad series record", "err", err)
		return
	}
	for _, r := range s.refs {
		s.series.set(r.Ref, r.Labels, seg)
	}
}

// applyMetadata records the metadata of a Metadata record in the series
// map.
func (s *Sender) applyMetadata(rec []byte) {
	var err error
	s.metas, err = s.dec.Metadata(rec, s.metas[:0])
	if err != nil {
		s.logger.Error("remote write: bad metadata record", "err", err)
		return
	}
	for _, m := range s.metas {
		md := seriesMeta{typ: m.Type, unit: m.Unit, help: m.Help}
		if se := s.series.setMeta(m.Ref, md); se != nil && s.metaDone != nil {
			s.families.set(se, md)
		}
	}
}

// catchUp rebuilds the series map from the newest checkpoint and the
// records before the resume position, and returns where sending starts.
func (s *Sender) catchUp(ctx context.Context) wlog.Position {
	s.loadCheckpoint()
	segs := s.listSegments()
	if !s.resume {
		if len(segs) == 0 {
			return wlog.Position{}
		}
		return wlog.Position{Segment: segs[0]}
	}
	target := s.start
	for _, seg := range segs {
		if seg > target.Segment || ctx.Err() != nil {
			break
		}
		_, err := readSegment(wlog.SegmentName(s.walDir, seg), 0, func(rec []byte, end int64) error {
			if seg == target.Segment && end > target.Offset {
				return errPastTarget
			}
			s.seriesOnly(rec, seg)
			return nil
		})
		if err != nil && !errors.Is(err, errPastTarget) {
			s.logger.Warn("remote write: reading series before the resume position", "segment", seg, "err", err)
		}
	}
	if len(segs) > 0 && target.Segment < segs[0] {
		s.metrics.segmentsLost.Add(float64(segs[0] - target.Segment))
		s.logger.Warn("remote write: WAL segments removed before they were sent; their samples are lost",
			"from", target.Segment, "to", segs[0]-1)
		return wlog.Position{Segment: segs[0]}
	}
	return target
}

// skipAhead gives up the segments from cur to skip (exclusive), which
// KeepWALFrom abandoned: it reads their series, counts their samples as
// skipped and the segments as dropped, and returns the start of skip.
func (s *Sender) skipAhead(ctx context.Context, cur wlog.Position, skip int) wlog.Position {
	s.group = commitGroup{}
	skipped, gone := 0, false
	for seg := cur.Segment; seg < skip && ctx.Err() == nil; seg++ {
		off := int64(0)
		if seg == cur.Segment {
			off = cur.Offset
		}
		_, err := readSegment(wlog.SegmentName(s.walDir, seg), off, func(rec []byte, _ int64) error {
			skipped += s.seriesOnly(rec, seg)
			return nil
		})
		if errNotExist(err) {
			gone = true
		}
	}
	if gone {
		s.loadCheckpoint()
	}
	// Samples first: whoever sees the segments counted sees their samples.
	s.metrics.samplesSkipped.Add(float64(skipped))
	s.metrics.segmentsDropped.Add(float64(skip - cur.Segment))
	s.logger.Warn("remote write: sender too far behind, WAL segments given up",
		"from", cur.Segment, "to", skip-1, "samples", skipped)
	next := wlog.Position{Segment: skip}
	s.tracker.add(next, 0)
	return next
}

// sendRecord returns the function readSegment calls for each record of
// segment seg, read from offset off, while tailing: it updates the series
// map, queues samples and registers every record with the tracker.
// Records other than series and samples (float or histogram) are passed
// over.
//
// The records of a commit group (a CommitGroup record and the n records it
// announces: one commit with histograms) are held back until the group's
// last record has been read, so that a commit being written is sent whole
// or not at all. If reading stops inside a group, endRead moves the offset
// back to the group's start, to read it again.
func (s *Sender) sendRecord(ctx context.Context, seg int, off int64) func(rec []byte, end int64) error {
	prevEnd := off
	return func(rec []byte, end int64) error {
		start := prevEnd
		prevEnd = end
		if s.records++; s.records%4096 == 0 {
			s.maybeReshard(ctx) // also while reading a long backlog
		}
		if s.group.left > 0 {
			s.group.recs = append(s.group.recs, groupRec{rec: append([]byte(nil), rec...), end: wlog.Position{Segment: seg, Offset: end}})
			if s.group.left--; s.group.left > 0 {
				return nil
			}
			g := s.group
			s.group = commitGroup{}
			s.tracker.add(g.markEnd, 0)
			s.prepareGroup(g.recs)
			s.inGroup = true
			defer func() {
				s.inGroup = false
				clear(s.groupEx)
			}()
			for _, r := range g.recs {
				if err := s.process(ctx, r.end.Segment, r.rec, r.end.Offset); err != nil {
					return err
				}
			}
			return nil
		}
		if len(rec) > 0 && record.Type(rec[0]) == record.CommitGroup {
			if n, err := s.dec.CommitGroup(rec); err == nil && n > 0 {
				s.group = commitGroup{left: n,
					start:   wlog.Position{Segment: seg, Offset: start},
					markEnd: wlog.Position{Segment: seg, Offset: end}}
				return nil
			}
		}
		return s.process(ctx, seg, rec, end)
	}
}

// prepareGroup readies the records of a whole commit group for process:
// its metadata is applied first, so that the group's samples are sent
// with it (the Metadata record follows the samples in the WAL), and, with
// Config.SendExemplars, its exemplars are decoded into s.groupEx, for
// queue to attach to the samples of their series (the Exemplars record
// comes last).
func (s *Sender) prepareGroup(recs []groupRec) {
	clear(s.groupEx)
	for _, r := range recs {
		if len(r.rec) == 0 {
			continue
		}
		switch record.Type(r.rec[0]) {
		case record.Metadata:
			s.applyMetadata(r.rec)
		case record.Exemplars:
			if s.cfg.SendExemplars {
				s.decodeExemplars(r.rec, r.end)
			}
		}
	}
}

// decodeExemplars adds the exemplars of an Exemplars record ending at end
// to s.groupEx, by series.
func (s *Sender) decodeExemplars(rec []byte, end wlog.Position) {
	var err error
	s.exs, err = s.dec.Exemplars(rec, s.exs[:0])
	if err != nil {
		s.logger.Error("remote write: bad exemplars record", "segment", end.Segment, "offset", end.Offset, "err", err)
		return
	}
	if s.groupEx == nil {
		s.groupEx = map[uint64][]prompb.Exemplar{}
	}
	for _, e := range s.exs {
		pe := prompb.Exemplar{Value: e.V, Timestamp: e.T}
		e.Labels.Range(func(l isolabels.Label) { pe.Labels = append(pe.Labels, prompb.Label{Name: l.Name, Value: l.Value}) })
		s.groupEx[e.Ref] = append(s.groupEx[e.Ref], pe)
	}
	clear(s.exs) // drop label references
}

// commitGroup is a commit group being read (see sendRecord). Its records
// may span two segments (a record that does not fit a segment goes to the
// next one).
type commitGroup struct {
	left    int           // records still to come
	start   wlog.Position // where the CommitGroup record starts
	markEnd wlog.Position // just past the CommitGroup record
	recs    []groupRec
}

type groupRec struct {
	rec []byte
	end wlog.Position
}

// endRead returns where reading goes on after a read of cur's segment that
// stopped at off: there, or, if it stopped inside a commit group, at the
// group's start (possibly in the previous segment), the group being
// dropped to be read again whole.
func (s *Sender) endRead(cur wlog.Position, off int64) wlog.Position {
	cur.Offset = off
	if s.group.left > 0 {
		cur = s.group.start
	}
	s.group = commitGroup{}
	return cur
}

// process handles one record ending at end in segment seg.
func (s *Sender) process(ctx context.Context, seg int, rec []byte, end int64) error {
	pos := wlog.Position{Segment: seg, Offset: end}
	if len(rec) == 0 {
		s.tracker.add(pos, 0)
		return nil
	}
	switch record.Type(rec[0]) {
	case record.Series:
		s.defineSeries(rec, seg)
	case record.Metadata:
		s.applyMetadata(rec) // again, for a group: the same, a no-op
	case record.Exemplars:
		if s.cfg.SendExemplars {
			return s.queueExemplars(ctx, rec, pos)
		}
	case record.Samples, record.SamplesV2:
		return s.queueSamples(ctx, rec, pos)
	case record.HistogramSamples, record.CustomBucketsHistogramSamples, record.HistogramSamplesV2,
		record.FloatHistogramSamples, record.CustomBucketsFloatHistogramSamples, record.FloatHistogramSamplesV2:
		return s.queueHistograms(ctx, rec, pos)
	}
	s.tracker.add(pos, 0)
	return nil
}

// queueSamples queues the float samples of a samples record ending at pos.
func (s *Sender) queueSamples(ctx context.Context, rec []byte, pos wlog.Position) error {
	var err error
	s.samples, err = s.dec.Samples(rec, s.samples[:0])
	if err != nil {
		s.logger.Error("remote write: bad samples record", "segment", pos.Segment, "offset", pos.Offset, "err", err)
		s.tracker.add(pos, 0)
		return nil
	}
	s.pend = s.pend[:0]
	for _, smp := range s.samples {
		s.pend = append(s.pend, pendingItem{ref: smp.Ref, it: item{st: smp.ST, t: smp.T, v: smp.V}})
	}
	return s.queue(ctx, pos)
}

// queueExemplars queues, as exOnly items, the exemplars of the Exemplars
// record ending at pos that were not attached to a sample of their commit
// (those of a series without a sample in the commit, or all of them for
// a record outside a commit group).
func (s *Sender) queueExemplars(ctx context.Context, rec []byte, pos wlog.Position) error {
	if !s.inGroup {
		clear(s.groupEx)
		s.decodeExemplars(rec, pos)
	}
	s.pend = s.pend[:0]
	for ref, ex := range s.groupEx {
		s.pend = append(s.pend, pendingItem{ref: ref, it: item{x: &itemExtra{ex: ex, exOnly: true}}})
	}
	clear(s.groupEx)
	return s.queue(ctx, pos)
}

// queueHistograms queues the native histograms of a histogram record
// (integer or float, any layout) ending at pos.
func (s *Sender) queueHistograms(ctx context.Context, rec []byte, pos wlog.Position) error {
	s.pend = s.pend[:0]
	var err error
	switch record.Type(rec[0]) {
	case record.HistogramSamples, record.CustomBucketsHistogramSamples, record.HistogramSamplesV2:
		s.hists, err = s.dec.HistogramSamples(rec, s.hists[:0])
		for _, h := range s.hists {
			s.pend = append(s.pend, pendingItem{ref: h.Ref, it: item{st: h.ST, t: h.T, x: &itemExtra{h: promstorage.ToPromHistogram(h.H)}}})
		}
	default:
		s.fhists, err = s.dec.FloatHistogramSamples(rec, s.fhists[:0])
		for _, h := range s.fhists {
			s.pend = append(s.pend, pendingItem{ref: h.Ref, it: item{st: h.ST, t: h.T, x: &itemExtra{fh: promstorage.ToPromFloatHistogram(h.FH)}}})
		}
	}
	if err != nil {
		s.logger.Error("remote write: bad histogram record", "segment", pos.Segment, "offset", pos.Offset, "err", err)
		s.tracker.add(pos, 0)
		return nil
	}
	return s.queue(ctx, pos)
}

// pendingItem is a sample of a record being queued, before its series is
// looked up.
type pendingItem struct {
	ref uint64
	it  item
}

// queue registers the record ending at pos with the tracker and queues
// s.pend, dropping samples of unknown or relabeled-away series.
func (s *Sender) queue(ctx context.Context, pos wlog.Position) error {
	n := len(s.shards.shards)
	if len(s.staging) < n {
		s.staging = make([][]item, n)
	}
	for i := range n {
		s.staging[i] = s.staging[i][:0]
	}
	kept, dropped := 0, 0
	for _, p := range s.pend {
		se := s.series.get(p.ref)
		if se == nil {
			if !p.it.exOnly() {
				dropped++
			}
			continue
		}
		if ex, ok := s.groupEx[p.ref]; ok && !p.it.exOnly() {
			// The commit's exemplars of the series go with its first
			// sample.
			if p.it.x == nil {
				p.it.x = &itemExtra{}
			}
			p.it.x.ex = ex
			delete(s.groupEx, p.ref)
		}
		p.it.s = se
		p.it.meta = se.meta
		i := int(p.ref % uint64(n))
		s.staging[i] = append(s.staging[i], p.it)
		kept++
	}
	clear(s.pend) // drop histogram references
	if dropped > 0 {
		s.metrics.samplesDropped.Add(float64(dropped))
	}
	seq := s.tracker.add(pos, kept)
	if pos.Compare(s.replayEnd) <= 0 {
		s.replaySeqs.Store(seq + 1)
	}
	for i := range n {
		st := s.staging[i]
		if len(st) == 0 {
			continue
		}
		for j := range st {
			st[j].seq = seq
		}
		if err := s.shards.enqueue(ctx, i, st, s.skipCh); err != nil {
			if errors.Is(err, errSkip) {
				// Given up: what was not queued will never be acknowledged.
				rest := 0
				for _, st := range s.staging[i:n] {
					rest += len(st)
				}
				s.tracker.done(seq, rest)
			}
			return err
		}
		clear(st) // drop series references held by the staging slices
	}
	return nil
}

// gcSeries forgets series that a checkpoint left out, so that the series
// map does not grow with churn. Reader goroutine only; called as the reader
// enters segment cur.
//
// A checkpoint of segments up to idx leaves out the series the head had
// dropped when it was written. Their samples may still lie in segments
// after idx (up to the newest segment at that time, as KeepWALFrom can
// hold checkpoints back), so such a series is forgotten only once the
// reader has passed that newest segment; and only if no Series record
// after idx defined it again.
func (s *Sender) gcSeries(cur int) {
	if p := s.gcPending; p != nil {
		if cur <= p.until {
			return
		}
		s.gcPending = nil
		s.gcCheckpoint = p.idx
		if n := s.series.gc(p.idx, p.keep); n > 0 {
			s.logger.Debug("remote write: forgot series left out of a checkpoint", "series", n, "checkpoint", p.idx)
		}
		return
	}
	name, idx, err := wlog.LastCheckpoint(vfs.OS(), s.walDir)
	if err != nil || idx <= s.gcCheckpoint {
		return
	}
	rd, err := wlog.NewSegmentsReader(vfs.OS(), name)
	if err != nil {
		return
	}
	defer rd.Close()
	keep := map[uint64]struct{}{}
	r := wlog.NewReader(rd)
	for r.Next() {
		rec := r.Record()
		if len(rec) == 0 || record.Type(rec[0]) != record.Series {
			continue
		}
		if s.refs, err = s.dec.Series(rec, s.refs[:0]); err != nil {
			return
		}
		for _, ref := range s.refs {
			keep[ref.Ref] = struct{}{}
		}
	}
	if r.Err() != nil {
		return // a checkpoint being removed: try again with the next one
	}
	s.gcPending = &pendingGC{idx: idx, until: max(cur, int(s.newestSeg.Load())), keep: keep}
}

// pendingGC is a checkpoint's series, waiting for the reader to pass
// segment until before gcSeries applies it.
type pendingGC struct {
	idx, until int
	keep       map[uint64]struct{}
}
