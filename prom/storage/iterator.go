package promstorage

import (
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/isotsdb/tsdb/chunks"
)

// millis is a time in milliseconds, int64 itself (an alias). Seek spells
// its parameter this way only because go vet takes any method named Seek
// whose first parameter is spelled int64 for a misdeclared io.Seeker.
type millis = int64

// iterator presents an isotsdb sample iterator as a Prometheus
// chunkenc.Iterator, restricted to [mint, maxt] (inclusive). It only ever
// reports ValFloat or ValNone.
//
// Invariants: until the first Next or Seek, started is false and the inner
// iterator has not moved. Once done is set, every Next and Seek returns
// ValNone. While positioned (started && !done), t and v hold the current
// sample and mint <= t <= maxt.
type iterator struct {
	it         chunks.Iterator
	mint, maxt int64
	started    bool
	done       bool
	t          int64
	v          float64
}

// reset points the iterator at it, clipped to [mint, maxt].
func (i *iterator) reset(it chunks.Iterator, mint, maxt int64) {
	*i = iterator{it: it, mint: mint, maxt: maxt}
}

// settle records where the inner iterator stopped after a move that
// reported ok.
func (i *iterator) settle(ok bool) chunkenc.ValueType {
	if ok {
		i.t, i.v = i.it.At()
		if i.t <= i.maxt {
			return chunkenc.ValFloat
		}
	}
	i.done = true
	return chunkenc.ValNone
}

// Next implements chunkenc.Iterator.
func (i *iterator) Next() chunkenc.ValueType {
	if i.done {
		return chunkenc.ValNone
	}
	if !i.started {
		// The first move skips everything before mint in one Seek.
		i.started = true
		return i.settle(i.it.Seek(i.mint))
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
		return chunkenc.ValFloat
	}
	i.started = true
	return i.settle(i.it.Seek(max(t, i.mint)))
}

// At implements chunkenc.Iterator.
func (i *iterator) At() (int64, float64) { return i.t, i.v }

// AtHistogram implements chunkenc.Iterator. isotsdb holds no histograms, so
// it is never called after Next or Seek reported a value; it returns the
// current time and no histogram.
func (i *iterator) AtHistogram(*histogram.Histogram) (int64, *histogram.Histogram) {
	return i.t, nil
}

// AtFloatHistogram implements chunkenc.Iterator, like AtHistogram.
func (i *iterator) AtFloatHistogram(*histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	return i.t, nil
}

// AtT implements chunkenc.Iterator.
func (i *iterator) AtT() int64 { return i.t }

// AtST implements chunkenc.Iterator: isotsdb stores no start timestamps, so
// it is always 0 (unknown).
func (i *iterator) AtST() int64 { return 0 }

// Err implements chunkenc.Iterator.
func (i *iterator) Err() error { return i.it.Err() }
