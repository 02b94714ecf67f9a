package chunks

import "strconv"

// ValueType is the type of the sample an Iterator is positioned at, as
// returned by its Next and Seek. The values and names are those of
// Prometheus's chunkenc.ValueType.
type ValueType uint8

// Value types.
const (
	// ValNone means there is no sample: the iterator is exhausted or
	// failed (see Iterator.Err).
	ValNone ValueType = iota
	// ValFloat is a float sample; read it with Iterator.At.
	ValFloat
	// ValHistogram is an integer native histogram sample; read it with
	// Iterator.AtHistogram or Iterator.AtFloatHistogram.
	ValHistogram
	// ValFloatHistogram is a float native histogram sample; read it with
	// Iterator.AtFloatHistogram.
	ValFloatHistogram
)

// String returns "none", "float", "histogram" or "floathistogram", or
// "ValueType(n)" for a value this package does not define.
func (v ValueType) String() string {
	switch v {
	case ValNone:
		return "none"
	case ValFloat:
		return "float"
	case ValHistogram:
		return "histogram"
	case ValFloatHistogram:
		return "floathistogram"
	}
	return "ValueType(" + strconv.Itoa(int(v)) + ")"
}

// wrongType panics: the caller read the current sample with an accessor
// that does not match its type (see Iterator).
//
//go:noinline
func wrongType(accessor string, have ValueType) {
	panic("chunks: " + accessor + " called on a " + have.String() + " sample")
}
