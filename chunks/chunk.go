package chunks

// millis is a sample time in milliseconds. It is int64 itself (an alias), so
// Seek(t int64) bool implements Iterator.Seek; Iterator spells it this way
// only because go vet's stdmethods check reports any method named Seek whose
// first parameter is spelled int64 as a misdeclared io.Seeker.
type millis = int64

// Chunk is an encoded sequence of samples in strictly increasing time order.
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
	// Appender returns an appender that continues the chunk where it ends,
	// as if every sample in it had been appended through that appender. It
	// decodes the whole chunk to get there and fails, with an error wrapping
	// ErrCorrupt, if the chunk cannot be decoded. Only the appender most
	// recently returned may be used.
	Appender() (Appender, error)
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
// goroutine at a time.
type Iterator interface {
	// Next advances to the next sample. It returns false at the end or on
	// an error (see Err); after that, Next and Seek return false.
	Next() bool
	// Seek advances to the first sample with time >= t and reports whether
	// there is one. It does not move if the current sample already has
	// time >= t; it never moves backwards.
	Seek(t millis) bool
	// At returns the current sample. It is valid only after Next or Seek
	// returned true.
	At() (int64, float64)
	// Err returns the error that stopped iteration, if any. Decode errors
	// wrap ErrCorrupt.
	Err() error
}

// NewNopIterator returns an iterator over no samples, whose Err is nil.
func NewNopIterator() Iterator { return nopIterator{} }

type nopIterator struct{}

func (nopIterator) Next() bool           { return false }
func (nopIterator) Seek(millis) bool     { return false }
func (nopIterator) At() (int64, float64) { return 0, 0 }
func (nopIterator) Err() error           { return nil }

// NewErrIterator returns an iterator over no samples whose Err returns err.
func NewErrIterator(err error) Iterator { return errIterator{err: err} }

type errIterator struct{ err error }

func (errIterator) Next() bool           { return false }
func (errIterator) Seek(millis) bool     { return false }
func (errIterator) At() (int64, float64) { return 0, 0 }
func (e errIterator) Err() error         { return e.err }
