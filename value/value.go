// Package value defines the special float values the database gives a
// meaning: for now the stale marker. It imports nothing, so that every
// other package (chunks, histogram users, the root) can share the one
// definition.
//
// # Stale markers
//
// A stale marker is a sample whose value is the NaN with the bits
// StaleNaN (Prometheus's value.StaleNaN). A writer appends one to a
// series to say that the series ended at that time: its target vanished
// from a scrape, or the series from its target. For a native histogram
// series the marker is a histogram whose Sum has those bits (and nothing
// else). Appending the float marker with Append (in order, without a
// start time) to a series whose newest sample is a histogram stores the
// histogram marker of the same kind instead, as Prometheus's head does.
//
// What a marker means to reads:
//
//   - The database stores a marker as an ordinary sample, bit for bit: it
//     counts as the series' newest sample, takes part in duplicate and
//     out-of-order checks (a marker and a real NaN at one time are two
//     different values), is logged, compacted and replayed, and
//     iterators return it like any other sample (At returns a NaN with
//     the StaleNaN bits; AtHistogram or AtFloatHistogram a histogram with
//     that Sum). Use IsStaleNaN to tell it from a NaN that was measured.
//   - A series ends at its marker: PromQL (the prom/ adapter, or any
//     Prometheus engine on top of the Querier) treats the series as gone
//     from the marker's time on, until a later real sample, instead of
//     looking back five minutes for the last value.
//   - Nothing in this module drops or hides markers; deletion and
//     retention treat them as samples.
package value

import "math"

// StaleNaN is the bit pattern of the stale marker: a NaN that no
// arithmetic produces (its payload is 2), so that it is never mistaken for
// a measured NaN. Compare bits, never values: every NaN compares unequal
// to everything.
const StaleNaN uint64 = 0x7ff0000000000002

// IsStaleNaN reports whether v is the stale marker: exactly the bits
// StaleNaN, not just any NaN.
func IsStaleNaN(v float64) bool { return math.Float64bits(v) == StaleNaN }

// StaleMarker returns the stale marker as a float64, for Append.
func StaleMarker() float64 { return math.Float64frombits(StaleNaN) }
