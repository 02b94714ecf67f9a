//go:build !race

package promstorage_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
