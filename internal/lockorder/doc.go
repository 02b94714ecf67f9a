// Package lockorder declares the order in which isotsdb takes its locks and
// the mutex types that hold to it.
//
// Every lock of the root package (the DB's, the head's, a Querier's, a
// Block's) and of the head's postings (index.MemPostings) is a Mutex or
// RWMutex of this package whose type argument names its class (Series,
// Stripe, ...); DB.cmtx, a channel, reports to the same table through
// Acquired and Released. Each class has a Rank;
// a goroutine takes locks in increasing rank only: while it holds a lock
// of rank r it may take only locks of rank greater than r. No class is
// re-entered: no code holds two series, two stripes or two blocks at
// once, and no goroutine read-locks an RWMutex it already holds (which
// can deadlock against a waiting writer).
//
// In a normal build the types are sync.Mutex and sync.RWMutex under
// another name: no extra field (the class is a type argument of zero
// size) and no extra work per call. Built with the tag invariants
// (go test -tags invariants), every Lock, RLock, Unlock and RUnlock also
// records, per goroutine, the ranks held, and panics when a lock is taken
// out of order or released by a goroutine that does not hold it. The
// panic names both locks, so a wrong order shows up in tests as the place
// it happens rather than as a rare deadlock.
//
// Locks not listed here (the WAL's in internal/wlog, the block
// tombstones' in internal/tombstones, vfs.MemFS's) come after all of
// these: they may be taken under any of them, and no code holding one
// calls back into the packages that hold these.
package lockorder
