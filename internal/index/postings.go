package index

import (
	"slices"
)

// Postings is an iterator over a strictly increasing list of series
// references. Implementations are lazy: they compute values on demand and
// hold no more than their inputs.
//
// A Postings is not safe for concurrent use; each goroutine needs its own.
type Postings interface {
	// Next advances to the next value and reports whether there is one.
	Next() bool
	// Seek advances to the first value >= v and reports whether there is
	// one. If the current value already is >= v, Seek does not move. Seek
	// may be called before the first Next.
	Seek(v uint64) bool
	// At returns the current value. It is only valid after Next or Seek
	// returned true.
	At() uint64
	// Err returns the error that stopped iteration, if any.
	Err() error
}

// emptyPostings is the zero-size Postings with no values. Set operations
// recognise it to short-circuit.
type emptyPostings struct{}

func (emptyPostings) Next() bool       { return false }
func (emptyPostings) Seek(uint64) bool { return false }
func (emptyPostings) At() uint64       { return 0 }
func (emptyPostings) Err() error       { return nil }

// EmptyPostings returns a Postings with no values.
func EmptyPostings() Postings { return emptyPostings{} }

// isEmpty reports whether p is known to hold no values without iterating it.
func isEmpty(p Postings) bool {
	_, ok := p.(emptyPostings)
	return ok
}

// errPostings is a Postings that holds only an error.
type errPostings struct{ err error }

func (errPostings) Next() bool       { return false }
func (errPostings) Seek(uint64) bool { return false }
func (errPostings) At() uint64       { return 0 }
func (e errPostings) Err() error     { return e.err }

// ErrPostings returns a Postings with no values whose Err returns err.
func ErrPostings(err error) Postings { return errPostings{err} }

// ListPostings iterates over a sorted slice of references. It does not copy
// the slice; the caller must not modify it while the iterator is in use.
type ListPostings struct {
	list []uint64
	// i is the index of the current value: -1 before the first Next or
	// Seek, len(list) once exhausted.
	i int
}

// NewListPostings returns a Postings over list, which must be sorted in
// strictly increasing order.
func NewListPostings(list []uint64) *ListPostings {
	return &ListPostings{list: list, i: -1}
}

// Next implements Postings.
func (p *ListPostings) Next() bool {
	if p.i < len(p.list) {
		p.i++
	}
	return p.i < len(p.list)
}

// Seek implements Postings. It gallops ahead (probing 1, 2, 4, ... values
// on) and then binary-searches, so short skips, the common case in
// intersections, cost little.
func (p *ListPostings) Seek(v uint64) bool {
	if p.i < 0 {
		p.i = 0
	}
	n := len(p.list)
	if p.i >= n {
		return false
	}
	if p.list[p.i] >= v {
		return true
	}
	// Invariant: p.list[lo-1] < v.
	lo, hi, step := p.i+1, p.i+1, 1
	for hi < n && p.list[hi] < v {
		lo = hi + 1
		hi += step
		step <<= 1
	}
	hi = min(hi, n)
	// The answer is in [lo, hi]: p.list[hi] >= v or hi == n.
	j, _ := slices.BinarySearch(p.list[lo:hi], v)
	p.i = lo + j
	return p.i < n
}

// At implements Postings.
func (p *ListPostings) At() uint64 {
	if p.i < 0 || p.i >= len(p.list) {
		return 0
	}
	return p.list[p.i]
}

// Err implements Postings; a ListPostings never fails.
func (p *ListPostings) Err() error { return nil }

// Len returns the number of values the iterator was created with.
func (p *ListPostings) Len() int { return len(p.list) }

// ExpandPostings drains p into a slice.
func ExpandPostings(p Postings) ([]uint64, error) {
	var res []uint64
	if lp, ok := p.(*ListPostings); ok && lp.i < 0 {
		res = make([]uint64, 0, len(lp.list))
	}
	for p.Next() {
		res = append(res, p.At())
	}
	return res, p.Err()
}

// Intersect returns a lazy Postings over the values present in every one of
// its. With no inputs it is empty.
func Intersect(its ...Postings) Postings {
	switch len(its) {
	case 0:
		return EmptyPostings()
	case 1:
		return its[0]
	}
	for _, p := range its {
		if isEmpty(p) {
			return EmptyPostings()
		}
	}
	return &intersectPostings{its: its}
}

// intersectPostings walks its in lockstep. Invariant while positioned: every
// input is positioned at cur.
type intersectPostings struct {
	its  []Postings
	cur  uint64
	done bool
}

func (p *intersectPostings) Next() bool {
	if p.done {
		return false
	}
	if !p.its[0].Next() {
		p.done = true
		return false
	}
	return p.align(p.its[0].At())
}

func (p *intersectPostings) Seek(v uint64) bool {
	if p.done {
		return false
	}
	if !p.its[0].Seek(v) {
		p.done = true
		return false
	}
	return p.align(p.its[0].At())
}

// align seeks every input to target, raising target whenever one of them
// skips past it, until all agree or one is exhausted. its[0] is at target.
func (p *intersectPostings) align(target uint64) bool {
	agreed := 1 // inputs known to be at target, counting round-robin
	for i := 1; agreed < len(p.its); i = (i + 1) % len(p.its) {
		it := p.its[i]
		if !it.Seek(target) {
			p.done = true
			return false
		}
		if at := it.At(); at > target {
			target = at
			agreed = 1
		} else {
			agreed++
		}
	}
	p.cur = target
	return true
}

func (p *intersectPostings) At() uint64 { return p.cur }

func (p *intersectPostings) Err() error {
	for _, it := range p.its {
		if err := it.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Merge returns a lazy Postings over the union of its, without duplicates.
// Two inputs are merged pairwise; more go through a min-heap.
func Merge(its ...Postings) Postings {
	nonEmpty := its[:0:0]
	for _, p := range its {
		if !isEmpty(p) {
			nonEmpty = append(nonEmpty, p)
		}
	}
	switch len(nonEmpty) {
	case 0:
		return EmptyPostings()
	case 1:
		return nonEmpty[0]
	case 2:
		return &mergePair{a: nonEmpty[0], b: nonEmpty[1]}
	}
	return &mergeHeap{its: nonEmpty}
}

// mergePair is the union of exactly two inputs.
type mergePair struct {
	a, b       Postings
	aOK, bOK   bool // input is positioned at a valid value
	started    bool
	positioned bool
	cur        uint64
	err        error
}

func (p *mergePair) Next() bool {
	if !p.started {
		p.started = true
		p.aOK, p.bOK = p.a.Next(), p.b.Next()
	} else if p.positioned {
		if p.aOK && p.a.At() == p.cur {
			p.aOK = p.a.Next()
		}
		if p.bOK && p.b.At() == p.cur {
			p.bOK = p.b.Next()
		}
	}
	return p.pick()
}

func (p *mergePair) Seek(v uint64) bool {
	if p.positioned && p.cur >= v {
		return true
	}
	if !p.started {
		p.started = true
		p.aOK, p.bOK = p.a.Seek(v), p.b.Seek(v)
	} else {
		if p.aOK {
			p.aOK = p.a.Seek(v)
		}
		if p.bOK {
			p.bOK = p.b.Seek(v)
		}
	}
	return p.pick()
}

// pick positions the merge at the smaller current input value.
func (p *mergePair) pick() bool {
	if err := p.a.Err(); err != nil {
		p.err = err
	} else if err := p.b.Err(); err != nil {
		p.err = err
	}
	p.positioned = false
	if p.err != nil {
		return false
	}
	switch {
	case p.aOK && p.bOK:
		p.cur = min(p.a.At(), p.b.At())
	case p.aOK:
		p.cur = p.a.At()
	case p.bOK:
		p.cur = p.b.At()
	default:
		return false
	}
	p.positioned = true
	return true
}

func (p *mergePair) At() uint64 { return p.cur }
func (p *mergePair) Err() error { return p.err }

// mergeHeap is the union of many inputs. Invariant once started: h holds
// exactly the inputs that are positioned at a value, as a min-heap by their
// current value, which each entry caches to save interface calls.
type mergeHeap struct {
	its        []Postings
	h          []heapEntry
	started    bool
	positioned bool
	cur        uint64
	err        error
}

type heapEntry struct {
	at uint64
	p  Postings
}

// start positions every input with move (Next or Seek) and builds the heap.
func (p *mergeHeap) start(move func(Postings) bool) bool {
	p.started = true
	p.h = make([]heapEntry, 0, len(p.its))
	for _, it := range p.its {
		if move(it) {
			p.h = append(p.h, heapEntry{it.At(), it})
		} else if err := it.Err(); err != nil {
			p.err = err
			return false
		}
	}
	for i := len(p.h)/2 - 1; i >= 0; i-- {
		p.down(i)
	}
	return true
}

func (p *mergeHeap) Next() bool {
	if p.err != nil {
		return false
	}
	if !p.started {
		if !p.start(Postings.Next) {
			return false
		}
	} else if p.positioned {
		for len(p.h) > 0 && p.h[0].at == p.cur {
			if !p.advanceTop(p.h[0].p.Next()) {
				return false
			}
		}
	}
	return p.pick()
}

func (p *mergeHeap) Seek(v uint64) bool {
	if p.err != nil {
		return false
	}
	if p.positioned && p.cur >= v {
		return true
	}
	if !p.started {
		if !p.start(func(it Postings) bool { return it.Seek(v) }) {
			return false
		}
	} else {
		for len(p.h) > 0 && p.h[0].at < v {
			if !p.advanceTop(p.h[0].p.Seek(v)) {
				return false
			}
		}
	}
	return p.pick()
}

// advanceTop restores the heap after its top input was moved; ok is what
// the move returned. It reports false if the input failed.
func (p *mergeHeap) advanceTop(ok bool) bool {
	if ok {
		p.h[0].at = p.h[0].p.At()
		p.down(0)
		return true
	}
	if err := p.h[0].p.Err(); err != nil {
		p.err = err
		p.positioned = false
		return false
	}
	last := len(p.h) - 1
	p.h[0] = p.h[last]
	p.h[last] = heapEntry{}
	p.h = p.h[:last]
	if last > 0 {
		p.down(0)
	}
	return true
}

func (p *mergeHeap) pick() bool {
	if len(p.h) == 0 {
		p.positioned = false
		return false
	}
	p.cur = p.h[0].at
	p.positioned = true
	return true
}

func (p *mergeHeap) down(i int) {
	h := p.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].at < h[l].at {
			m = r
		}
		if h[m].at >= h[i].at {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (p *mergeHeap) At() uint64 { return p.cur }
func (p *mergeHeap) Err() error { return p.err }

// Without returns a lazy Postings over the values of full that are not in
// drop.
func Without(full, drop Postings) Postings {
	if isEmpty(full) {
		return full
	}
	if isEmpty(drop) {
		return full
	}
	return &withoutPostings{full: full, drop: drop}
}

// withoutPostings filters full by drop. drop is only ever moved forward to
// the value of full being checked.
type withoutPostings struct {
	full, drop  Postings
	dropStarted bool
	dropDone    bool // drop is exhausted: everything else is kept
	failed      bool // drop failed; Err reports why
}

// keep reports whether v, the current value of full, is absent from drop.
// It returns false when drop fails, setting p.failed.
func (p *withoutPostings) keep(v uint64) bool {
	if p.dropDone {
		return true
	}
	if !p.dropStarted || p.drop.At() < v {
		p.dropStarted = true
		if !p.drop.Seek(v) {
			if p.drop.Err() != nil {
				p.failed = true
				return false
			}
			p.dropDone = true
			return true
		}
	}
	return p.drop.At() != v
}

func (p *withoutPostings) Next() bool {
	if p.failed {
		return false
	}
	for p.full.Next() {
		if p.keep(p.full.At()) {
			return true
		}
		if p.failed {
			return false
		}
	}
	return false
}

func (p *withoutPostings) Seek(v uint64) bool {
	if p.failed || !p.full.Seek(v) {
		return false
	}
	if p.keep(p.full.At()) {
		return true
	}
	if p.failed {
		return false
	}
	return p.Next()
}

func (p *withoutPostings) At() uint64 { return p.full.At() }

func (p *withoutPostings) Err() error {
	if err := p.full.Err(); err != nil {
		return err
	}
	return p.drop.Err()
}
