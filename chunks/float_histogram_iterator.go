package chunks

import (
	"fmt"
	"math"

	"github.com/isotsdb/tsdb/histogram"
)

// FloatHistogramIterator iterates over the samples of a
// FloatHistogramChunk; see HistogramIterator.
type FloatHistogramIterator struct {
	br     bitReader
	total  int
	read   int
	hdr    histogram.CounterResetHint
	layout histLayout

	t, tDelta          int64
	cnt, zCnt, sum     xorField
	pBuckets, nBuckets []xorField

	stMode bool    // the chunk is of an ST encoding
	st     stState // ST decoder state; st.st is the current sample's ST

	err error
}

// Reset points the iterator at EncFloatHistogram chunk bytes b (header included),
// keeping its buffers.
func (it *FloatHistogramIterator) Reset(b []byte) { it.reset(b, false) }

// reset is Reset for chunk bytes of the ST encoding if st is set.
func (it *FloatHistogramIterator) reset(b []byte, st bool) {
	*it = FloatHistogramIterator{
		layout: histLayout{
			pSpans:       it.layout.pSpans[:0],
			nSpans:       it.layout.nSpans[:0],
			customValues: it.layout.customValues[:0],
		},
		pBuckets: it.pBuckets[:0], nBuckets: it.nBuckets[:0],
	}
	if len(b) < histHeaderSize {
		it.err = corruptAt(0, -1, fmt.Sprintf("float histogram chunk of %d bytes, shorter than its header", len(b)))
		return
	}
	it.stMode = st
	it.total, it.hdr, it.st = readHistHeader(b, st)
	it.br.reset(b, histHeaderSize)
}

// Next advances to the next sample and returns ValFloatHistogram, or
// ValNone at the end or on a decode error (see Err).
func (it *FloatHistogramIterator) Next() ValueType {
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
func (it *FloatHistogramIterator) AtST() int64 { return it.st.st }

// next decodes the next sample, except its ST data.
func (it *FloatHistogramIterator) next() ValueType {
	if it.err != nil || it.read >= it.total {
		return ValNone
	}
	br := &it.br
	if it.read == 0 {
		if err := br.readLayout(&it.layout); err != nil {
			it.err = err
			return ValNone
		}
		start := br.bitPos()
		np, nn := numBuckets(it.layout.pSpans), numBuckets(it.layout.nSpans)
		// Every bucket of the first sample takes 64 bits.
		if np+nn > br.bitsLeft()/64 {
			return it.fail(start, fmt.Sprintf("layout has %d buckets, more than the chunk can hold", np+nn))
		}
		it.pBuckets, it.nBuckets = zeroed(it.pBuckets, np), zeroed(it.nBuckets, nn)
		t, ok := br.readVarbitInt()
		if !ok {
			return it.fail(start, "truncated first sample")
		}
		it.t = t
		noWin := xorWindow{leading: noLeading}
		for _, f := range []*xorField{&it.cnt, &it.zCnt, &it.sum} {
			u, ok := br.readWide(64)
			if !ok {
				return it.fail(start, "truncated first sample")
			}
			*f = xorField{bits: u, win: noWin}
		}
		for _, fs := range [2][]xorField{it.pBuckets, it.nBuckets} {
			for i := range fs {
				u, ok := br.readWide(64)
				if !ok {
					return it.fail(start, "truncated bucket")
				}
				fs[i] = xorField{bits: u, win: noWin}
			}
		}
		it.read++
		return ValFloatHistogram
	}
	start := br.bitPos()
	tDod, ok := br.readVarbitInt()
	if !ok {
		return it.fail(start, "truncated time")
	}
	it.tDelta += tDod
	it.t += it.tDelta
	for _, f := range []*xorField{&it.cnt, &it.zCnt, &it.sum} {
		if ok, reason := br.readXOR(&f.bits, &f.win); !ok {
			return it.fail(start, reason)
		}
	}
	if !isStale(it.sum.value()) {
		for _, fs := range [2][]xorField{it.pBuckets, it.nBuckets} {
			for i := range fs {
				if ok, reason := br.readXOR(&fs[i].bits, &fs[i].win); !ok {
					return it.fail(start, "bucket: "+reason)
				}
			}
		}
	}
	it.read++
	return ValFloatHistogram
}

//go:noinline
func (it *FloatHistogramIterator) fail(bitPos int, reason string) ValueType {
	it.err = corruptAt(bitPos/8, it.read, "float histogram chunk: "+reason)
	return ValNone
}

// Seek advances to the first sample with time >= t and returns
// ValFloatHistogram, or ValNone if there is none. It does not move if the
// current sample qualifies.
func (it *FloatHistogramIterator) Seek(t millis) ValueType {
	for it.read == 0 || it.t < t {
		if it.Next() == ValNone {
			return ValNone
		}
	}
	return ValFloatHistogram
}

// AtT returns the current sample's time.
func (it *FloatHistogramIterator) AtT() int64 { return it.t }

// AtFloatHistogram stores the current sample in fh, reusing fh's slices,
// and returns fh (a new FloatHistogram if fh is nil). A stale marker is
// returned with only its Sum set.
func (it *FloatHistogramIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	if fh == nil {
		fh = new(histogram.FloatHistogram)
	}
	if isStale(it.sum.value()) {
		*fh = histogram.FloatHistogram{
			Sum:           it.sum.value(),
			PositiveSpans: fh.PositiveSpans[:0], NegativeSpans: fh.NegativeSpans[:0],
			PositiveBuckets: fh.PositiveBuckets[:0], NegativeBuckets: fh.NegativeBuckets[:0],
		}
		return it.t, fh
	}
	fh.CounterResetHint = sampleHint(it.hdr, it.read-1)
	fh.Schema = it.layout.schema
	fh.ZeroThreshold = it.layout.zeroThreshold
	fh.ZeroCount, fh.Count, fh.Sum = it.zCnt.value(), it.cnt.value(), it.sum.value()
	fh.PositiveSpans = append(fh.PositiveSpans[:0], it.layout.pSpans...)
	fh.NegativeSpans = append(fh.NegativeSpans[:0], it.layout.nSpans...)
	fh.PositiveBuckets = appendFieldValues(fh.PositiveBuckets[:0], it.pBuckets)
	fh.NegativeBuckets = appendFieldValues(fh.NegativeBuckets[:0], it.nBuckets)
	fh.CustomValues = nil // as Prometheus: only custom-bucket samples have bounds
	if len(it.layout.customValues) > 0 {
		fh.CustomValues = append(fh.CustomValues[:0], it.layout.customValues...)
	}
	return it.t, fh
}

func appendFieldValues(dst []float64, fs []xorField) []float64 {
	for _, f := range fs {
		dst = append(dst, math.Float64frombits(f.bits))
	}
	return dst
}

// Err returns the error that stopped iteration, if any; decode errors wrap
// ErrCorrupt.
func (it *FloatHistogramIterator) Err() error { return it.err }

// At panics: a float histogram chunk holds no floats.
func (it *FloatHistogramIterator) At() (int64, float64) {
	wrongType("At", ValFloatHistogram)
	return 0, 0
}

// AtHistogram panics: a float histogram cannot be read as an integer one.
func (it *FloatHistogramIterator) AtHistogram(*histogram.Histogram) (int64, *histogram.Histogram) {
	wrongType("AtHistogram", ValFloatHistogram)
	return 0, nil
}
