//go:build !invariants

package lockorder

// Enabled reports whether the lock order is checked: built with the tag
// invariants.
const Enabled = false

// Lock locks m.
func (m *Mutex[C]) Lock() { m.mu.Lock() }

// Unlock unlocks m.
func (m *Mutex[C]) Unlock() { m.mu.Unlock() }

// Lock locks m for writing.
func (m *RWMutex[C]) Lock() { m.mu.Lock() }

// Unlock unlocks m for writing.
func (m *RWMutex[C]) Unlock() { m.mu.Unlock() }

// RLock locks m for reading.
func (m *RWMutex[C]) RLock() { m.mu.RLock() }

// RUnlock undoes one RLock.
func (m *RWMutex[C]) RUnlock() { m.mu.RUnlock() }

// Acquired records that the calling goroutine took a lock of rank r that
// is not a Mutex or RWMutex of this package (DB.cmtx, a channel), after
// checking the order. It does nothing without the tag invariants.
func Acquired(Rank) {}

// Released records that the calling goroutine released a lock of rank r
// it had recorded with Acquired. It does nothing without the tag
// invariants.
func Released(Rank) {}
