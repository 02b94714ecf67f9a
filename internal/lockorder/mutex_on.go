//go:build invariants

package lockorder

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Enabled reports whether the lock order is checked: built with the tag
// invariants.
const Enabled = true

// Lock locks m, after checking the order.
func (m *Mutex[C]) Lock() {
	Acquired(rankOf[C]())
	m.mu.Lock()
}

// Unlock unlocks m.
func (m *Mutex[C]) Unlock() {
	Released(rankOf[C]())
	m.mu.Unlock()
}

// Lock locks m for writing, after checking the order.
func (m *RWMutex[C]) Lock() {
	Acquired(rankOf[C]())
	m.mu.Lock()
}

// Unlock unlocks m for writing.
func (m *RWMutex[C]) Unlock() {
	Released(rankOf[C]())
	m.mu.Unlock()
}

// RLock locks m for reading, after checking the order.
func (m *RWMutex[C]) RLock() {
	Acquired(rankOf[C]())
	m.mu.RLock()
}

// RUnlock undoes one RLock.
func (m *RWMutex[C]) RUnlock() {
	Released(rankOf[C]())
	m.mu.RUnlock()
}

// held maps a goroutine (goroutineKey) to the ranks of the locks it holds, in the
// order taken (so ascending). mu protects it; it is a plain sync.Mutex,
// outside the order.
var held struct {
	mu sync.Mutex
	m  map[uint64][]Rank
}

// Acquired records that the calling goroutine takes a lock of rank r. It
// panics if the goroutine holds a lock of rank r or higher. The Mutex and
// RWMutex types call it before they block; a lock of another kind
// (DB.cmtx, a channel) calls it once taken.
func Acquired(r Rank) {
	id := goroutineKey()
	held.mu.Lock()
	hs := held.m[id]
	if n := len(hs); n > 0 && hs[n-1] >= r {
		hs = slices.Clone(hs)
		held.mu.Unlock()
		panic(orderViolation(r, hs))
	}
	if held.m == nil {
		held.m = map[uint64][]Rank{}
	}
	held.m[id] = append(hs, r)
	held.mu.Unlock()
}

// Released records that the calling goroutine releases a lock of rank r.
// It panics if the goroutine holds none.
func Released(r Rank) {
	id := goroutineKey()
	held.mu.Lock()
	hs := held.m[id]
	i := len(hs) - 1
	for i >= 0 && hs[i] != r {
		i--
	}
	if i < 0 {
		held.mu.Unlock()
		panic(fmt.Sprintf("lockorder: %s released by a goroutine that does not hold it (a lock must be released by the goroutine that took it)", r))
	}
	hs = append(hs[:i], hs[i+1:]...)
	if len(hs) == 0 {
		delete(held.m, id)
	} else {
		held.m[id] = hs
	}
	held.mu.Unlock()
}

// HeldRanks returns the ranks of the locks the calling goroutine holds, in
// the order taken.
func HeldRanks() []Rank {
	id := goroutineKey()
	held.mu.Lock()
	defer held.mu.Unlock()
	return slices.Clone(held.m[id])
}

// rankOf returns the rank of class C.
func rankOf[C Class]() Rank {
	var c C
	return c.Rank()
}

// orderViolation describes taking r while holding hs.
func orderViolation(r Rank, hs []Rank) string {
	top := hs[len(hs)-1]
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.String()
	}
	if top == r {
		return fmt.Sprintf("lockorder: %s taken while holding %s already (held: %s): a lock class is never re-entered", r, r, strings.Join(names, ", "))
	}
	return fmt.Sprintf("lockorder: %s (rank %d) taken while holding %s (rank %d) (held: %s): the order is %s",
		r, uint8(r), top, uint8(top), strings.Join(names, ", "), orderString())
}

// orderString lists every class in order.
func orderString() string {
	var b strings.Builder
	for i, r := range Ranks() {
		if i > 0 {
			b.WriteString(" < ")
		}
		b.WriteString(r.String())
	}
	return b.String()
}
