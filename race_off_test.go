//go:build !race

package tsdb

// raceEnabled: see race_on_test.go.
const raceEnabled = false
