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
// skipped: overlapping blocks hold copies of the same samples.
type mergeIterator struct {
	its   []chunks.Iterator
	ok    []bool // its[i] is positioned on a sample not yet returned
	t     int64
	v     float64
	valid bool // t, v hold the current sample
	err   error
	begun bool
}

func newMergeIterator(its []chunks.Iterator) *mergeIterator {
	return &mergeIterator{its: its, ok: make([]bool, len(its))}
}

func (m *mergeIterator) start() {
	if !m.begun {
		m.begun = true
		for i, it := range m.its {
			m.ok[i] = it.Next() != chunks.ValNone
		}
	}
}

// pick returns the next sample from the positioned iterators.
func (m *mergeIterator) pick() bool {
	best := -1
	var bt int64
	for i, it := range m.its {
		if !m.ok[i] {
			continue
		}
		if t, _ := it.At(); best < 0 || t < bt {
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
	m.t, m.v = m.its[best].At()
	for i, it := range m.its {
		if m.ok[i] {
			if t, _ := it.At(); t == bt {
				m.ok[i] = it.Next() != chunks.ValNone
			}
		}
	}
	return true
}

// Next advances to the next sample; see chunks.Iterator. The merged
// iterators yield floats only.
func (m *mergeIterator) Next() chunks.ValueType {
	m.start()
	m.valid = m.pick()
	return floatOrNone(m.valid)
}

// Seek advances to the first sample at or after t; see chunks.Iterator.
func (m *mergeIterator) Seek(t millis) chunks.ValueType {
	if m.valid && m.t >= t {
		return chunks.ValFloat
	}
	m.begun = true
	for i, it := range m.its {
		if m.ok[i] {
			if ct, _ := it.At(); ct >= t {
				continue
			}
		}
		m.ok[i] = it.Seek(t) != chunks.ValNone
	}
	m.valid = m.pick()
	return floatOrNone(m.valid)
}

func (m *mergeIterator) At() (int64, float64) { return m.t, m.v }
func (m *mergeIterator) AtT() int64           { return m.t }
func (m *mergeIterator) Err() error           { return m.err }

// AtHistogram panics: the merged iterators yield floats only.
func (m *mergeIterator) AtHistogram(*histogram.Histogram) (int64, *histogram.Histogram) {
	panic(wrongValueType("AtHistogram", chunks.ValFloat))
}

// AtFloatHistogram panics: the merged iterators yield floats only.
func (m *mergeIterator) AtFloatHistogram(*histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	panic(wrongValueType("AtFloatHistogram", chunks.ValFloat))
}

// floatOrNone maps "there is a sample" to ValFloat and "there is none" to
// ValNone, for iterators that yield floats only.
func floatOrNone(ok bool) chunks.ValueType {
	if ok {
		return chunks.ValFloat
	}
	return chunks.ValNone
}

// wrongValueType is the panic value of an iterator accessor called on a
// sample of another type (see chunks.Iterator).
func wrongValueType(accessor string, have chunks.ValueType) string {
	return "tsdb: " + accessor + " called on a " + have.String() + " sample"
}
