package chunks

import (
	"fmt"
	"math"

	"github.com/isotsdb/tsdb/histogram"
)

// HistogramIterator iterates over the samples of a HistogramChunk. It is
// used by one goroutine at a time. Like the XOR iterator, it captures the
// sample count, header and last byte when reset, so appends that follow do
// not race with it.
type HistogramIterator struct {
	br     bitReader
	total  int // samples in the chunk when reset
	read   int // samples decoded
	hdr    histogram.CounterResetHint
	layout histLayout

	t                           int64
	cnt, zCnt                   uint64
	tDelta, cntDelta, zCntDelta int64
	pBuckets, nBuckets          []int64 // current sample, deltas between buckets
	pDeltas, nDeltas            []int64 // change of each since the previous sample
	sum                         float64
	win                         xorWindow

	stMode bool    // the chunk is of an ST encoding
	st     stState // ST decoder state; st.st is the current sample's ST

	err error
}

// Reset points the iterator at EncHistogram chunk bytes b (header included),
// keeping its buffers. Bytes too short for the header make Err report
// ErrCorrupt at the first Next.
func (it *HistogramIterator) Reset(b []byte) { it.reset(b, false) }

// reset is Reset for chunk bytes of the ST encoding if st is set.
func (it *HistogramIterator) reset(b []byte, st bool) {
	*it = HistogramIterator{
		layout: histLayout{
			pSpans:       it.layout.pSpans[:0],
			nSpans:       it.layout.nSpans[:0],
			customValues: it.layout.customValues[:0],
		},
		pBuckets: it.pBuckets[:0], nBuckets: it.nBuckets[:0],
		pDeltas: it.pDeltas[:0], nDeltas: it.nDeltas[:0],
		win: xorWindow{leading: noLeading},
	}
	if len(b) < histHeaderSize {
		it.err = corruptAt(0, -1, fmt.Sprintf("histogram chunk of %d bytes, shorter than its header", len(b)))
		return
	}
	it.stMode = st
	it.total, it.hdr, it.st = readHistHeader(b, st)
	it.br.reset(b, histHeaderSize)
}

// Next advances to the next sample and returns ValHistogram, or ValNone at
// the end or on a decode error (see Err).
func (it *HistogramIterator) Next() ValueType {
	if !it.stMode {
		return it.next()
	}
	prevT := it.t
	start := it.br.bitPos()
	vt := it.next()
	if vt == ValNone {
		return ValNone
	}
	if ok, reason := it.st.decode(&it.br, it.read-1, it.t, prevT); !ok {
		it.read--
		return it.fail(start, reason)
	}
	return vt
}

// AtST returns the current sample's start timestamp; it is 0 if the
// sample has none or the chunk's encoding does not store them.
func (it *HistogramIterator) AtST() int64 { return it.st.st }

// next decodes the next sample, except its ST data.
func (it *HistogramIterator) next() ValueType {
	if it.err != nil || it.read >= it.total {
		return ValNone
	}
	if it.read == 0 {
		return it.nextFirst()
	}
	br := &it.br
	start := br.bitPos()
	tDod, ok1 := br.readVarbitInt()
	cDod, ok2 := br.readVarbitInt()
	zDod, ok3 := br.readVarbitInt()
	if !ok1 || !ok2 || !ok3 {
		return it.fail(start, "truncated time or counts")
	}
	it.tDelta += tDod
	it.t += it.tDelta
	it.cntDelta += cDod
	it.cnt = uint64(int64(it.cnt) + it.cntDelta)
	it.zCntDelta += zDod
	it.zCnt = uint64(int64(it.zCnt) + it.zCntDelta)
	sumBits := math.Float64bits(it.sum)
	if ok, reason := br.readXOR(&sumBits, &it.win); !ok {
		return it.fail(start, "sum: "+reason)
	}
	it.sum = math.Float64frombits(sumBits)
	if !isStale(it.sum) {
		if !readBucketDods(br, it.pBuckets, it.pDeltas) || !readBucketDods(br, it.nBuckets, it.nDeltas) {
			return it.fail(start, "truncated bucket")
		}
	}
	it.read++
	return ValHistogram
}

func readBucketDods(br *bitReader, buckets, deltas []int64) bool {
	for i := range buckets {
		dod, ok := br.readVarbitInt()
		if !ok {
			return false
		}
		deltas[i] += dod
		buckets[i] += deltas[i]
	}
	return true
}

func (it *HistogramIterator) nextFirst() ValueType {
	br := &it.br
	if err := br.readLayout(&it.layout); err != nil {
		it.err = err
		return ValNone
	}
	start := br.bitPos()
	np, nn := numBuckets(it.layout.pSpans), numBuckets(it.layout.nSpans)
	// Every bucket of the first sample takes at least one bit.
	if np+nn > br.bitsLeft() {
		return it.fail(start, fmt.Sprintf("layout has %d buckets, more than the chunk can hold", np+nn))
	}
	it.pBuckets, it.pDeltas = zeroed(it.pBuckets, np), zeroed(it.pDeltas, np)
	it.nBuckets, it.nDeltas = zeroed(it.nBuckets, nn), zeroed(it.nDeltas, nn)
	t, ok1 := br.readVarbitInt()
	cnt, ok2 := br.readVarbitUint()
	zCnt, ok3 := br.readVarbitUint()
	sum, ok4 := br.readWide(64)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return it.fail(start, "truncated first sample")
	}
	it.t, it.cnt, it.zCnt, it.sum = t, cnt, zCnt, math.Float64frombits(sum)
	for _, b := range [2][]int64{it.pBuckets, it.nBuckets} {
		for i := range b {
			v, ok := br.readVarbitInt()
			if !ok {
				return it.fail(start, "truncated bucket")
			}
			b[i] = v
		}
	}
	it.read++
	return ValHistogram
}

// zeroed returns s resized to n zeros, reusing its array if large enough.
func zeroed[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

//go:noinline
func (it *HistogramIterator) fail(bitPos int, reason string) ValueType {
	it.err = corruptAt(bitPos/8, it.read, "histogram chunk: "+reason)
	return ValNone
}

// Seek advances to the first sample with time >= t and returns
// ValHistogram, or ValNone if there is none. It does not move if the
// current sample qualifies.
func (it *HistogramIterator) Seek(t millis) ValueType {
	for it.read == 0 || it.t < t {
		if it.Next() == ValNone {
			return ValNone
		}
	}
	return ValHistogram
}

// AtT returns the current sample's time.
func (it *HistogramIterator) AtT() int64 { return it.t }

// AtHistogram stores the current sample in h, reusing h's slices, and
// returns h (a new Histogram if h is nil). A stale marker is returned as a
// Histogram with only its Sum set. The CounterResetHint is the one
// Prometheus reports (see sampleHint).
func (it *HistogramIterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	if h == nil {
		h = new(histogram.Histogram)
	}
	if isStale(it.sum) {
		*h = histogram.Histogram{
			Sum:           it.sum,
			PositiveSpans: h.PositiveSpans[:0], NegativeSpans: h.NegativeSpans[:0],
			PositiveBuckets: h.PositiveBuckets[:0], NegativeBuckets: h.NegativeBuckets[:0],
		}
		return it.t, h
	}
	h.CounterResetHint = sampleHint(it.hdr, it.read-1)
	h.Schema = it.layout.schema
	h.ZeroThreshold = it.layout.zeroThreshold
	h.ZeroCount, h.Count, h.Sum = it.zCnt, it.cnt, it.sum
	h.PositiveSpans = append(h.PositiveSpans[:0], it.layout.pSpans...)
	h.NegativeSpans = append(h.NegativeSpans[:0], it.layout.nSpans...)
	h.PositiveBuckets = append(h.PositiveBuckets[:0], it.pBuckets...)
	h.NegativeBuckets = append(h.NegativeBuckets[:0], it.nBuckets...)
	h.CustomValues = nil // as Prometheus: only custom-bucket samples have bounds
	if len(it.layout.customValues) > 0 {
		h.CustomValues = append(h.CustomValues[:0], it.layout.customValues...)
	}
	return it.t, h
}

// AtFloatHistogram stores the current sample, converted to float counts,
// in fh, reusing fh's slices, and returns fh (a new FloatHistogram if fh is
// nil).
func (it *HistogramIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	if fh == nil {
		fh = new(histogram.FloatHistogram)
	}
	if isStale(it.sum) {
		*fh = histogram.FloatHistogram{
			Sum:           it.sum,
			PositiveSpans: fh.PositiveSpans[:0], NegativeSpans: fh.NegativeSpans[:0],
			PositiveBuckets: fh.PositiveBuckets[:0], NegativeBuckets: fh.NegativeBuckets[:0],
		}
		return it.t, fh
	}
	fh.CounterResetHint = sampleHint(it.hdr, it.read-1)
	fh.Schema = it.layout.schema
	fh.ZeroThreshold = it.layout.zeroThreshold
	fh.ZeroCount, fh.Count, fh.Sum = float64(it.zCnt), float64(it.cnt), it.sum
	fh.PositiveSpans = append(fh.PositiveSpans[:0], it.layout.pSpans...)
	fh.NegativeSpans = append(fh.NegativeSpans[:0], it.layout.nSpans...)
	fh.PositiveBuckets = appendAbsolute(fh.PositiveBuckets[:0], it.pBuckets)
	fh.NegativeBuckets = appendAbsolute(fh.NegativeBuckets[:0], it.nBuckets)
	fh.CustomValues = nil // as Prometheus: only custom-bucket samples have bounds
	if len(it.layout.customValues) > 0 {
		fh.CustomValues = append(fh.CustomValues[:0], it.layout.customValues...)
	}
	return it.t, fh
}

// appendAbsolute appends the running sums of deltas to dst. It sums as
// integers and converts each sum once, as Prometheus's iterator does when
// it allocates the histogram; when it fills one passed in it sums in
// float64 instead, which differs beyond 2^53.
func appendAbsolute(dst []float64, deltas []int64) []float64 {
	var cur int64
	for _, d := range deltas {
		cur += d
		dst = append(dst, float64(cur))
	}
	return dst
}

// Err returns the error that stopped iteration, if any; decode errors wrap
// ErrCorrupt.
func (it *HistogramIterator) Err() error { return it.err }

// At panics: a histogram chunk holds no floats.
func (it *HistogramIterator) At() (int64, float64) {
	wrongType("At", ValHistogram)
	return 0, 0
}
