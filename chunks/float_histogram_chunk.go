package chunks

import (
	"fmt"
	"math"
	"slices"

	"github.com/isotsdb/tsdb/histogram"
)

// FloatHistogramChunk holds float histogram samples in Prometheus's float
// histogram chunk encoding (EncFloatHistogram; see histogram.go). It
// follows the concurrency rules of HistogramChunk.
type FloatHistogramChunk struct {
	histChunk
}

// NewFloatHistogramChunk returns an empty float histogram chunk.
func NewFloatHistogramChunk() *FloatHistogramChunk {
	return &FloatHistogramChunk{newHistChunk()}
}

// NewFloatHistogramSTChunk returns an empty float histogram chunk in the
// encoding with start timestamps, EncFloatHistogramST; see
// NewHistogramSTChunk.
func NewFloatHistogramSTChunk() *FloatHistogramChunk {
	c := &FloatHistogramChunk{newHistChunk()}
	c.st = true
	return c
}

// FloatHistogramSTChunkFromData is HistogramChunkFromData for
// EncFloatHistogramST.
func FloatHistogramSTChunkFromData(b []byte) (*FloatHistogramChunk, error) {
	hc, err := histChunkFromData(b, EncFloatHistogramST)
	if err != nil {
		return nil, err
	}
	return &FloatHistogramChunk{hc}, nil
}

// FloatHistogramChunkFromData is HistogramChunkFromData for float
// histogram chunks.
func FloatHistogramChunkFromData(b []byte) (*FloatHistogramChunk, error) {
	hc, err := histChunkFromData(b, EncFloatHistogram)
	if err != nil {
		return nil, err
	}
	return &FloatHistogramChunk{hc}, nil
}

// Encoding returns EncFloatHistogram, or EncFloatHistogramST for a chunk
// made by NewFloatHistogramSTChunk or FloatHistogramSTChunkFromData.
func (c *FloatHistogramChunk) Encoding() Encoding {
	if c.st {
		return EncFloatHistogramST
	}
	return EncFloatHistogram
}

// Bytes returns the encoded chunk, header included. The slice aliases the
// chunk and is valid until the next append or Compact.
func (c *FloatHistogramChunk) Bytes() []byte { return c.w.buf }

// NumSamples returns the number of samples in the chunk.
func (c *FloatHistogramChunk) NumSamples() int { return c.numSamples() }

// CounterResetHeader returns the header's counter-reset bits; see
// HistogramChunk.CounterResetHeader.
func (c *FloatHistogramChunk) CounterResetHeader() histogram.CounterResetHint {
	return c.counterResetHeader()
}

// SetCounterResetHeader sets the header's counter-reset bits to h.
func (c *FloatHistogramChunk) SetCounterResetHeader(h histogram.CounterResetHint) {
	c.setCounterResetHeader(h)
}

// Compact trims excess capacity from the chunk's byte slice.
func (c *FloatHistogramChunk) Compact() { c.compact() }

// Iterator returns an iterator over the samples in the chunk now, reusing
// reuse if it is not nil. It must not be called concurrently with an
// append.
// The iterator is a *FloatHistogramIterator; reuse is reused if it is one.
func (c *FloatHistogramChunk) Iterator(reuse Iterator) Iterator {
	it, ok := reuse.(*FloatHistogramIterator)
	if !ok || it == nil {
		it = new(FloatHistogramIterator)
	}
	it.reset(c.w.buf, c.st)
	return it
}

// Appender returns an appender continuing the chunk; see
// HistogramChunk.Appender.
func (c *FloatHistogramChunk) Appender() (*FloatHistogramAppender, error) {
	a := &FloatHistogramAppender{c: c}
	a.cnt.win, a.zCnt.win, a.sum.win = xorWindow{leading: noLeading}, xorWindow{leading: noLeading}, xorWindow{leading: noLeading}
	if c.numSamples() == 0 {
		if c.borrowed || len(c.w.buf) != histHeaderSize || (c.st && c.w.buf[stHeaderByte] != 0) {
			hdr := c.counterResetHeader()
			c.histChunk = c.empty()
			c.setCounterResetHeader(hdr)
		}
		return a, nil
	}
	var it FloatHistogramIterator
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
	a.t, a.tDelta = it.t, it.tDelta
	a.cnt, a.zCnt, a.sum = it.cnt.resumed(), it.zCnt.resumed(), it.sum.resumed()
	a.pBuckets, a.nBuckets = it.pBuckets, it.nBuckets
	for i := range a.pBuckets {
		a.pBuckets[i] = a.pBuckets[i].resumed()
	}
	for i := range a.nBuckets {
		a.nBuckets[i] = a.nBuckets[i].resumed()
	}
	a.st = it.st
	return a, nil
}

// xorField is a float field XOR-encoded against its previous value.
type xorField struct {
	bits uint64
	win  xorWindow
}

func (f xorField) value() float64 { return math.Float64frombits(f.bits) }

func (f xorField) resumed() xorField { return xorField{f.bits, f.win.resumed()} }

func (w *bitWriter) writeXORField(f *xorField, v float64) {
	b := math.Float64bits(v)
	w.writeXOR(b, f.bits, &f.win)
	f.bits = b
}

// FloatHistogramAppender appends float histograms to a
// FloatHistogramChunk. It is used by one goroutine at a time.
type FloatHistogramAppender struct {
	c      *FloatHistogramChunk
	layout histLayout

	t, tDelta          int64
	cnt, zCnt, sum     xorField
	pBuckets, nBuckets []xorField
	st                 stState // ST chunks only

	scratch []float64 // bucket values for appendable, kept to save allocations
}

// Chunk returns the chunk the appender writes to.
func (a *FloatHistogramAppender) Chunk() *FloatHistogramChunk { return a.c }

// AppendFloatHistogram appends fh at time t; it is
// HistogramAppender.AppendHistogram for float histograms, with the same
// rules and results. fh is not changed or retained.
func (a *FloatHistogramAppender) AppendFloatHistogram(t int64, fh *histogram.FloatHistogram) (HistogramAppendResult, *FloatHistogramChunk, *FloatHistogramAppender, error) {
	return a.AppendFloatHistogramSTAfter(nil, 0, t, fh)
}

// AppendFloatHistogramST is AppendFloatHistogram with the sample's start
// timestamp st (0: none); see HistogramAppender.AppendHistogramST.
func (a *FloatHistogramAppender) AppendFloatHistogramST(st, t int64, fh *histogram.FloatHistogram) (HistogramAppendResult, *FloatHistogramChunk, *FloatHistogramAppender, error) {
	return a.AppendFloatHistogramSTAfter(nil, st, t, fh)
}

// AppendFloatHistogramAfter is AppendFloatHistogram for a chunk that
// continues prev's. If the receiver's chunk is empty, its counter-reset
// header is set from fh's hint if that is GaugeType or CounterReset, else,
// if prev is not nil, to CounterReset if fh could not join prev's chunk
// because of a counter reset and to NotCounterReset otherwise (unlike
// integer chunks, Prometheus never records "unknown" here).
func (a *FloatHistogramAppender) AppendFloatHistogramAfter(prev *FloatHistogramAppender, t int64, fh *histogram.FloatHistogram) (HistogramAppendResult, *FloatHistogramChunk, *FloatHistogramAppender, error) {
	return a.AppendFloatHistogramSTAfter(prev, 0, t, fh)
}

// AppendFloatHistogramSTAfter is AppendFloatHistogramAfter with the
// sample's start timestamp; see HistogramAppender.AppendHistogramST.
func (a *FloatHistogramAppender) AppendFloatHistogramSTAfter(prev *FloatHistogramAppender, st, t int64, fh *histogram.FloatHistogram) (HistogramAppendResult, *FloatHistogramChunk, *FloatHistogramAppender, error) {
	if !isStale(fh.Sum) {
		if err := checkShape(fh.PositiveSpans, fh.NegativeSpans, len(fh.PositiveBuckets), len(fh.NegativeBuckets)); err != nil {
			return 0, nil, nil, err
		}
	}
	hc := *fh
	h := &hc
	num := a.c.numSamples()
	if num == 0 {
		a.appendSample(0, st, t, h)
		a.c.setNumSamples(1)
		switch {
		case h.CounterResetHint == histogram.GaugeType || h.CounterResetHint == histogram.CounterReset:
			a.c.setCounterResetHeader(h.CounterResetHint)
		case prev != nil:
			hint := histogram.NotCounterReset
			if _, _, reset := prev.appendable(h); reset {
				hint = histogram.CounterReset
			}
			a.c.setCounterResetHeader(hint)
		}
		return AppendedInPlace, a.c, a, nil
	}
	if num == a.c.maxSamples() {
		na, _ := (&FloatHistogramChunk{a.c.empty()}).Appender()
		if a.c.counterResetHeader() == histogram.GaugeType {
			na.c.setCounterResetHeader(histogram.GaugeType)
			na.appendSample(0, st, t, h)
			na.c.setNumSamples(1)
			return CutNewChunk, na.c, na, nil
		}
		_, c, na, err := na.AppendFloatHistogramSTAfter(a, st, t, h)
		return CutNewChunk, c, na, err
	}

	var g layoutGrowth
	if h.CounterResetHint != histogram.GaugeType {
		g, ok, reset := a.appendable(h)
		if !ok || reset {
			hint := histogram.UnknownCounterReset
			if reset {
				hint = histogram.CounterReset
			}
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
			h.PositiveBuckets = insertBuckets(h.PositiveBuckets, g.pBack, false)
			h.NegativeBuckets = insertBuckets(h.NegativeBuckets, g.nBack, false)
		}
		return a.finish(g, num, st, t, h)
	}
	var ok bool
	var pUnion, nUnion []histogram.Span
	g, pUnion, nUnion, ok = a.appendableGauge(h)
	if !ok {
		return a.cut(st, histogram.GaugeType, t, h)
	}
	if len(g.pBack) > 0 || len(g.nBack) > 0 {
		h.PositiveSpans, h.NegativeSpans = pUnion, nUnion
		h.PositiveBuckets = insertBuckets(h.PositiveBuckets, g.pBack, false)
		h.NegativeBuckets = insertBuckets(h.NegativeBuckets, g.nBack, false)
	}
	return a.finish(g, num, st, t, h)
}

// finish appends h in place, or recodes the chunk first if g has forward
// inserts.
func (a *FloatHistogramAppender) finish(g layoutGrowth, num int, st, t int64, h *histogram.FloatHistogram) (HistogramAppendResult, *FloatHistogramChunk, *FloatHistogramAppender, error) {
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

func (a *FloatHistogramAppender) cut(st int64, hint histogram.CounterResetHint, t int64, h *histogram.FloatHistogram) (HistogramAppendResult, *FloatHistogramChunk, *FloatHistogramAppender, error) {
	na, _ := (&FloatHistogramChunk{a.c.empty()}).Appender()
	na.c.setCounterResetHeader(hint)
	na.appendSample(0, st, t, h)
	na.c.setNumSamples(1)
	return CutNewChunk, na.c, na, nil
}

// appendable decides whether the counter float histogram h can join the
// chunk; reset reports that it cannot because of a counter reset.
func (a *FloatHistogramAppender) appendable(h *histogram.FloatHistogram) (g layoutGrowth, ok, reset bool) {
	switch {
	case a.c.numSamples() > 0 && a.c.counterResetHeader() == histogram.GaugeType:
		return g, false, false
	case h.CounterResetHint == histogram.CounterReset:
		return g, false, true
	case isStale(h.Sum):
		return g, true, false
	case isStale(a.sum.value()):
		return g, false, false
	case h.Count < a.cnt.value():
		return g, false, true
	case h.Schema != a.layout.schema || h.ZeroThreshold != a.layout.zeroThreshold:
		return g, false, false
	case histogram.IsCustomBucketsSchema(h.Schema) && !sameBounds(h.CustomValues, a.layout.customValues):
		return g, false, true
	case h.ZeroCount < a.zCnt.value():
		return g, false, true
	}
	var okP, okN bool
	a.scratch = appendFieldValues(a.scratch[:0], a.pBuckets)
	g.pFwd, g.pBack, okP = growInto(a.layout.pSpans, h.PositiveSpans, a.scratch, h.PositiveBuckets, false)
	if okP {
		a.scratch = appendFieldValues(a.scratch[:0], a.nBuckets)
		g.nFwd, g.nBack, okN = growInto(a.layout.nSpans, h.NegativeSpans, a.scratch, h.NegativeBuckets, false)
	}
	if !okP || !okN {
		return layoutGrowth{}, false, true
	}
	return g, true, false
}

// appendableGauge decides whether the gauge float histogram h can join
// the chunk, and returns the union of the chunk's and h's spans.
func (a *FloatHistogramAppender) appendableGauge(h *histogram.FloatHistogram) (g layoutGrowth, pUnion, nUnion []histogram.Span, ok bool) {
	switch {
	case a.c.numSamples() > 0 && a.c.counterResetHeader() != histogram.GaugeType:
		return g, nil, nil, false
	case isStale(h.Sum):
		return g, nil, nil, true
	case isStale(a.sum.value()):
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

// appendSample encodes h, with start timestamp st if the chunk stores
// them, after the num samples in the chunk; the caller updates the sample
// count.
func (a *FloatHistogramAppender) appendSample(num int, st, t int64, h *histogram.FloatHistogram) {
	if isStale(h.Sum) {
		h = &histogram.FloatHistogram{Sum: h.Sum}
	}
	w := &a.c.w
	prevT := a.t
	var tDelta int64
	if num == 0 {
		a.layout = histLayout{
			schema:        h.Schema,
			zeroThreshold: h.ZeroThreshold,
			pSpans:        cloneOrNil(h.PositiveSpans),
			nSpans:        cloneOrNil(h.NegativeSpans),
			customValues:  cloneOrNil(h.CustomValues),
		}
		w.writeLayout(&a.layout)
		a.pBuckets = newFields(h.PositiveBuckets)
		a.nBuckets = newFields(h.NegativeBuckets)
		w.putVarbitInt(t)
		a.cnt.bits, a.zCnt.bits, a.sum.bits = math.Float64bits(h.Count), math.Float64bits(h.ZeroCount), math.Float64bits(h.Sum)
		for _, f := range []uint64{a.cnt.bits, a.zCnt.bits, a.sum.bits} {
			w.writeBits(f, 64)
		}
		for _, fs := range [2][]xorField{a.pBuckets, a.nBuckets} {
			for _, f := range fs {
				w.writeBits(f.bits, 64)
			}
		}
	} else {
		tDelta = t - a.t
		w.putVarbitInt(tDelta - a.tDelta)
		w.writeXORField(&a.cnt, h.Count)
		w.writeXORField(&a.zCnt, h.ZeroCount)
		w.writeXORField(&a.sum, h.Sum)
		for i, v := range h.PositiveBuckets {
			w.writeXORField(&a.pBuckets[i], v)
		}
		for i, v := range h.NegativeBuckets {
			w.writeXORField(&a.nBuckets[i], v)
		}
	}
	a.t, a.tDelta = t, tDelta
	if a.c.st {
		a.st.encode(w, num, t, prevT, st)
	}
}

// newFields returns fields holding vs, with no XOR window yet.
func newFields(vs []float64) []xorField {
	fs := make([]xorField, len(vs))
	for i, v := range vs {
		fs[i] = xorField{bits: math.Float64bits(v), win: xorWindow{leading: noLeading}}
	}
	return fs
}

// recode re-encodes the chunk's samples into a new chunk whose layout has
// the given spans, adding the forward inserts' empty buckets to every
// sample, and returns the new chunk's appender. The header is kept.
func (a *FloatHistogramAppender) recode(g layoutGrowth, pSpans, nSpans []histogram.Span) (*FloatHistogramAppender, error) {
	na, _ := (&FloatHistogramChunk{a.c.empty()}).Appender()
	var it FloatHistogramIterator
	it.reset(a.c.w.buf, a.c.st)
	n := 0
	for it.Next() != ValNone {
		var old histogram.FloatHistogram
		it.AtFloatHistogram(&old)
		if !isStale(old.Sum) {
			old.PositiveSpans, old.NegativeSpans = pSpans, nSpans
			if len(g.pFwd) > 0 {
				old.PositiveBuckets = insertBuckets(old.PositiveBuckets, g.pFwd, false)
			}
			if len(g.nFwd) > 0 {
				old.NegativeBuckets = insertBuckets(old.NegativeBuckets, g.nFwd, false)
			}
		}
		na.appendSample(n, it.st.st, it.t, &old)
		n++
	}
	if it.err != nil {
		return nil, fmt.Errorf("recoding float histogram chunk: %w", it.err)
	}
	na.c.setNumSamples(n)
	na.c.setCounterResetHeader(a.c.counterResetHeader())
	return na, nil
}

// StartFloatHistogramChunk is StartHistogramChunk for float histograms:
// a FloatHistogramST chunk if st is not 0, else a FloatHistogram chunk.
func StartFloatHistogramChunk(prev *FloatHistogramAppender, st, t int64, fh *histogram.FloatHistogram) (*FloatHistogramAppender, error) {
	c := NewFloatHistogramChunk()
	if st != 0 {
		c = NewFloatHistogramSTChunk()
	}
	app, err := c.Appender()
	if err != nil {
		return nil, err
	}
	_, _, app, err = app.AppendFloatHistogramSTAfter(prev, st, t, fh)
	return app, err
}

// TakesST is HistogramAppender.TakesST for float histograms.
func (a *FloatHistogramAppender) TakesST(st int64) bool {
	return st == 0 || a.c.Encoding() == EncFloatHistogramST
}
