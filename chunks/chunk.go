package chunks

import "github.com/isotsdb/tsdb/histogram"

// millis is a sample time in milliseconds. It is int64 itself (an alias), so
// Seek(t int64) bool implements Iterator.Seek; Iterator spells it this way
// only because go vet's stdmethods check reports any method named Seek whose
// first parameter is spelled int64 as a misdeclared io.Seeker.
type millis = int64

// Chunk is an encoded sequence of samples in strictly increasing time order,
// of any encoding (XORChunk, XOR2Chunk, HistogramChunk, FloatHistogramChunk;
// the last two also hold the ST encodings).
//
// Appending is not part of Chunk: each encoding appends its own sample type
// through its own appender (XORChunk.Appender, XOR2Chunk.XOR2Appender,
// HistogramChunk.Appender, FloatHistogramChunk.Appender), so the float path has no histogram
// branches and no appender has a method it cannot honour.
//
// A chunk is not safe for concurrent mutation: Appender, Append and Compact
// must be called by one goroutine at a time (or under one lock). Iterator may
// be called concurrently with iteration but not with Append; see the package
// documentation.
type Chunk interface {
	// Bytes returns the encoded chunk, including its 2-byte header. The
	// slice aliases the chunk: it is valid until the next Append or Compact.
	Bytes() []byte
	// Encoding returns the chunk's encoding.
	Encoding() Encoding
	// NumSamples returns the number of samples in the chunk.
	NumSamples() int
	// Iterator returns an iterator over the samples in the chunk now.
	// reuse may be nil or any iterator returned earlier by any chunk's
	// Iterator; if it can be reused it is reset and returned, so that
	// iterating many chunks does not allocate.
	Iterator(reuse Iterator) Iterator
	// Compact trims excess capacity from the chunk's byte slice, for
	// chunks that will not be appended to again.
	Compact()
}

// Appender appends samples to a chunk.
type Appender interface {
	// Append adds a sample at the end of the chunk. The caller guarantees
	// that t is greater than the time of every sample already in the chunk
	// and that the chunk holds fewer than MaxSamples samples; an Append to
	// a full chunk is ignored.
	Append(t int64, v float64)
}

// Iterator iterates over samples in time order. An iterator is used by one
// goroutine at a time. Its shape is that of Prometheus's chunkenc.Iterator.
//
// Next and Seek return the type of the sample the iterator moved to, which
// selects the accessor to read it with: At for ValFloat, AtHistogram for
// ValHistogram, AtFloatHistogram for ValHistogram or ValFloatHistogram;
// AtT works for every type. Reading a sample with an accessor that does not
// fit its type (At on a histogram, AtHistogram on a float or a float
// histogram, AtFloatHistogram on a float) is a programming error and
// panics, as in Prometheus. Accessors are valid only after Next or Seek
// returned a type other than ValNone.
type Iterator interface {
	// Next advances to the next sample and returns its type. It returns
	// ValNone at the end or on an error (see Err); after that, Next and
	// Seek return ValNone.
	Next() ValueType
	// Seek advances to the first sample with time >= t and returns its
	// type, or ValNone if there is none. It does not move if the current
	// sample already has time >= t; it never moves backwards.
	Seek(t millis) ValueType
	// At returns the current float sample.
	At() (int64, float64)
	// AtHistogram returns the current integer histogram sample. If h is
	// not nil the sample is stored in it, reusing its slices, and h is
	// returned; otherwise a new Histogram is allocated. The result must
	// not be retained past the next call that passes it in again.
	AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram)
	// AtFloatHistogram returns the current histogram sample as a float
	// histogram, converting an integer histogram sample. fh is reused as
	// h is by AtHistogram.
	AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram)
	// AtT returns the current sample's time.
	AtT() int64
	// AtST returns the current sample's start time (the start of the
	// cumulative count, as OpenTelemetry sends it), 0 if it has none. Only
	// the XOR2, HistogramST and FloatHistogramST encodings store start
	// times; every other sample has none.
	AtST() int64
	// Err returns the error that stopped iteration, if any. Decode errors
	// wrap ErrCorrupt.
	Err() error
}

// FloatNexter is implemented by iterators that can advance and return a
// float sample in one call, for callers that step through many samples
// behind an interface (the PromQL adapter): NextFloat is Next, and, if it
// returns ValFloat, At.
type FloatNexter interface {
	NextFloat() (vt ValueType, t int64, v float64)
}

// FloatBatcher is implemented by iterators that can hand out a run of
// float samples in one call, for callers that read many samples behind an
// interface (the PromQL adapter), so that the layers of iterators under
// them are passed once a run rather than once a sample.
type FloatBatcher interface {
	// NextFloats is up to len(ts) calls of Next (len(vs) >= len(ts)), each
	// of which moves to a float sample with no start time and a time at
	// most maxt: it stores those samples' times and values in ts and vs,
	// in order, and returns how many it stored, n. It may stop sooner
	// wherever it likes, and returns 0 where the next sample is not such
	// a float or the iterator is not positioned on a sample (before the
	// first Next or Seek, or after the end); the caller goes on with
	// Next, which returns the sample after the last one stored. After
	// n > 0 the iterator is positioned on sample n-1 (At, AtT and AtST
	// report it); after 0 it has not moved.
	NextFloats(ts []int64, vs []float64, maxt int64) int
}

// NewNopIterator returns an iterator over no samples, whose Err is nil.
func NewNopIterator() Iterator { return nopIterator{} }

type nopIterator struct{}

func (nopIterator) Next() ValueType       { return ValNone }
func (nopIterator) Seek(millis) ValueType { return ValNone }
func (nopIterator) At() (int64, float64)  { return 0, 0 }
func (nopIterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	return 0, h
}
func (nopIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	return 0, fh
}
func (nopIterator) AtT() int64  { return 0 }
func (nopIterator) AtST() int64 { return 0 }
func (nopIterator) Err() error  { return nil }

// NewErrIterator returns an iterator over no samples whose Err returns err.
func NewErrIterator(err error) Iterator { return errIterator{nopIterator{}, err} }

type errIterator struct {
	nopIterator
	err error
}

func (e errIterator) Err() error { return e.err }
