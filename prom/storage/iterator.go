package promstorage

import (
	"slices"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/isotsdb/tsdb/chunks"
	ihistogram "github.com/isotsdb/tsdb/histogram"
)

// millis is a time in milliseconds, int64 itself (an alias). Seek spells
// its parameter this way only because go vet takes any method named Seek
// whose first parameter is spelled int64 for a misdeclared io.Seeker.
type millis = int64

// iterator presents an isotsdb sample iterator as a Prometheus
// chunkenc.Iterator, restricted to [mint, maxt] (inclusive). Value types
// map one to one (chunks.ValueType has chunkenc's values); histograms are
// converted with ToPromHistogram and ToPromFloatHistogram.
//
// Where the inner iterator is a chunks.FloatBatcher, Next takes float
// samples from it a run at a time into batch, and hands them out from
// there: the engine calls At, AtST, Next and AtT for every sample, and a
// call through the layers of isotsdb iterators (merge, block or head,
// chunk) costs more than the sample's decoding.
//
// Invariants: until the first Next or Seek, started is false and the inner
// iterator has not moved. Once done is set, every Next and Seek returns
// ValNone. While positioned (started && !done), vt is the current sample's
// type, t its time, v its value if it is a float, and mint <= t <= maxt.
// batch.t[bi:bn] are the samples after the current one that the inner
// iterator has moved past (it is on batch.t[bn-1]), all floats in range;
// bi == bn when there are none. fromBatch is set when the current sample
// came from a batch: a float without start time.
type iterator struct {
	it         chunks.Iterator
	nf         chunks.FloatNexter  // it, if it is one; nil otherwise
	fb         chunks.FloatBatcher // it, if it is one; nil otherwise
	mint, maxt int64
	started    bool
	done       bool
	fromBatch  bool
	vt         chunks.ValueType
	t          int64
	v          float64

	batch  *floatBatch // allocated at the first batch; kept by reset
	bi, bn int

	h  *ihistogram.Histogram // scratch for AtHistogram
	fh *ihistogram.FloatHistogram
}

// batchSize is the number of samples a batch holds: enough that a batch's
// calls cost little per sample, few enough that a batch read past where
// the engine stops (it stops at the selector's end, which the batch
// respects, so only on an error or a cancelled query) costs little.
const batchSize = 32

// floatBatch holds float samples taken from a chunks.FloatBatcher.
type floatBatch struct {
	t [batchSize]int64
	v [batchSize]float64
}

// reset points the iterator at it, clipped to [mint, maxt].
func (i *iterator) reset(it chunks.Iterator, mint, maxt int64) {
	nf, _ := it.(chunks.FloatNexter)
	fb, _ := it.(chunks.FloatBatcher)
	*i = iterator{it: it, nf: nf, fb: fb, mint: mint, maxt: maxt, batch: i.batch, h: i.h, fh: i.fh}
}

// settle records where the inner iterator stopped after a move that
// returned vt.
func (i *iterator) settle(vt chunks.ValueType) chunkenc.ValueType {
	i.fromBatch = false
	if vt != chunks.ValNone {
		if vt == chunks.ValFloat {
			i.t, i.v = i.it.At()
		} else {
			i.t = i.it.AtT()
		}
		if i.t <= i.maxt {
			i.vt = vt
			return chunkenc.ValueType(vt)
		}
	}
	i.done, i.vt = true, chunks.ValNone
	return chunkenc.ValNone
}

// Next implements chunkenc.Iterator.
func (i *iterator) Next() chunkenc.ValueType {
	if i.done {
		return chunkenc.ValNone
	}
	if i.bi < i.bn {
		i.t, i.v = i.batch.t[i.bi], i.batch.v[i.bi]
		i.bi++
		return chunkenc.ValFloat
	}
	if !i.started {
		// The first move skips everything before mint in one Seek.
		i.started = true
		return i.settle(i.it.Seek(i.mint))
	}
	if i.fb != nil {
		if i.batch == nil {
			i.batch = &floatBatch{}
		}
		if n := i.fb.NextFloats(i.batch.t[:], i.batch.v[:], i.maxt); n > 0 {
			i.t, i.v, i.vt, i.fromBatch = i.batch.t[0], i.batch.v[0], chunks.ValFloat, true
			i.bi, i.bn = 1, n
			return chunkenc.ValFloat
		}
	}
	i.fromBatch = false
	if i.nf != nil {
		// One call for the move and the sample.
		vt, t, v := i.nf.NextFloat()
		if vt == chunks.ValFloat && t <= i.maxt {
			i.t, i.v, i.vt = t, v, vt
			return chunkenc.ValFloat
		}
		if vt == chunks.ValFloat || vt == chunks.ValNone {
			i.done, i.vt = true, chunks.ValNone
			return chunkenc.ValNone
		}
		return i.settle(vt)
	}
	return i.settle(i.it.Next())
}

// Seek implements chunkenc.Iterator: it moves to the first sample at or
// after t, not at all if the current sample already qualifies, and never
// backwards.
func (i *iterator) Seek(t millis) chunkenc.ValueType {
	if i.done {
		return chunkenc.ValNone
	}
	if i.started && i.t >= t {
		return chunkenc.ValueType(i.vt)
	}
	if i.bi < i.bn && i.batch.t[i.bn-1] >= t {
		// In the batch: the first sample at or after t.
		j, _ := slices.BinarySearch(i.batch.t[i.bi:i.bn], t)
		j += i.bi
		i.t, i.v = i.batch.t[j], i.batch.v[j]
		i.bi = j + 1
		return chunkenc.ValFloat
	}
	// Past the batch, if any: the inner iterator is on its last sample,
	// before t.
	i.bi, i.bn = 0, 0
	i.started = true
	return i.settle(i.it.Seek(max(t, i.mint)))
}

// At implements chunkenc.Iterator.
func (i *iterator) At() (int64, float64) { return i.t, i.v }

// AtHistogram implements chunkenc.Iterator. The sample is converted from
// isotsdb's histogram; if h is not nil it is copied into h.
func (i *iterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	_, i.h = i.it.AtHistogram(i.h)
	ph := ToPromHistogram(i.h)
	if h == nil {
		return i.t, ph
	}
	ph.CopyTo(h)
	return i.t, h
}

// AtFloatHistogram implements chunkenc.Iterator, like AtHistogram; an
// integer histogram sample is converted to a float one.
func (i *iterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	_, i.fh = i.it.AtFloatHistogram(i.fh)
	pfh := ToPromFloatHistogram(i.fh)
	if fh == nil {
		return i.t, pfh
	}
	pfh.CopyTo(fh)
	return i.t, fh
}

// AtT implements chunkenc.Iterator.
func (i *iterator) AtT() int64 { return i.t }

// AtST implements chunkenc.Iterator: the sample's start time, 0 if it has
// none.
func (i *iterator) AtST() int64 {
	if i.fromBatch {
		return 0
	}
	return i.it.AtST()
}

// Err implements chunkenc.Iterator.
func (i *iterator) Err() error { return i.it.Err() }
