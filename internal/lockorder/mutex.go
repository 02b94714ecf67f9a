package lockorder

import "sync"

// Mutex is a sync.Mutex of lock class C. Its zero value is an unlocked
// mutex; it must not be copied after first use.
type Mutex[C Class] struct {
	mu sync.Mutex
}

// RWMutex is a sync.RWMutex of lock class C. Its zero value is an unlocked
// mutex; it must not be copied after first use. A goroutine never takes
// its read side twice (see the package comment).
type RWMutex[C Class] struct {
	mu sync.RWMutex
}
