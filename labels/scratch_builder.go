package labels

import "slices"

// ScratchBuilder builds label sets one label at a time with as few
// allocations as possible: it is meant for decoders (WAL records, index
// series) that reuse one builder for many sets. A ScratchBuilder is not safe
// for concurrent use.
//
// Add keeps the strings it is given until Labels is called, which copies
// them into the result. So a caller may pass strings that alias a buffer it
// reuses (for example made with unsafe.String), as long as the buffer does
// not change before Labels returns.
type ScratchBuilder struct {
	add []Label // labels in the order added, until Sort
}

// NewScratchBuilder returns a ScratchBuilder with room for n labels.
func NewScratchBuilder(n int) ScratchBuilder {
	return ScratchBuilder{add: make([]Label, 0, max(n, 0))}
}

// Reset empties the builder, keeping its buffer.
func (b *ScratchBuilder) Reset() {
	clear(b.add) // drop references to the caller's strings
	b.add = b.add[:0]
}

// Add appends a label. Names need not arrive in order; adding the same name
// twice yields a set with a duplicate name (see Labels.Validate).
func (b *ScratchBuilder) Add(name, value string) {
	b.add = append(b.add, Label{Name: name, Value: value})
}

// Sort sorts the labels added so far by name, keeping the order of equal
// names. Labels sorts too when needed; Sort is there for callers that want
// to inspect the order.
func (b *ScratchBuilder) Sort() {
	slices.SortStableFunc(b.add, cmpName)
}

// Labels returns the labels added since the last Reset as a set. Labels that
// were added out of order are sorted first (a cheap check when they were
// not). The result does not alias the builder or the strings given to Add.
func (b *ScratchBuilder) Labels() Labels {
	if !slices.IsSortedFunc(b.add, cmpName) {
		b.Sort()
	}
	return encode(b.add)
}
