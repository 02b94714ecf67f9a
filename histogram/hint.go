package histogram

import "strconv"

// CounterResetHint records what is known about a counter reset at a
// histogram sample. The zero value is UnknownCounterReset.
type CounterResetHint byte

const (
	// UnknownCounterReset: nothing is known; a reader compares with the
	// previous sample to find out.
	UnknownCounterReset CounterResetHint = iota
	// CounterReset: the counters were reset at this sample.
	CounterReset
	// NotCounterReset: the counters were not reset at this sample.
	NotCounterReset
	// GaugeType: a gauge histogram, to which counter resets do not apply.
	GaugeType
)

// String returns the hint's name as PromQL test files spell it: "unknown",
// "reset", "not_reset" or "gauge"; other values print as "hint(N)".
func (h CounterResetHint) String() string {
	switch h {
	case UnknownCounterReset:
		return "unknown"
	case CounterReset:
		return "reset"
	case NotCounterReset:
		return "not_reset"
	case GaugeType:
		return "gauge"
	}
	return "hint(" + strconv.Itoa(int(h)) + ")"
}
