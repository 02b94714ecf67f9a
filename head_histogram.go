package tsdb

import (
	"fmt"
	"math"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/value"
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
//
// Start times. A sample may carry a start time (st, 0 for none), stored
// in Prometheus's encodings for them: XOR2 for floats, HistogramST and
// FloatHistogramST for histograms. A chunk takes the ST encoding if the
// sample that starts it has a start time, and a sample with a start time
// that meets an open chunk without them cuts a new one; samples without a
// start time may join an ST chunk (they are stored as 0).

// seriesExtra is the state of a series that only some series need: the
// appenders of the encodings other than XOR (native histograms, and floats
// with start times in XOR2), and its late samples (head_late.go). It is
// allocated with the first such sample and guarded by the series' mutex.
//
// xorOpenInvariant: while the open chunk is an XOR chunk (memSeries.app is
// set), xor2, happ, fapp, lastH and lastFH are all nil. So a plain float
// appended to that chunk needs nothing of seriesExtra, and appendLocked
// does not touch it (a late series has one, in another cache line) once
// the chunk is open; the cut that opens an XOR chunk clears them
// (openChunkLocked the appenders, appendLocked lastH and lastFH). Checked
// under -tags invariants (checkAppendersLocked).
type seriesExtra struct {
	// xor2 appends to the open chunk if it is an XOR2 chunk (floats with
	// start times); xor2Last holds the bits of its last value.
	xor2     *chunks.XOR2Appender
	xor2Last uint64
	// happ appends to the open chunk if it is a histogram chunk, fapp if
	// it is a float-histogram chunk (with or without start times); at most
	// one of xor2, happ, fapp and memSeries.app is set.
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

	// late holds the series' late samples; nil while it has none.
	late *lateSeries
	// meta holds the series' metadata (head_metadata.go); nil while it
	// has none.
	meta *seriesMeta
}

// appendHistogramLocked is appendLocked for a histogram sample: exactly one
// of hh and fh is set, and it is valid. Requires s.mu held; takes no lock.
func (s *memSeries) appendHistogramLocked(h *head, st, t int64, hh *histogram.Histogram, fh *histogram.FloatHistogram, id, lowWatermark uint64) (reason string) {
	if t <= s.lastTLocked() {
		return s.appendedBeforeLocked(&pendingSample{t: t, h: hh, fh: fh})
	}
	hs := s.extraLocked()
	var err error
	if hh != nil {
		err = s.appendIntHistogramLocked(h, hs, st, t, hh)
	} else {
		err = s.appendFloatHistogramLocked(h, hs, st, t, fh)
	}
	if err != nil {
		// Validation at Append rules this out; count it if it happens.
		return reasonInvalid
	}
	hs.lastH, hs.lastFH = hh, fh
	s.appendedLocked(h, t, id, lowWatermark)
	return ""
}

// staleNaNBits are the bits of Prometheus's stale marker, a NaN (see
// package value).
const staleNaNBits = value.StaleNaN

// staleHistogramLocked returns, if v is a stale marker and the series'
// newest sample is a histogram, the stale marker to store instead: a
// histogram of the same kind whose sum is the marker. So a series that
// ends after histograms ends in a histogram stale marker, as Prometheus's
// head stores it, and does not cut a float chunk for the marker. Requires
// s.mu held.
func (s *memSeries) staleHistogramLocked(v float64) (*histogram.Histogram, *histogram.FloatHistogram) {
	if s.x == nil || math.Float64bits(v) != staleNaNBits {
		return nil, nil
	}
	switch {
	case s.x.lastH != nil:
		return &histogram.Histogram{Sum: v}, nil
	case s.x.lastFH != nil:
		return nil, &histogram.FloatHistogram{Sum: v}
	}
	return nil, nil
}

// extraLocked returns s.x, allocating it first if needed.
func (s *memSeries) extraLocked() *seriesExtra {
	if s.x == nil {
		s.x = &seriesExtra{}
	}
	return s.x
}

// appendFloatLocked is appendLocked for a float sample with its start time
// st (0 for none): the XOR2 path if st is set or the open chunk is XOR2,
// appendLocked's otherwise. Requires s.mu held; takes no lock.
func (s *memSeries) appendFloatLocked(h *head, st, t int64, v float64, id, lowWatermark uint64) (reason string) {
	// With an open XOR chunk (s.app set) the series has no XOR2 appender
	// (xorOpenInvariant), so a plain float goes to appendLocked without a
	// look at s.x.
	if st == 0 && (s.app != nil || s.x == nil || s.x.xor2 == nil) {
		return s.appendLocked(h, t, v, id, lowWatermark)
	}
	if t <= s.lastTLocked() {
		return s.appendedBeforeLocked(&pendingSample{t: t, v: v})
	}
	hs := s.extraLocked()
	if hs.xor2 == nil || t >= s.nextAt || hs.xor2.NumSamples() >= h.samplesPerChunk {
		c := chunks.NewXOR2Chunk()
		app, err := c.XOR2Appender()
		if err != nil {
			// A new, empty chunk always has an appender.
			panic(fmt.Sprintf("tsdb: appender of new XOR2 chunk: %v", err))
		}
		s.openChunkLocked(h, c, t)
		hs.xor2 = app
		s.nextAt = rangeEnd(t, h.chunkRange)
	}
	hs.xor2.AppendST(st, t, v)
	hs.xor2Last = math.Float64bits(v)
	hs.lastH, hs.lastFH = nil, nil
	s.appendedLocked(h, t, id, lowWatermark)
	return ""
}

// cutHistogramLocked reports whether a histogram at t must start a new
// chunk although the open chunk is of its kind: the size rule of
// chunks.ShouldCutHistogramChunk, with the chunk's end time predicted once
// it has grown enough. Requires s.mu held.
func (s *memSeries) cutHistogramLocked(hs *seriesExtra, t int64) bool {
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
func (s *memSeries) startHistogramChunkLocked(h *head, hs *seriesExtra, c chunks.Chunk, t int64) {
	s.openChunkLocked(h, c, t)
	hs.rangeEnd = rangeEnd(t, h.chunkRange)
	hs.predicted = false
	s.nextAt = hs.rangeEnd
}

// noteHistogramAppendLocked follows up an append to a histogram appender
// that returned res and the chunk c: a cut chunk becomes the open one; a
// recoded chunk replaces the open one in place (readers copy the open
// chunk under s.mu, and the old chunk's bytes stay valid for them).
func (s *memSeries) noteHistogramAppendLocked(h *head, hs *seriesExtra, res chunks.HistogramAppendResult, c chunks.Chunk, t int64) {
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

func (s *memSeries) appendIntHistogramLocked(h *head, hs *seriesExtra, st, t int64, hh *histogram.Histogram) error {
	prev := hs.happ
	if prev != nil && prev.TakesST(st) && !s.cutHistogramLocked(hs, t) {
		res, c, app, err := prev.AppendHistogramST(st, t, hh)
		if err != nil {
			return err
		}
		s.noteHistogramAppendLocked(h, hs, res, c, t)
		hs.happ = app
		return nil
	}
	app, err := chunks.StartHistogramChunk(prev, st, t, hh)
	if err != nil {
		return err
	}
	s.startHistogramChunkLocked(h, hs, app.Chunk(), t)
	hs.happ = app
	return nil
}

func (s *memSeries) appendFloatHistogramLocked(h *head, hs *seriesExtra, st, t int64, fh *histogram.FloatHistogram) error {
	prev := hs.fapp
	if prev != nil && prev.TakesST(st) && !s.cutHistogramLocked(hs, t) {
		res, c, app, err := prev.AppendFloatHistogramST(st, t, fh)
		if err != nil {
			return err
		}
		s.noteHistogramAppendLocked(h, hs, res, c, t)
		hs.fapp = app
		return nil
	}
	app, err := chunks.StartFloatHistogramChunk(prev, st, t, fh)
	if err != nil {
		return err
	}
	s.startHistogramChunkLocked(h, hs, app.Chunk(), t)
	hs.fapp = app
	return nil
}
