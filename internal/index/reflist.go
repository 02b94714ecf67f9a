package index

import (
	"encoding/binary"
	"fmt"
	"iter"
	"sort"
)

// The lists of MemPostings.
//
// A head holding a million series keeps some fifteen million references in
// its postings: 8 bytes each as plain slices, plus what append leaves
// unused. The references of one label value are close together (series are
// numbered as they are created, and the series of one target or metric are
// created together), so a list that has grown past packAt references is
// packed: blocks of blockRefs references, each block's first reference in
// a small table (for Seek) and the rest as uvarint deltas, one or two bytes
// each. Short lists, most label values of a high-cardinality label, stay
// plain slices: packing them would save nothing.
//
// Both forms are append-only below their length, like the plain slices
// before them: a writer appends past every reader's view (under
// MemPostings.mu) and replaces the list with a new one for any other
// change, so a reader's snapshot (RefList) taken under the lock stays
// valid with no lock.

const (
	// blockRefs is the number of references in a packed block.
	blockRefs = 64
	// packAt is the length at which a plain list is packed.
	packAt = blockRefs
)

// refBlock is the table entry of one packed block: its first reference
// and the offset in packedRefs.data of the deltas of the others.
type refBlock struct {
	first uint64
	off   int
}

// packedRefs is a packed list. A writer changes it only by appending.
type packedRefs struct {
	data   []byte // uvarint deltas of every block's references after its first
	blocks []refBlock
	n      int    // references
	last   uint64 // the greatest
}

// refList is a list of MemPostings' map: plain (small) or packed (p), the
// other nil. The zero value is the empty list.
type refList struct {
	small []uint64
	p     *packedRefs
}

// len returns the number of references.
func (l refList) len() int {
	if l.p != nil {
		return l.p.n
	}
	return len(l.small)
}

// last returns the greatest reference; l must not be empty.
func (l refList) last() uint64 {
	if l.p != nil {
		return l.p.last
	}
	return l.small[len(l.small)-1]
}

// appended returns l with ref, greater than every reference of l, added:
// it writes only past the length of any snapshot of l.
func (l refList) appended(ref uint64) refList {
	if l.p == nil {
		if len(l.small) < packAt {
			return refList{small: append(l.small, ref)}
		}
		l = refList{p: pack(l.small)}
	}
	l.p.add(ref)
	return l
}

// add appends ref, greater than every reference held.
func (p *packedRefs) add(ref uint64) {
	if p.n%blockRefs == 0 {
		p.blocks = append(p.blocks, refBlock{first: ref, off: len(p.data)})
	} else {
		p.data = binary.AppendUvarint(p.data, ref-p.last)
	}
	p.n++
	p.last = ref
}

// pack returns a packed list of refs, which are strictly increasing.
func pack(refs []uint64) *packedRefs {
	p := &packedRefs{
		data:   make([]byte, 0, len(refs)+len(refs)/4),
		blocks: make([]refBlock, 0, len(refs)/blockRefs+1),
	}
	for _, r := range refs {
		p.add(r)
	}
	return p
}

// newRefList returns the list of refs, strictly increasing and not
// retained.
func newRefList(refs []uint64) refList {
	if len(refs) <= packAt {
		return refList{small: refs}
	}
	return refList{p: pack(refs)}
}

// snapshot returns the list as it is now; the caller holds the lock that
// orders it with the writer's appends.
func (l refList) snapshot() RefList {
	if l.p == nil {
		return RefList{small: l.small}
	}
	p := l.p
	return RefList{data: p.data, blocks: p.blocks, n: p.n}
}

// RefList is a postings list of MemPostings as it was at one moment:
// strictly increasing series references. Later changes to the postings do
// not show in it, and it may be used with no lock. The zero value is the
// empty list.
type RefList struct {
	small  []uint64 // the references of a plain list
	data   []byte   // those of a packed one (see packedRefs)
	blocks []refBlock
	n      int
}

// Len returns the number of references.
func (l RefList) Len() int {
	if l.blocks != nil {
		return l.n
	}
	return len(l.small)
}

// All returns the references in increasing order.
func (l RefList) All() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		if l.blocks == nil {
			for _, r := range l.small {
				if !yield(r) {
					return
				}
			}
			return
		}
		left := l.n
		for _, blk := range l.blocks {
			ref, off := blk.first, blk.off
			if !yield(ref) {
				return
			}
			for range min(left, blockRefs) - 1 {
				d, k := binary.Uvarint(l.data[off:])
				off += k
				ref += d
				if !yield(ref) {
					return
				}
			}
			left -= blockRefs
		}
	}
}

// Postings returns an iterator over the references.
func (l RefList) Postings() Postings {
	if l.blocks == nil {
		if len(l.small) == 0 {
			return EmptyPostings()
		}
		return NewListPostings(l.small)
	}
	return &packedPostings{l: l, blk: -1}
}

// expand returns the references as a new slice.
func (l RefList) expand() []uint64 {
	out := make([]uint64, 0, l.Len())
	for r := range l.All() {
		out = append(out, r)
	}
	return out
}

// packedPostings iterates over a packed RefList.
type packedPostings struct {
	l    RefList
	blk  int    // current block; -1 before the first move
	left int    // references of the block after the current one
	off  int    // offset in l.data of the next delta of the block
	cur  uint64 // the current reference
	done bool
}

// enter moves to the first reference of block b, which exists.
func (p *packedPostings) enter(b int) {
	p.blk = b
	blk := p.l.blocks[b]
	p.cur, p.off = blk.first, blk.off
	p.left = min(p.l.n-b*blockRefs, blockRefs) - 1
}

// Next implements Postings.
func (p *packedPostings) Next() bool {
	if p.done {
		return false
	}
	if p.blk >= 0 && p.left > 0 {
		d, k := binary.Uvarint(p.l.data[p.off:])
		p.off += k
		p.cur += d
		p.left--
		return true
	}
	if p.blk+1 >= len(p.l.blocks) {
		p.done = true
		return false
	}
	p.enter(p.blk + 1)
	return true
}

// Seek implements Postings: it finds the last block starting at or
// before v in the block table, then steps through that block.
func (p *packedPostings) Seek(v uint64) bool {
	if p.done {
		return false
	}
	if p.blk >= 0 && p.cur >= v {
		return true
	}
	lo := max(p.blk, 0)
	// The first block after lo that starts above v; the one before it is
	// where v would be.
	rest := p.l.blocks[lo+1:]
	j := lo + 1 + sort.Search(len(rest), func(i int) bool { return rest[i].first > v })
	if b := j - 1; b > p.blk {
		p.enter(b)
		if p.cur >= v {
			return true
		}
	}
	for p.Next() {
		if p.cur >= v {
			return true
		}
	}
	return false
}

// At implements Postings.
func (p *packedPostings) At() uint64 {
	if p.blk < 0 || p.done {
		return 0
	}
	return p.cur
}

// Err implements Postings; a packed list never fails.
func (p *packedPostings) Err() error { return nil }

// check returns an error if l's form does not follow its length: plain up
// to packAt references, packed above, with a block table and count that
// agree and a greatest reference that is the last.
func (l refList) check() error {
	if l.p == nil {
		if len(l.small) > packAt {
			return fmt.Errorf("plain list of %d references, above %d", len(l.small), packAt)
		}
		return nil
	}
	p := l.p
	if l.small != nil {
		return fmt.Errorf("both plain and packed")
	}
	if p.n < packAt {
		return fmt.Errorf("packed list of %d references, below %d", p.n, packAt)
	}
	if want := (p.n + blockRefs - 1) / blockRefs; len(p.blocks) != want {
		return fmt.Errorf("packed list of %d references in %d blocks, want %d", p.n, len(p.blocks), want)
	}
	var last uint64
	for b, blk := range p.blocks {
		end := len(p.data)
		if b+1 < len(p.blocks) {
			end = p.blocks[b+1].off
		}
		if blk.off > end || (b > 0 && blk.first <= last) {
			return fmt.Errorf("packed block %d (first reference %d at offset %d) out of order", b, blk.first, blk.off)
		}
		last = blk.first
		off := blk.off
		for range min(p.n-b*blockRefs, blockRefs) - 1 {
			d, k := binary.Uvarint(p.data[off:end])
			if k <= 0 || d == 0 {
				return fmt.Errorf("packed block %d: bad delta at offset %d", b, off)
			}
			off += k
			last += d
		}
		if off != end {
			return fmt.Errorf("packed block %d: deltas end at offset %d, the block at %d", b, off, end)
		}
	}
	if last != p.last {
		return fmt.Errorf("packed list of %d references ends at %d, holds %d as the last", p.n, last, p.last)
	}
	return nil
}
