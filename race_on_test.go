//go:build race

package tsdb

// raceEnabled reports whether the race detector is on; heavy randomized
// tests that are not about concurrency sample fewer cases under it (the
// full runs happen in the non-race pass of scripts/test).
const raceEnabled = true
