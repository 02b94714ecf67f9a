package chunks

import (
	"fmt"
	"math"
	"slices"

	"github.com/isotsdb/tsdb/histogram"
)

// HistogramChunk holds integer histogram samples in Prometheus's histogram
// chunk encoding (EncHistogram; the format is described in histogram.go).
// All samples share one bucket layout, written before the first sample.
//
// The concurrency rules are those of XORChunk: one goroutine appends (and
// calls Appender, SetCounterResetHeader and Compact), and any number may
// iterate, provided each Iterator call does not overlap an append.
type HistogramChunk struct {
	histChunk
}

// NewHistogramChunk returns an empty histogram chunk.
func NewHistogramChunk() *HistogramChunk {
	return &HistogramChunk{newHistChunk()}
}

// NewHistogramSTChunk returns an empty histogram chunk in the encoding
// with start timestamps, EncHistogramST. It is a HistogramChunk like any
// other; the difference is in its header (a 14-bit sample count whose top
// two bits are the counter-reset header, then the ST header byte) and in
// the start timestamp stored after each sample (see st.go). Its appenders'
// AppendHistogramST stores the start timestamps given; it holds at most
// 16383 samples.
func NewHistogramSTChunk() *HistogramChunk {
	c := &HistogramChunk{newHistChunk()}
	c.st = true
	return c
}

// HistogramSTChunkFromData is HistogramChunkFromData for EncHistogramST.
func HistogramSTChunkFromData(b []byte) (*HistogramChunk, error) {
	hc, err := histChunkFromData(b, EncHistogramST)
	if err != nil {
		return nil, err
	}
	return &HistogramChunk{hc}, nil
}

// HistogramChunkFromData returns a histogram chunk over b, which holds the
// chunk's bytes including its 3-byte header. b is not copied and must not
// change while the chunk is in use; an appender copies it before writing.
// A header that cannot be valid yields an error wrapping ErrCorrupt; the
// samples are checked as they are decoded.
func HistogramChunkFromData(b []byte) (*HistogramChunk, error) {
	hc, err := histChunkFromData(b, EncHistogram)
	if err != nil {
		return nil, err
	}
	return &HistogramChunk{hc}, nil
}

// Encoding returns EncHistogram, or EncHistogramST for a chunk made by
// NewHistogramSTChunk or HistogramSTChunkFromData.
func (c *HistogramChunk) Encoding() Encoding {
	if c.st {
		return EncHistogramST
	}
	return EncHistogram
}

// Bytes returns the encoded chunk, header included. The slice aliases the
// chunk and is valid until the next append or Compact.
func (c *HistogramChunk) Bytes() []byte { return c.w.buf }

// NumSamples returns the number of samples in the chunk.
func (c *HistogramChunk) NumSamples() int { return c.numSamples() }

// CounterResetHeader returns what the chunk's header says about how it
// starts: CounterReset (it was cut because of a counter reset),
// NotCounterReset (it continues the previous chunk without one),
// GaugeType (it holds gauge histograms) or UnknownCounterReset.
func (c *HistogramChunk) CounterResetHeader() histogram.CounterResetHint {
	return c.counterResetHeader()
}

// SetCounterResetHeader sets the header's counter-reset bits to h.
func (c *HistogramChunk) SetCounterResetHeader(h histogram.CounterResetHint) {
	c.setCounterResetHeader(h)
}

// Compact trims excess capacity from the chunk's byte slice. Iterators
// created earlier keep reading the old slice, which stays valid.
func (c *HistogramChunk) Compact() { c.compact() }

// Iterator returns an iterator over the samples in the chunk now. reuse may
// be nil or an iterator to reset and return instead of allocating one. It
// must not be called concurrently with an append.
// The iterator is a *HistogramIterator; reuse is reused if it is one.
func (c *HistogramChunk) Iterator(reuse Iterator) Iterator {
	it, ok := reuse.(*HistogramIterator)
	if !ok || it == nil {
		it = new(HistogramIterator)
	}
	it.reset(c.w.buf, c.st)
	return it
}

// Appender returns an appender that continues the chunk as if all its
// samples had been appended through it. It decodes the whole chunk, and
// fails with an error wrapping ErrCorrupt if it cannot, or if bytes follow
// the last sample. Only the appender most recently returned may be used.
func (c *HistogramChunk) Appender() (*HistogramAppender, error) {
	a := &HistogramAppender{c: c, win: xorWindow{leading: noLeading}}
	if c.numSamples() == 0 {
		if c.borrowed || len(c.w.buf) != histHeaderSize || (c.st && c.w.buf[stHeaderByte] != 0) {
			hdr := c.counterResetHeader()
			c.histChunk = c.empty()
			c.setCounterResetHeader(hdr)
		}
		return a, nil
	}
	var it HistogramIterator
	it.reset(c.w.buf, c.st)
	for it.Next() != ValNone {
	}
	if it.err != nil {
		return nil, it.err
	}
	if c.st {
		if err := it.st.checkResumable(it.read); err != nil {
			return nil, err
		}
	}
	if err := c.own(it.br.bitPos()); err != nil {
		return nil, err
	}
	if !increasing(it.layout.pSpans) || !increasing(it.layout.nSpans) {
		return nil, fmt.Errorf("histogram chunk layout has a span with a negative offset after the first: %w", ErrCorrupt)
	}
	a.layout = it.layout
	a.t, a.cnt, a.zCnt = it.t, it.cnt, it.zCnt
	a.tDelta, a.cntDelta, a.zCntDelta = it.tDelta, it.cntDelta, it.zCntDelta
	a.pBuckets, a.nBuckets = it.pBuckets, it.nBuckets
	a.pDeltas, a.nDeltas = it.pDeltas, it.nDeltas
	a.sum = it.sum
	a.win = it.win.resumed()
	a.st = it.st
	return a, nil
}

// HistogramAppender appends integer histograms to a HistogramChunk. It
// holds the encoder's state after the chunk's last sample and is used by
// one goroutine at a time.
type HistogramAppender struct {
	c      *HistogramChunk
	layout histLayout

	t                           int64
	cnt, zCnt                   uint64
	tDelta, cntDelta, zCntDelta int64
	pBuckets, nBuckets          []int64 // the last sample's buckets, as deltas between buckets
	pDeltas, nDeltas            []int64 // how each of those changed from the sample before
	sum                         float64
	win                         xorWindow // of the sum
	st                          stState   // ST chunks only
}

// Chunk returns the chunk the appender writes to.
func (a *HistogramAppender) Chunk() *HistogramChunk { return a.c }

// AppendHistogram appends h at time t, which must be after the last
// sample's, and returns what it did (see HistogramAppendResult) with the
// chunk and the appender to use from now on: the receiver's for
// AppendedInPlace, a new chunk's otherwise. h is not changed or retained.
//
// A counter histogram (any hint but GaugeType) joins the chunk only if no
// count went down, no non-empty bucket disappeared, and the schema, zero
// threshold and custom bounds are unchanged; buckets that appear make the
// chunk be recoded, and buckets of the chunk that h lacks are added to h as
// empty buckets if the chunk's last sample had them empty. A gauge
// histogram joins a gauge chunk unless its schema, zero threshold or custom
// bounds changed; buckets may appear and disappear in both directions. A
// stale marker always joins; nothing but stale markers joins after one.
// These are the rules of Prometheus, and for the same sequence of appends
// the chunks' bytes are Prometheus's.
//
// The error is non-nil only if h's spans do not cover its bucket count.
func (a *HistogramAppender) AppendHistogram(t int64, h *histogram.Histogram) (HistogramAppendResult, *HistogramChunk, *HistogramAppender, error) {
	return a.AppendHistogramSTAfter(nil, 0, t, h)
}

// AppendHistogramST is AppendHistogram with the sample's start timestamp
// st (0: none). A chunk of encoding EncHistogramST stores st; any other
// ignores it. Chunks cut or recoded from an ST chunk are ST chunks.
func (a *HistogramAppender) AppendHistogramST(st, t int64, h *histogram.Histogram) (HistogramAppendResult, *HistogramChunk, *HistogramAppender, error) {
	return a.AppendHistogramSTAfter(nil, st, t, h)
}

// AppendHistogramAfter is AppendHistogram for a chunk that continues the
// chunk prev appends to (prev may be nil). If the receiver's chunk is
// empty, its counter-reset header is set as Prometheus sets it: from h's
// hint if that is GaugeType or CounterReset, else from whether h could
// have joined prev's chunk (NotCounterReset), could not because of a
// counter reset (CounterReset) or for another reason (UnknownCounterReset).
// This is how a chunk cut for size records that it continues prev.
func (a *HistogramAppender) AppendHistogramAfter(prev *HistogramAppender, t int64, h *histogram.Histogram) (HistogramAppendResult, *HistogramChunk, *HistogramAppender, error) {
	return a.AppendHistogramSTAfter(prev, 0, t, h)
}

// AppendHistogramSTAfter is AppendHistogramAfter with the sample's start
// timestamp; see AppendHistogramST.
func (a *HistogramAppender) AppendHistogramSTAfter(prev *HistogramAppender, st, t int64, h *histogram.Histogram) (HistogramAppendResult, *HistogramChunk, *HistogramAppender, error) {
	if !isStale(h.Sum) {
		if err := checkShape(h.PositiveSpans, h.NegativeSpans, len(h.PositiveBuckets), len(h.NegativeBuckets)); err != nil {
			return 0, nil, nil, err
		}
	}
	hc := *h // a shallow copy whose spans and buckets may be replaced
	h = &hc
	num := a.c.numSamples()
	if num == 0 {
		a.appendSample(0, st, t, h)
		a.c.setNumSamples(1)
		switch {
		case h.CounterResetHint == histogram.GaugeType || h.CounterResetHint == histogram.CounterReset:
			a.c.setCounterResetHeader(h.CounterResetHint)
		case prev != nil:
			_, _, hint := prev.appendable(h)
			a.c.setCounterResetHeader(hint)
		}
		return AppendedInPlace, a.c, a, nil
	}
	if num == a.c.maxSamples() {
		// The chunk is full: continue in a new one, as if cut for size.
		na, _ := (&HistogramChunk{a.c.empty()}).Appender()
		if a.c.counterResetHeader() == histogram.GaugeType {
			na.c.setCounterResetHeader(histogram.GaugeType)
			na.appendSample(0, st, t, h)
			na.c.setNumSamples(1)
			return CutNewChunk, na.c, na, nil
		}
		_, c, na, err := na.AppendHistogramSTAfter(a, st, t, h)
		return CutNewChunk, c, na, err
	}

	var g layoutGrowth
	if h.CounterResetHint != histogram.GaugeType {
		var ok bool
		var hint histogram.CounterResetHint
		g, ok, hint = a.appendable(h)
		if !ok || hint != histogram.NotCounterReset {
			return a.cut(st, hint, t, h)
		}
		if len(g.pBack) > 0 || len(g.nBack) > 0 {
			if len(g.pFwd) == 0 && len(g.nFwd) == 0 {
				h.PositiveSpans = slices.Clone(a.layout.pSpans)
				h.NegativeSpans = slices.Clone(a.layout.nSpans)
			} else {
				h.PositiveSpans = spansWithInserts(h.PositiveSpans, g.pBack)
				h.NegativeSpans = spansWithInserts(h.NegativeSpans, g.nBack)
			}
			h.PositiveBuckets = insertBuckets(h.PositiveBuckets, g.pBack, true)
			h.NegativeBuckets = insertBuckets(h.NegativeBuckets, g.nBack, true)
		}
	} else {
		var ok bool
		var pUnion, nUnion []histogram.Span
		g, pUnion, nUnion, ok = a.appendableGauge(h)
		if !ok {
			return a.cut(st, histogram.GaugeType, t, h)
		}
		if len(g.pBack) > 0 || len(g.nBack) > 0 {
			h.PositiveSpans, h.NegativeSpans = pUnion, nUnion
			h.PositiveBuckets = insertBuckets(h.PositiveBuckets, g.pBack, true)
			h.NegativeBuckets = insertBuckets(h.NegativeBuckets, g.nBack, true)
		}
	}
	if len(g.pFwd) > 0 || len(g.nFwd) > 0 {
		na, err := a.recode(g, h.PositiveSpans, h.NegativeSpans)
		if err != nil {
			return 0, nil, nil, err
		}
		na.appendSample(na.c.numSamples(), st, t, h)
		na.c.setNumSamples(na.c.numSamples() + 1)
		return Recoded, na.c, na, nil
	}
	a.appendSample(num, st, t, h)
	a.c.setNumSamples(num + 1)
	return AppendedInPlace, a.c, a, nil
}

// cut starts a new chunk with h, its header set to hint.
func (a *HistogramAppender) cut(st int64, hint histogram.CounterResetHint, t int64, h *histogram.Histogram) (HistogramAppendResult, *HistogramChunk, *HistogramAppender, error) {
	na, _ := (&HistogramChunk{a.c.empty()}).Appender()
	na.c.setCounterResetHeader(hint)
	na.appendSample(0, st, t, h)
	na.c.setNumSamples(1)
	return CutNewChunk, na.c, na, nil
}

// layoutGrowth holds the bucket inserts that reconcile a chunk's layout
// with a new sample's: forward ones extend the chunk's samples, backward
// ones the new sample.
type layoutGrowth struct {
	pFwd, nFwd, pBack, nBack []bucketInsert
}

// appendable decides whether the counter histogram h can join the chunk.
// hint is the counter-reset header a chunk cut for h would get; ok implies
// hint is NotCounterReset, except for a stale h.
func (a *HistogramAppender) appendable(h *histogram.Histogram) (g layoutGrowth, ok bool, hint histogram.CounterResetHint) {
	switch {
	case a.c.numSamples() > 0 && a.c.counterResetHeader() == histogram.GaugeType:
		return g, false, histogram.NotCounterReset
	case h.CounterResetHint == histogram.CounterReset:
		return g, false, histogram.CounterReset
	case isStale(h.Sum):
		return g, true, histogram.NotCounterReset
	case isStale(a.sum):
		return g, false, histogram.UnknownCounterReset
	case h.Count < a.cnt:
		return g, false, histogram.CounterReset
	case h.Schema != a.layout.schema || h.ZeroThreshold != a.layout.zeroThreshold:
		// Whether this is a reset too is left to the reader.
		return g, false, histogram.UnknownCounterReset
	case histogram.IsCustomBucketsSchema(h.Schema) && !sameBounds(h.CustomValues, a.layout.customValues):
		return g, false, histogram.CounterReset
	case h.ZeroCount < a.zCnt:
		return g, false, histogram.CounterReset
	}
	var okP, okN bool
	g.pFwd, g.pBack, okP = growInto(a.layout.pSpans, h.PositiveSpans, a.pBuckets, h.PositiveBuckets, true)
	if okP {
		g.nFwd, g.nBack, okN = growInto(a.layout.nSpans, h.NegativeSpans, a.nBuckets, h.NegativeBuckets, true)
	}
	if !okP || !okN {
		return layoutGrowth{}, false, histogram.CounterReset
	}
	return g, true, histogram.NotCounterReset
}

// appendableGauge decides whether the gauge histogram h can join the
// chunk, and returns the union of the chunk's and h's spans.
func (a *HistogramAppender) appendableGauge(h *histogram.Histogram) (g layoutGrowth, pUnion, nUnion []histogram.Span, ok bool) {
	switch {
	case a.c.numSamples() > 0 && a.c.counterResetHeader() != histogram.GaugeType:
		return g, nil, nil, false
	case isStale(h.Sum):
		return g, nil, nil, true
	case isStale(a.sum):
		return g, nil, nil, false
	case h.Schema != a.layout.schema || h.ZeroThreshold != a.layout.zeroThreshold:
		return g, nil, nil, false
	case histogram.IsCustomBucketsSchema(h.Schema) && !sameBounds(h.CustomValues, a.layout.customValues):
		return g, nil, nil, false
	}
	g.pFwd, g.pBack, pUnion = mergeLayouts(a.layout.pSpans, h.PositiveSpans)
	g.nFwd, g.nBack, nUnion = mergeLayouts(a.layout.nSpans, h.NegativeSpans)
	return g, pUnion, nUnion, true
}

// sameBounds compares custom bounds by value, as Prometheus does (so a
// NaN bound never matches).
func sameBounds(a, b []float64) bool {
	return slices.Equal(a, b)
}

// appendSample encodes h, with start timestamp st if the chunk stores
// them, as the sample after the num samples already in the chunk; the
// caller updates the sample count. For num > 0, h must have
// exactly the chunk's buckets (or be a stale marker).
func (a *HistogramAppender) appendSample(num int, st, t int64, h *histogram.Histogram) {
	if isStale(h.Sum) {
		h = &histogram.Histogram{Sum: h.Sum}
	}
	w := &a.c.w
	prevT := a.t
	var tDelta, cntDelta, zCntDelta int64
	if num == 0 {
		a.layout = histLayout{
			schema:        h.Schema,
			zeroThreshold: h.ZeroThreshold,
			pSpans:        cloneOrNil(h.PositiveSpans),
			nSpans:        cloneOrNil(h.NegativeSpans),
			customValues:  cloneOrNil(h.CustomValues),
		}
		w.writeLayout(&a.layout)
		np, nn := len(h.PositiveBuckets), len(h.NegativeBuckets)
		a.pBuckets, a.pDeltas = make([]int64, np), make([]int64, np)
		a.nBuckets, a.nDeltas = make([]int64, nn), make([]int64, nn)
		w.putVarbitInt(t)
		w.putVarbitUint(h.Count)
		w.putVarbitUint(h.ZeroCount)
		w.writeBits(math.Float64bits(h.Sum), 64)
		for _, b := range h.PositiveBuckets {
			w.putVarbitInt(b)
		}
		for _, b := range h.NegativeBuckets {
			w.putVarbitInt(b)
		}
	} else {
		tDelta = t - a.t
		cntDelta = int64(h.Count) - int64(a.cnt)
		zCntDelta = int64(h.ZeroCount) - int64(a.zCnt)
		w.putVarbitInt(tDelta - a.tDelta)
		if isStale(h.Sum) {
			w.putVarbitInt(0)
			w.putVarbitInt(0)
		} else {
			w.putVarbitInt(cntDelta - a.cntDelta)
			w.putVarbitInt(zCntDelta - a.zCntDelta)
		}
		w.writeXOR(math.Float64bits(h.Sum), math.Float64bits(a.sum), &a.win)
		for i, b := range h.PositiveBuckets {
			d := b - a.pBuckets[i]
			w.putVarbitInt(d - a.pDeltas[i])
			a.pDeltas[i] = d
		}
		for i, b := range h.NegativeBuckets {
			d := b - a.nBuckets[i]
			w.putVarbitInt(d - a.nDeltas[i])
			a.nDeltas[i] = d
		}
	}
	a.t, a.cnt, a.zCnt = t, h.Count, h.ZeroCount
	a.tDelta, a.cntDelta, a.zCntDelta = tDelta, cntDelta, zCntDelta
	copy(a.pBuckets, h.PositiveBuckets)
	copy(a.nBuckets, h.NegativeBuckets)
	a.sum = h.Sum
	if a.c.st {
		a.st.encode(w, num, t, prevT, st)
	}
}

// recode re-encodes the chunk's samples into a new chunk whose layout has
// the given spans, adding the forward inserts' empty buckets to every
// sample, and returns the new chunk's appender. The header is kept.
func (a *HistogramAppender) recode(g layoutGrowth, pSpans, nSpans []histogram.Span) (*HistogramAppender, error) {
	na, _ := (&HistogramChunk{a.c.empty()}).Appender()
	var it HistogramIterator
	it.reset(a.c.w.buf, a.c.st)
	var old histogram.Histogram
	n := 0
	for it.Next() != ValNone {
		it.AtHistogram(&old)
		if !isStale(old.Sum) {
			old.PositiveSpans, old.NegativeSpans = pSpans, nSpans
			if len(g.pFwd) > 0 {
				old.PositiveBuckets = insertBuckets(old.PositiveBuckets, g.pFwd, true)
			}
			if len(g.nFwd) > 0 {
				old.NegativeBuckets = insertBuckets(old.NegativeBuckets, g.nFwd, true)
			}
		}
		na.appendSample(n, it.st.st, it.t, &old)
		n++
		old = histogram.Histogram{}
	}
	if it.err != nil {
		return nil, fmt.Errorf("recoding histogram chunk: %w", it.err)
	}
	na.c.setNumSamples(n)
	na.c.setCounterResetHeader(a.c.counterResetHeader())
	return na, nil
}

func cloneOrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// StartHistogramChunk starts a new chunk with the sample (st, t, h) and
// returns its appender: a HistogramST chunk if st is not 0, else a
// Histogram chunk. prev is the appender of the chunk the new one follows
// (nil if none); it sets the counter-reset header as in
// AppendHistogramAfter.
func StartHistogramChunk(prev *HistogramAppender, st, t int64, h *histogram.Histogram) (*HistogramAppender, error) {
	c := NewHistogramChunk()
	if st != 0 {
		c = NewHistogramSTChunk()
	}
	app, err := c.Appender()
	if err != nil {
		return nil, err
	}
	_, _, app, err = app.AppendHistogramSTAfter(prev, st, t, h)
	return app, err
}

// TakesST reports whether a sample with start time st (0 for none) may
// join the appender's chunk: any sample may join a HistogramST chunk, one
// with a start time no other.
func (a *HistogramAppender) TakesST(st int64) bool {
	return st == 0 || a.c.Encoding() == EncHistogramST
}
