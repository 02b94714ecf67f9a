package tsdb

import (
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
)

// Histogram samples in the head.
//
// A series holds floats, integer histograms and float histograms in one
// sequence of chunks: an XOR chunk for a run of floats, a histogram or
// float-histogram chunk for a run of histograms of that kind. A change of
// kind always cuts a chunk. Histogram chunks are cut by size, as in
// Prometheus (chunks.ShouldCutHistogramChunk), and also when the chunk
// appender cuts one itself (a counter reset, a schema change); when a
// histogram brings buckets the chunk's layout lacks, the appender recodes
// the open chunk into a new one that replaces it (its samples stay the
// same, so the sample indices the write-ID ring refers to are unchanged).
// Every sample, whatever its kind, takes one slot of the series' write-ID
// ring, so isolation treats floats and histograms alike (isolation.go).

// histState is a series' histogram-append state. It is allocated with the
// first histogram sample and guarded by the series' mutex.
type histState struct {
	// happ appends to the open chunk if it is a histogram chunk, fapp if
	// it is a float-histogram chunk; at most one is set, and neither while
	// the open chunk is XOR (memSeries.app).
	happ *chunks.HistogramAppender
	fapp *chunks.FloatHistogramAppender
	// lastH or lastFH is the newest sample if it is a histogram (the
	// caller's value, which Append documents must not be modified after
	// the call); both are nil if it is a float.
	lastH  *histogram.Histogram
	lastFH *histogram.FloatHistogram
	// rangeEnd is the end of the chunk range the open histogram chunk
	// started in; predicted is set once a chunk's end time was predicted
	// from its size (memSeries.nextAt holds the prediction). As in
	// Prometheus's head, it stays set across a chunk the appender cuts and
	// is cleared only when the head cuts one (by size or time, or for a
	// change of kind).
	rangeEnd  int64
	predicted bool
}

// appendHistogramLocked is appendLocked for a histogram sample: exactly one
// of hh and fh is set, and it is valid. Requires s.mu held; takes no lock.
func (s *memSeries) appendHistogramLocked(h *head, t int64, hh *histogram.Histogram, fh *histogram.FloatHistogram, id, lowWatermark uint64) (reason string) {
	if t <= s.lastT {
		return s.appendedBeforeLocked(&pendingSample{t: t, h: hh, fh: fh})
	}
	hs := s.hist
	if hs == nil {
		hs = &histState{}
		s.hist = hs
	}
	var err error
	if hh != nil {
		err = s.appendIntHistogramLocked(h, hs, t, hh)
	} else {
		err = s.appendFloatHistogramLocked(h, hs, t, fh)
	}
	if err != nil {
		// Validation at Append rules this out; count it if it happens.
		return reasonInvalid
	}
	hs.lastH, hs.lastFH = hh, fh
	s.appendedLocked(h, t, id, lowWatermark)
	return ""
}

// cutHistogramLocked reports whether a histogram at t must start a new
// chunk although the open chunk is of its kind: the size rule of
// chunks.ShouldCutHistogramChunk, with the chunk's end time predicted once
// it has grown enough. Requires s.mu held.
func (s *memSeries) cutHistogramLocked(hs *histState, t int64) bool {
	mc := &s.chunks[len(s.chunks)-1]
	n, size := mc.chunk.NumSamples(), len(mc.chunk.Bytes())
	if !hs.predicted {
		if end, ok := chunks.HistogramChunkEndTime(mc.minTime, mc.maxTime, hs.rangeEnd, size); ok {
			s.nextAt, hs.predicted = end, true
		}
	}
	return chunks.ShouldCutHistogramChunk(n, size, t, s.nextAt, hs.rangeEnd)
}

// startHistogramChunkLocked makes c, starting at t, the open chunk.
func (s *memSeries) startHistogramChunkLocked(h *head, hs *histState, c chunks.Chunk, t int64) {
	s.openChunkLocked(h, c, t)
	hs.rangeEnd = rangeEnd(t, h.chunkRange)
	hs.predicted = false
	s.nextAt = hs.rangeEnd
}

// noteHistogramAppendLocked follows up an append to a histogram appender
// that returned res and the chunk c: a cut chunk becomes the open one; a
// recoded chunk replaces the open one in place (readers copy the open
// chunk under s.mu, and the old chunk's bytes stay valid for them).
func (s *memSeries) noteHistogramAppendLocked(h *head, hs *histState, res chunks.HistogramAppendResult, c chunks.Chunk, t int64) {
	switch res {
	case chunks.CutNewChunk:
		// As in Prometheus's head, a chunk the appender cuts (a counter
		// reset, a schema or zero threshold change) keeps the series'
		// prediction state: if the chunk before it had its end time
		// predicted, this one is not predicted again (it ends at its range's
		// end, or by size); only a chunk cut by size or time resets it.
		predicted := hs.predicted
		s.startHistogramChunkLocked(h, hs, c, t)
		hs.predicted = predicted
	case chunks.Recoded:
		s.chunks[len(s.chunks)-1].chunk = c
	}
}

func (s *memSeries) appendIntHistogramLocked(h *head, hs *histState, t int64, hh *histogram.Histogram) error {
	prev := hs.happ
	if prev != nil && !s.cutHistogramLocked(hs, t) {
		res, c, app, err := prev.AppendHistogram(t, hh)
		if err != nil {
			return err
		}
		s.noteHistogramAppendLocked(h, hs, res, c, t)
		hs.happ = app
		return nil
	}
	c := chunks.NewHistogramChunk()
	app, err := c.Appender()
	if err != nil {
		return err
	}
	_, _, app, err = app.AppendHistogramAfter(prev, t, hh)
	if err != nil {
		return err
	}
	s.startHistogramChunkLocked(h, hs, app.Chunk(), t)
	hs.happ = app
	return nil
}

func (s *memSeries) appendFloatHistogramLocked(h *head, hs *histState, t int64, fh *histogram.FloatHistogram) error {
	prev := hs.fapp
	if prev != nil && !s.cutHistogramLocked(hs, t) {
		res, c, app, err := prev.AppendFloatHistogram(t, fh)
		if err != nil {
			return err
		}
		s.noteHistogramAppendLocked(h, hs, res, c, t)
		hs.fapp = app
		return nil
	}
	c := chunks.NewFloatHistogramChunk()
	app, err := c.Appender()
	if err != nil {
		return err
	}
	_, _, app, err = app.AppendFloatHistogramAfter(prev, t, fh)
	if err != nil {
		return err
	}
	s.startHistogramChunkLocked(h, hs, app.Chunk(), t)
	hs.fapp = app
	return nil
}
