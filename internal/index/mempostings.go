package index

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/labels"
)

// allPostingsName and allPostingsValue form the key under which the list
// of every series is kept, both in MemPostings and in the index file.
const (
	allPostingsName  = ""
	allPostingsValue = ""
)

// MemPostings is the in-memory inverted index of the head: for every label
// pair it keeps the sorted list of the references of the series that carry
// it, plus the list of all series under the key ""="".
//
// MemPostings is safe for concurrent use. Postings it returns are snapshots:
// they see the series added before the call that returned them and are not
// disturbed by later Add or Delete calls.
type MemPostings struct {
	// mu protects m and gen. Lists stored in m are copy-on-write below
	// their length: a writer may append past a list's length (readers never
	// look there) but replaces the list with a fresh slice for any other
	// change. In the root package's lock order it comes after the head's
	// stripe locks (a stripe is held across AddNext) and before the series
	// locks; nothing is locked under it (next and the match functions must
	// take no lock).
	mu  lockorder.RWMutex[lockorder.Postings]
	m   map[string]map[string]refList // name -> value -> sorted refs (reflist.go)
	gen uint64                        // incremented by every change to m
	// copies counts the lists copied to insert a ref below their last
	// one (see addLocked); under mu.
	copies uint64

	// Sorted views of m, each valid while gen is what it was built at:
	// label queries that run while no series is created or deleted skip
	// copying and sorting. values maps a name to its *sortedView; names
	// holds the view of the names. Delete clears them (they pin lists).
	values sync.Map
	names  atomic.Pointer[sortedView]
}

// sortedView is a sorted list of keys of m (values of one name, or
// names), each with a postings list, as of generation gen.
type sortedView struct {
	gen   uint64
	keys  []string
	lists []RefList
}

// maxCachedView bounds the views kept: a label with more values than this
// is copied and sorted at every call, as without the cache, rather than
// pinning that much memory.
const maxCachedView = 1 << 16

// NewMemPostings returns an empty MemPostings.
func NewMemPostings() *MemPostings {
	return &MemPostings{m: make(map[string]map[string]refList, 512)}
}

// Add records that the series ref has the label set lset. Refs usually
// arrive in increasing order; an out-of-order ref is inserted at its place.
// Adding the same ref and label set twice has no further effect. Labels
// with an empty name are not indexed (the empty name is reserved for the
// list of all series).
func (p *MemPostings) Add(ref uint64, lset labels.Labels) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lset.Range(func(l labels.Label) {
		if l.Name != allPostingsName {
			p.addLocked(ref, l.Name, l.Value)
		}
	})
	p.addLocked(ref, allPostingsName, allPostingsValue)
}

// AddNext calls next, under the lock that serializes all additions, for
// the ref of a new series and records that it has the label set lset. When
// every new ref comes from next (an increasing counter), refs reach the
// lists in increasing order even when many goroutines create series at
// once, so no list is ever copied to insert a ref out of order (which costs
// O(list length) per insertion). It returns the ref. next runs with p.mu
// held for writing: it must not call back into p or take a lock.
func (p *MemPostings) AddNext(lset labels.Labels, next func() uint64) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	ref := next()
	lset.Range(func(l labels.Label) {
		if l.Name != allPostingsName {
			p.addLocked(ref, l.Name, l.Value)
		}
	})
	p.addLocked(ref, allPostingsName, allPostingsValue)
	return ref
}

// Copies returns the number of lists copied so far to insert a ref below
// their last one: each costs time and garbage in the list's length, so a
// bulk load must add refs in increasing order.
func (p *MemPostings) Copies() uint64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.copies
}

// addLocked inserts ref into the list of name=value. p.mu must be held for
// writing.
func (p *MemPostings) addLocked(ref uint64, name, value string) {
	vals := p.m[name]
	if vals == nil {
		vals = make(map[string]refList)
		p.m[name] = vals
	}
	l := vals[value]
	p.gen++
	if l.len() == 0 || l.last() < ref {
		vals[value] = l.appended(ref) // writes past every reader's view only
		return
	}
	list := l.small
	if l.p != nil {
		list = l.snapshot().expand()
	}
	n := len(list)
	i := sort.Search(n, func(i int) bool { return list[i] >= ref })
	if list[i] == ref {
		return
	}
	// Out of order: readers may hold list, so build a new one.
	p.copies++
	nl := make([]uint64, n+1, n+1+n/4)
	copy(nl, list[:i])
	nl[i] = ref
	copy(nl[i+1:], list[i:])
	vals[value] = newRefList(nl)
}

// Delete removes the given series from every list. It visits all lists,
// holding the write lock for one label name at a time; prefer
// DeleteAffected when the label sets of the deleted series are known.
// The caller must not Add the deleted refs concurrently.
func (p *MemPostings) Delete(refs map[uint64]struct{}) {
	if len(refs) == 0 {
		return
	}
	p.mu.RLock()
	names := make([]string, 0, len(p.m))
	for name := range p.m {
		names = append(names, name)
	}
	p.mu.RUnlock()

	for _, name := range names {
		p.mu.Lock()
		for value := range p.m[name] {
			p.deleteLocked(refs, name, value)
		}
		p.mu.Unlock()
	}
	p.clearViews()
}

// clearViews drops the cached sorted views, which may pin deleted lists.
// A view built concurrently and stored after this is harmless: its gen is
// out of date, so it is never used, only replaced.
func (p *MemPostings) clearViews() {
	p.values.Clear()
	p.names.Store(nil)
}

// DeleteAffected removes the given series, whose labels are all among
// affected, from the lists of those labels and from the list of all series.
// The caller must not Add the deleted refs concurrently.
func (p *MemPostings) DeleteAffected(refs map[uint64]struct{}, affected map[labels.Label]struct{}) {
	if len(refs) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range affected {
		p.deleteLocked(refs, l.Name, l.Value)
	}
	p.deleteLocked(refs, allPostingsName, allPostingsValue)
	p.clearViews()
}

// deleteLocked filters refs out of the list of name=value, dropping the
// list (and the name) when it becomes empty. p.mu must be held for writing.
func (p *MemPostings) deleteLocked(refs map[uint64]struct{}, name, value string) {
	vals := p.m[name]
	l := vals[value].snapshot()
	first := -1
	i := 0
	for r := range l.All() {
		if _, ok := refs[r]; ok {
			first = i
			break
		}
		i++
	}
	if first < 0 {
		return
	}
	p.gen++
	nl := make([]uint64, 0, l.Len()-1)
	for r := range l.All() {
		if _, ok := refs[r]; !ok {
			nl = append(nl, r)
		}
	}
	if len(nl) > 0 {
		vals[value] = newRefList(nl)
		return
	}
	delete(vals, value)
	if len(vals) == 0 {
		delete(p.m, name)
	}
}

// Get returns the series carrying name=value.
func (p *MemPostings) Get(name, value string) Postings {
	p.mu.RLock()
	l := p.m[name][value].snapshot()
	p.mu.RUnlock()
	return l.Postings()
}

// All returns every series.
func (p *MemPostings) All() Postings {
	return p.Get(allPostingsName, allPostingsValue)
}

// AllPostings implements PostingsReader.
func (p *MemPostings) AllPostings() (Postings, error) {
	return p.All(), nil
}

// Postings implements PostingsReader: it returns the union of the lists of
// name=v for each v in values.
func (p *MemPostings) Postings(name string, values ...string) (Postings, error) {
	if len(values) == 1 {
		return p.Get(name, values[0]), nil
	}
	its := make([]Postings, 0, len(values))
	p.mu.RLock()
	vals := p.m[name]
	for _, v := range values {
		if l := vals[v]; l.len() > 0 {
			its = append(its, l.snapshot().Postings())
		}
	}
	p.mu.RUnlock()
	return Merge(its...), nil
}

// PostingsForLabelMatching returns the union of the lists of name=v for
// every v for which match returns true. match is called with the read lock
// held and must not call back into p.
func (p *MemPostings) PostingsForLabelMatching(name string, match func(value string) bool) Postings {
	if name == allPostingsName {
		return EmptyPostings()
	}
	var its []Postings
	p.mu.RLock()
	for v, l := range p.m[name] {
		if match(v) {
			its = append(its, l.snapshot().Postings())
		}
	}
	p.mu.RUnlock()
	return Merge(its...)
}

// ForEachValue calls f for every value of the label name, in sorted order,
// with the series carrying it. f runs without any lock held. It stops at
// and returns the first error f returns.
func (p *MemPostings) ForEachValue(name string, f func(value string, ps Postings) error) error {
	if name == allPostingsName {
		return nil
	}
	type entry struct {
		value string
		list  RefList
	}
	p.mu.RLock()
	entries := make([]entry, 0, len(p.m[name]))
	for v, l := range p.m[name] {
		entries = append(entries, entry{v, l.snapshot()})
	}
	p.mu.RUnlock()
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.value < b.value:
			return -1
		case a.value > b.value:
			return 1
		}
		return 0
	})
	for _, e := range entries {
		if err := f(e.value, e.list.Postings()); err != nil {
			return err
		}
	}
	return nil
}

// LabelNames returns the sorted names of all labels of all series.
func (p *MemPostings) LabelNames() []string {
	p.mu.RLock()
	names := make([]string, 0, len(p.m))
	for name := range p.m {
		if name != allPostingsName {
			names = append(names, name)
		}
	}
	p.mu.RUnlock()
	slices.Sort(names)
	return names
}

// SortedLabelNamesWithPostings returns the sorted names of all labels of
// all series, each with the references of the series carrying one of its
// values (chosen arbitrarily): a cheap first candidate for a caller that
// needs one series per name. The slices are shared between callers and
// must not be modified; later changes to p do not show in them.
func (p *MemPostings) SortedLabelNamesWithPostings() (names []string, lists []RefList) {
	p.mu.RLock()
	gen := p.gen
	if v := p.names.Load(); v != nil && v.gen == gen {
		p.mu.RUnlock()
		return v.keys, v.lists
	}
	v := &sortedView{gen: gen, keys: make([]string, 0, len(p.m)), lists: make([]RefList, 0, len(p.m))}
	for name, vals := range p.m {
		if name == allPostingsName {
			continue
		}
		for _, l := range vals {
			v.keys, v.lists = append(v.keys, name), append(v.lists, l.snapshot())
			break
		}
	}
	p.mu.RUnlock()
	v.sort()
	if len(v.keys) <= maxCachedView {
		p.names.Store(v)
	}
	return v.keys, v.lists
}

// SortedLabelValuesWithPostings returns the sorted values the label name
// has in any series, each with the references of the series carrying it.
// The slices are shared between callers and must not be modified; later
// changes to p do not show in them.
func (p *MemPostings) SortedLabelValuesWithPostings(name string) (values []string, lists []RefList) {
	if name == allPostingsName {
		return nil, nil
	}
	p.mu.RLock()
	gen := p.gen
	if c, ok := p.values.Load(name); ok {
		if v := c.(*sortedView); v.gen == gen {
			p.mu.RUnlock()
			return v.keys, v.lists
		}
	}
	vals := p.m[name]
	v := &sortedView{gen: gen, keys: make([]string, 0, len(vals)), lists: make([]RefList, 0, len(vals))}
	for val, l := range vals {
		v.keys, v.lists = append(v.keys, val), append(v.lists, l.snapshot())
	}
	p.mu.RUnlock()
	v.sort()
	if len(v.keys) > 0 && len(v.keys) <= maxCachedView {
		p.values.Store(name, v)
	}
	return v.keys, v.lists
}

// sort sorts v's keys, and its lists along with them.
func (v *sortedView) sort() {
	sort.Sort(v)
}

func (v *sortedView) Len() int           { return len(v.keys) }
func (v *sortedView) Less(i, j int) bool { return v.keys[i] < v.keys[j] }
func (v *sortedView) Swap(i, j int) {
	v.keys[i], v.keys[j] = v.keys[j], v.keys[i]
	v.lists[i], v.lists[j] = v.lists[j], v.lists[i]
}

// LabelValues returns the sorted values the label name has in any series.
func (p *MemPostings) LabelValues(name string) []string {
	if name == allPostingsName {
		return nil
	}
	p.mu.RLock()
	vals := p.m[name]
	values := make([]string, 0, len(vals))
	for v := range vals {
		values = append(values, v)
	}
	p.mu.RUnlock()
	slices.Sort(values)
	return values
}

// SortedLabelValues implements PostingsReader; it is LabelValues.
func (p *MemPostings) SortedLabelValues(name string) ([]string, error) {
	return p.LabelValues(name), nil
}

// CheckInvariants checks p's structure and returns an error describing the
// first violation found, nil if there is none: every list is non-empty,
// strictly increasing (sorted, without duplicates), and a subset of the
// list of all series; the empty label name has only the empty value (the
// list of all series). It holds the read lock throughout, so it must not
// run concurrently with Delete, which holds the lock one label name at a
// time and passes through states that violate the subset rule. Cost:
// O(total postings); the root package calls it under the invariants build
// tag and in tests.
func (p *MemPostings) CheckInvariants() error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	all := p.m[allPostingsName][allPostingsValue].snapshot().expand()
	if err := checkSortedUnique(all); err != nil {
		return fmt.Errorf("index: postings of all series: %w", err)
	}
	for name, vals := range p.m {
		if len(vals) == 0 {
			return fmt.Errorf("index: postings: label name %q has no values", name)
		}
		for value, l := range vals {
			if err := l.check(); err != nil {
				return fmt.Errorf("index: postings of %s=%q: %w", name, value, err)
			}
			list := l.snapshot().expand()
			if name == allPostingsName {
				if value != allPostingsValue {
					return fmt.Errorf("index: postings: the empty label name has value %q", value)
				}
				continue
			}
			if len(list) == 0 {
				return fmt.Errorf("index: postings of %s=%q: empty list kept", name, value)
			}
			if err := checkSortedUnique(list); err != nil {
				return fmt.Errorf("index: postings of %s=%q: %w", name, value, err)
			}
			// Both lists are sorted: one merge-like pass.
			j := 0
			for _, ref := range list {
				for j < len(all) && all[j] < ref {
					j++
				}
				if j == len(all) || all[j] != ref {
					return fmt.Errorf("index: postings of %s=%q: series %d is missing from the list of all series", name, value, ref)
				}
			}
		}
	}
	return nil
}

// checkSortedUnique returns an error if list is not strictly increasing.
func checkSortedUnique(list []uint64) error {
	for i := 1; i < len(list); i++ {
		if list[i] <= list[i-1] {
			return fmt.Errorf("ref %d at position %d follows %d: not sorted and unique", list[i], i, list[i-1])
		}
	}
	return nil
}

// NumSeries returns the number of series in the index.
func (p *MemPostings) NumSeries() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.m[allPostingsName][allPostingsValue].len()
}
