package tsdb

import "sync/atomic"

// atomicMax raises a to x if x is greater; it never lowers a. Safe for
// concurrent use with other raises and loads.
func atomicMax(a *atomic.Int64, x int64) {
	for {
		cur := a.Load()
		if x <= cur || a.CompareAndSwap(cur, x) {
			return
		}
	}
}

// atomicMin lowers a to x if x is smaller; it never raises a.
func atomicMin(a *atomic.Int64, x int64) {
	for {
		cur := a.Load()
		if x >= cur || a.CompareAndSwap(cur, x) {
			return
		}
	}
}

// atomicMaxUint64 raises a to x if x is greater; it never lowers a.
func atomicMaxUint64(a *atomic.Uint64, x uint64) {
	for {
		cur := a.Load()
		if x <= cur || a.CompareAndSwap(cur, x) {
			return
		}
	}
}
