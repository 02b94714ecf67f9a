//go:build invariants

package lockorder

// currentG returns the address of the calling goroutine's runtime
// descriptor (getg_amd64.s): unique among the goroutines alive, which is
// all the held-lock table needs, and some hundred times cheaper than
// parsing runtime.Stack. The runtime reuses the descriptor of a goroutine
// that exited; a goroutine never exits holding one of our locks (that
// would be a bug of its own), so its record is empty by then.
func currentG() uintptr

// goroutineKey identifies the calling goroutine.
func goroutineKey() uint64 { return uint64(currentG()) }
