package tsdb

import (
	"math"

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
	// The series with those labels: the first as it is, and only if
	// another follows, a mergedSeries of them (one allocation).
	var first Series
	var ms *mergedSeries
	for i, s := range m.sets {
		if !m.ok[i] || !labels.Equal(s.At().Labels(), min) {
			continue
		}
		switch cur := s.At(); {
		case first == nil:
			first = cur
		case ms == nil:
			ms = &mergedSeries{lset: min}
			ms.series = ms.space[:0]
			ms.series = append(ms.series, first, cur)
		default:
			ms.series = append(ms.series, cur)
		}
		m.ok[i] = s.Next()
	}
	m.cur = first
	if ms != nil {
		m.cur = ms
	}
	return true
}

func (m *mergedSeriesSet) At() Series { return m.cur }
func (m *mergedSeriesSet) Err() error { return m.err }

// mergedSeries is one series found in several sources.
type mergedSeries struct {
	lset   labels.Labels
	series []Series
	space  [3]Series // series' first elements: two blocks and the head fit
}

func (s *mergedSeries) Labels() labels.Labels { return s.lset }

// Iterator returns a merge of the sources' iterators. It reuses a
// mergeIterator passed in, and the sources' iterators in it.
func (s *mergedSeries) Iterator(reuse chunks.Iterator) chunks.Iterator {
	m, ok := reuse.(*mergeIterator)
	if !ok {
		m = &mergeIterator{}
	}
	its := m.its[:0]
	for i, ser := range s.series {
		var old chunks.Iterator
		if i < len(m.its) {
			old = m.its[i]
		}
		its = append(its, ser.Iterator(old))
	}
	m.reset(its)
	return m
}

// mergeIterator merges iterators by time. Where several have a sample at
// the same time, the one of the earliest iterator wins and the others are
// skipped: overlapping blocks hold copies of the same samples. Samples keep
// their value type.
//
// The iterator the current sample comes from (lead) stays positioned on it,
// and the accessors read it there. next is the smallest time among the
// other iterators' positions, so while the lead's following sample is
// before next, Next takes it without looking at the others: sources that do
// not overlap in time (a series in consecutive blocks and the head) cost
// one comparison a sample, not a scan of every source.
//
// Invariant: when valid, lead is the source of the current sample, cur[lead]
// and vt its type, t its time and, for a float, v its value (read once, so
// that At and AtT need no call to the source); no other iterator is
// positioned at a time at or before it and next is the least time of the
// positioned others (math.MaxInt64 if none). cur[i] is ValNone for an
// exhausted iterator.
type mergeIterator struct {
	its   []chunks.Iterator
	cur   []chunks.ValueType // type of the sample its[i] is positioned on; ValNone if exhausted (or not begun)
	lead  int
	next  int64
	t     int64
	v     float64
	vt    chunks.ValueType
	valid bool
	begun bool
	err   error
}

func newMergeIterator(its []chunks.Iterator) *mergeIterator {
	m := &mergeIterator{}
	m.reset(its)
	return m
}

// reset makes m a fresh iterator over its, keeping m's slices.
func (m *mergeIterator) reset(its []chunks.Iterator) {
	*m = mergeIterator{its: its, cur: m.cur[:0]}
	for range its {
		m.cur = append(m.cur, chunks.ValNone)
	}
}

// Next advances to the next sample; see chunks.Iterator.
func (m *mergeIterator) Next() chunks.ValueType {
	switch {
	case m.valid:
		l := m.lead
		vt, t, v := m.step(l)
		m.cur[l] = vt
		if vt == chunks.ValNone {
			if err := m.its[l].Err(); err != nil {
				return m.fail(err)
			}
		} else if t < m.next {
			m.t, m.v, m.vt = t, v, vt
			return vt
		}
	case !m.begun:
		m.begun = true
		for i, it := range m.its {
			m.cur[i] = it.Next()
		}
	case m.err != nil:
		return chunks.ValNone
	}
	return m.choose()
}

// step advances source l and returns its new sample's type, time and, for
// a float, value. The sources of a read over blocks and the head are
// called directly, without the two interface calls a sample costs
// otherwise (Next, then At or AtT): type switches on concrete types cost a
// comparison.
func (m *mergeIterator) step(l int) (chunks.ValueType, int64, float64) {
	switch it := m.its[l].(type) {
	case *blockIterator:
		vt := it.Next()
		return vt, it.t, it.v
	case *headIterator:
		vt := it.Next()
		return vt, it.t, it.v
	default:
		switch vt := it.Next(); vt {
		case chunks.ValNone:
			return vt, 0, 0
		case chunks.ValFloat:
			t, v := it.At()
			return vt, t, v
		default:
			return vt, it.AtT(), 0
		}
	}
}

// choose positions m on the earliest sample among the iterators' positions,
// moving past the copies of it in later iterators.
func (m *mergeIterator) choose() chunks.ValueType {
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
				return m.fail(err)
			}
		}
		m.valid, m.vt = false, chunks.ValNone
		return chunks.ValNone
	}
	next := int64(math.MaxInt64)
	for i, it := range m.its {
		if i == best || m.cur[i] == chunks.ValNone {
			continue
		}
		// A source holds each time at most once, so one step passes the copy.
		if it.AtT() == bt {
			if m.cur[i] = it.Next(); m.cur[i] == chunks.ValNone {
				if err := it.Err(); err != nil {
					return m.fail(err)
				}
				continue
			}
		}
		next = min(next, it.AtT())
	}
	m.lead, m.next, m.valid, m.vt = best, next, true, m.cur[best]
	m.t = bt
	if m.vt == chunks.ValFloat {
		_, m.v = m.its[best].At()
	}
	return m.vt
}

// fail ends the iteration with err.
func (m *mergeIterator) fail(err error) chunks.ValueType {
	m.err, m.valid, m.vt = err, false, chunks.ValNone
	return chunks.ValNone
}

// Seek advances to the first sample at or after t; see chunks.Iterator.
func (m *mergeIterator) Seek(t millis) chunks.ValueType {
	if m.err != nil {
		return chunks.ValNone
	}
	if m.valid && m.t >= t {
		return m.vt
	}
	begun := m.begun
	m.begun = true
	for i, it := range m.its {
		if begun && (m.cur[i] == chunks.ValNone || it.AtT() >= t) {
			continue
		}
		if m.cur[i] = it.Seek(t); m.cur[i] == chunks.ValNone {
			if err := it.Err(); err != nil {
				return m.fail(err)
			}
		}
	}
	return m.choose()
}

// NextFloats implements chunks.FloatBatcher: it takes a run from the
// source of the current sample, bounded by the other sources' next time,
// if that source is a batcher.
func (m *mergeIterator) NextFloats(ts []int64, vs []float64, maxt int64) int {
	if !m.valid {
		return 0
	}
	// Samples from next on must wait: another source may hold them, or a
	// copy of them.
	if m.next != math.MaxInt64 {
		maxt = min(maxt, m.next-1)
	}
	var n int
	switch it := m.its[m.lead].(type) {
	case *blockIterator:
		n = it.NextFloats(ts, vs, maxt)
	case *headIterator:
		n = it.NextFloats(ts, vs, maxt)
	case chunks.FloatBatcher:
		n = it.NextFloats(ts, vs, maxt)
	}
	if n > 0 {
		m.t, m.v, m.vt = ts[n-1], vs[n-1], chunks.ValFloat
		m.cur[m.lead] = chunks.ValFloat
	}
	return n
}

// NextFloat implements chunks.FloatNexter.
func (m *mergeIterator) NextFloat() (chunks.ValueType, int64, float64) {
	vt := m.Next()
	return vt, m.t, m.v
}

// At returns the current float sample; on a histogram sample it panics,
// like every chunks.Iterator.
func (m *mergeIterator) At() (int64, float64) {
	if m.vt != chunks.ValFloat {
		panic(wrongValueType("At", m.vt))
	}
	return m.t, m.v
}

func (m *mergeIterator) AtT() int64 {
	if !m.valid {
		return 0
	}
	return m.t
}

func (m *mergeIterator) AtST() int64 {
	if !m.valid {
		return 0
	}
	return m.its[m.lead].AtST()
}

func (m *mergeIterator) Err() error { return m.err }

// AtHistogram returns the current integer histogram sample, copied into h
// if h is not nil; see chunks.Iterator.
func (m *mergeIterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	if m.vt != chunks.ValHistogram {
		panic(wrongValueType("AtHistogram", m.vt))
	}
	return m.its[m.lead].AtHistogram(h)
}

// AtFloatHistogram returns the current histogram sample as a float
// histogram, copied into fh if fh is not nil; see chunks.Iterator.
func (m *mergeIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	if m.vt != chunks.ValHistogram && m.vt != chunks.ValFloatHistogram {
		panic(wrongValueType("AtFloatHistogram", m.vt))
	}
	return m.its[m.lead].AtFloatHistogram(fh)
}

// wrongValueType is the panic value of an iterator accessor called on a
// sample of another type (see chunks.Iterator).
func wrongValueType(accessor string, have chunks.ValueType) string {
	return "tsdb: " + accessor + " called on a " + have.String() + " sample"
}
