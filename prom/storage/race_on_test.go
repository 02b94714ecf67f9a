//go:build race

package promstorage_test

// raceEnabled reports whether the race detector is on; long comparisons
// that are not about concurrency evaluate fewer queries under it (the full
// runs happen without it).
const raceEnabled = true
