package tsdb

import (
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
)

// mergeSeriesSets merges series sets that are each sorted by labels into
// one sorted set. Series with the same labels in several sets become one
// series whose samples are merged by time (see mergeIterator). The sets
// are given oldest data first.
func mergeSeriesSets(sets []SeriesSet) SeriesSet {
	switch len(sets) {
	case 0:
		return emptySeriesSet{}
	case 1:
		return sets[0]
	}
	m := &mergedSeriesSet{sets: sets, ok: make([]bool, len(sets))}
	for i, s := range sets {
		m.ok[i] = s.Next()
	}
	return m
}

// mergedSeriesSet is mergeSeriesSets' result. ok[i] says whether sets[i] is
// positioned on a series not yet returned.
type mergedSeriesSet struct {
	sets []SeriesSet
	ok   []bool
	cur  Series
	err  error
}

func (m *mergedSeriesSet) Next() bool {
	if m.err != nil {
		return false
	}
	// The smallest label set among the sets' current series.
	var min labels.Labels
	found := false
	for i, s := range m.sets {
		if !m.ok[i] {
			continue
		}
		if l := s.At().Labels(); !found || labels.Compare(l, min) < 0 {
			min, found = l, true
		}
	}
	if !found {
		for _, s := range m.sets {
			if err := s.Err(); err != nil {
				m.err = err
				break
			}
		}
		return false
	}
	var same []Series
	for i, s := range m.sets {
		if m.ok[i] && labels.Equal(s.At().Labels(), min) {
			same = append(same, s.At())
			m.ok[i] = s.Next()
		}
	}
	if len(same) == 1 {
		m.cur = same[0]
	} else {
		m.cur = &mergedSeries{lset: min, series: same}
	}
	return true
}

func (m *mergedSeriesSet) At() Series { return m.cur }
func (m *mergedSeriesSet) Err() error { return m.err }

// mergedSeries is one series found in several sources.
type mergedSeries struct {
	lset   labels.Labels
	series []Series
}

func (s *mergedSeries) Labels() labels.Labels { return s.lset }

func (s *mergedSeries) Iterator(chunks.Iterator) chunks.Iterator {
	its := make([]chunks.Iterator, len(s.series))
	for i, ser := range s.series {
		its[i] = ser.Iterator(nil)
	}
	return newMergeIterator(its)
}

// mergeIterator merges iterators by time. Where several have a sample at
// the same time, the one of the earliest iterator wins and the others are
// skipped: overlapping blocks hold copies of the same samples. Samples keep
// their value type.
//
// Invariant: valid is true exactly when the iterator is positioned on a
// sample; then vt is its type, t its time, and v (ValFloat), h
// (ValHistogram) or fh (ValFloatHistogram) a copy of its value: the
// iterator it came from has already moved on.
type mergeIterator struct {
	its   []chunks.Iterator
	cur   []chunks.ValueType // type of the sample its[i] is on and that is not yet returned; ValNone if none
	vt    chunks.ValueType
	t, st int64
	v     float64
	h     *histogram.Histogram
	fh    *histogram.FloatHistogram
	valid bool
	err   error
	begun bool
}

func newMergeIterator(its []chunks.Iterator) *mergeIterator {
	return &mergeIterator{its: its, cur: make([]chunks.ValueType, len(its))}
}

func (m *mergeIterator) start() {
	if !m.begun {
		m.begun = true
		for i, it := range m.its {
			m.cur[i] = it.Next()
		}
	}
}

// pick returns the next sample from the positioned iterators.
func (m *mergeIterator) pick() bool {
	best := -1
	var bt int64
	for i, it := range m.its {
		if m.cur[i] == chunks.ValNone {
			continue
		}
		if t := it.AtT(); best < 0 || t < bt {
			best, bt = i, t
		}
	}
	if best < 0 {
		for _, it := range m.its {
			if err := it.Err(); err != nil {
				m.err = err
				break
			}
		}
		return false
	}
	m.t, m.vt = bt, m.cur[best]
	m.st = m.its[best].AtST()
	switch bi := m.its[best]; m.vt {
	case chunks.ValFloat:
		_, m.v = bi.At()
	case chunks.ValHistogram:
		_, m.h = bi.AtHistogram(m.h)
	default:
		_, m.fh = bi.AtFloatHistogram(m.fh)
	}
	for i, it := range m.its {
		if m.cur[i] != chunks.ValNone && it.AtT() == bt {
			m.cur[i] = it.Next()
		}
	}
	return true
}

// Next advances to the next sample; see chunks.Iterator.
func (m *mergeIterator) Next() chunks.ValueType {
	m.start()
	return m.settle(m.pick())
}

// Seek advances to the first sample at or after t; see chunks.Iterator.
func (m *mergeIterator) Seek(t millis) chunks.ValueType {
	if m.valid && m.t >= t {
		return m.vt
	}
	m.begun = true
	for i, it := range m.its {
		if m.cur[i] != chunks.ValNone && it.AtT() >= t {
			continue
		}
		m.cur[i] = it.Seek(t)
	}
	return m.settle(m.pick())
}

func (m *mergeIterator) settle(ok bool) chunks.ValueType {
	m.valid = ok
	if !ok {
		m.vt = chunks.ValNone
	}
	return m.vt
}

// At returns the current float sample; on a histogram sample it panics,
// like every chunks.Iterator.
func (m *mergeIterator) At() (int64, float64) {
	if m.vt != chunks.ValFloat {
		panic(wrongValueType("At", m.vt))
	}
	return m.t, m.v
}

func (m *mergeIterator) AtT() int64  { return m.t }
func (m *mergeIterator) AtST() int64 { return m.st }
func (m *mergeIterator) Err() error  { return m.err }

// AtHistogram returns the current integer histogram sample, copied into h
// if h is not nil; see chunks.Iterator.
func (m *mergeIterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	if m.vt != chunks.ValHistogram {
		panic(wrongValueType("AtHistogram", m.vt))
	}
	if h == nil {
		return m.t, m.h.Copy()
	}
	*h = *m.h.Copy()
	return m.t, h
}

// AtFloatHistogram returns the current histogram sample as a float
// histogram, copied into fh if fh is not nil; see chunks.Iterator.
func (m *mergeIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	var src *histogram.FloatHistogram
	switch m.vt {
	case chunks.ValHistogram:
		src = m.h.ToFloat()
	case chunks.ValFloatHistogram:
		src = m.fh.Copy()
	default:
		panic(wrongValueType("AtFloatHistogram", m.vt))
	}
	if fh == nil {
		return m.t, src
	}
	*fh = *src
	return m.t, fh
}

// wrongValueType is the panic value of an iterator accessor called on a
// sample of another type (see chunks.Iterator).
func wrongValueType(accessor string, have chunks.ValueType) string {
	return "tsdb: " + accessor + " called on a " + have.String() + " sample"
}
