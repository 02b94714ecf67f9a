package chunks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/value"
)

// Histogram chunks (EncHistogram, EncFloatHistogram) have a 3-byte header:
// the sample count (uint16, big-endian) and a flags byte whose top two bits
// are the counter-reset header (see HistogramChunk.CounterResetHeader); the
// other six bits are zero. The layout (histogram_layout.go) and the samples
// follow as one bit stream.
//
// Integer histogram samples (HistogramChunk) store, per field:
//
//	            time   count  zero count  sum          each bucket (delta to the bucket before)
//	sample 0    varbit uvarbit uvarbit    64 raw bits  varbit
//	sample 1+   varbit delta-of-delta for time, counts and buckets; sum XOR'd as in XOR chunks
//
// (For sample 1 the "previous delta" is 0, so its delta-of-delta is its
// delta.) Float histogram samples (FloatHistogramChunk) store the time the
// same way but every count, the sum and every bucket as a float XOR'd
// against the same field of the previous sample, each field with its own
// leading/trailing-zero window; sample 0 stores them as raw bits.
//
// A stale marker (sum with the bits of a Prometheus stale NaN) stores no
// buckets: in integer chunks its count delta-of-deltas are written as 0, in
// float chunks its counts are XOR'd as zeros. Once a chunk holds a stale
// marker, only stale markers can follow it in that chunk.
const (
	histHeaderSize = 3
	histFlagsByte  = 2
	// counterResetMask selects the counter-reset header bits of the flags.
	counterResetMask = 0b1100_0000
)

// staleNaNBits are the bits of the NaN Prometheus uses as a stale marker.
const staleNaNBits = value.StaleNaN

func isStale(f float64) bool { return value.IsStaleNaN(f) }

// counterResetBits maps a hint to the header bits Prometheus uses for it.
func counterResetBits(h histogram.CounterResetHint) byte {
	switch h {
	case histogram.CounterReset:
		return 0b1000_0000
	case histogram.NotCounterReset:
		return 0b0100_0000
	case histogram.GaugeType:
		return 0b1100_0000
	}
	return 0
}

func counterResetFromBits(b byte) histogram.CounterResetHint {
	switch b & counterResetMask {
	case 0b1000_0000:
		return histogram.CounterReset
	case 0b0100_0000:
		return histogram.NotCounterReset
	case 0b1100_0000:
		return histogram.GaugeType
	}
	return histogram.UnknownCounterReset
}

// sampleHint is the CounterResetHint an iterator reports for the sample at
// index i (0-based) of a chunk with header hdr: gauge chunks hold gauges,
// samples after the first of a counter chunk are not resets by
// construction, and the first sample is unknown whatever the header says,
// because whether the previous chunk is really its predecessor is not known
// at read time (this is what Prometheus reports).
func sampleHint(hdr histogram.CounterResetHint, i int) histogram.CounterResetHint {
	switch {
	case hdr == histogram.GaugeType:
		return histogram.GaugeType
	case i > 0:
		return histogram.NotCounterReset
	}
	return histogram.UnknownCounterReset
}

// histChunk is the byte handling shared by both histogram chunk types.
type histChunk struct {
	w bitWriter // w.buf is the whole chunk, header included

	// borrowed is set when w.buf belongs to the caller of a FromData
	// function: an appender then copies it first.
	borrowed bool

	// st is set for the ST encodings (EncHistogramST, EncFloatHistogramST):
	// their header holds the counter-reset bits in the top two bits of
	// the sample count, which leaves 14 bits for the count, and the ST
	// header byte (st.go) where the flags byte would be. Each sample is
	// followed by its ST data.
	st bool
}

// stSampleCountMask selects the sample count of an ST chunk's first two
// header bytes.
const stSampleCountMask = 0x3fff

func newHistChunk() histChunk {
	return histChunk{w: bitWriter{buf: make([]byte, histHeaderSize, initialCapacity)}}
}

func histChunkFromData(b []byte, e Encoding) (histChunk, error) {
	st := e == EncHistogramST || e == EncFloatHistogramST
	if len(b) < histHeaderSize {
		return histChunk{}, corruptAt(0, -1, fmt.Sprintf("%v chunk of %d bytes, shorter than its %d-byte header", e, len(b), histHeaderSize))
	}
	if !st && b[histFlagsByte]&^counterResetMask != 0 {
		return histChunk{}, corruptAt(histFlagsByte, -1, fmt.Sprintf("%v chunk flags byte %#02x has unknown bits set", e, b[histFlagsByte]))
	}
	c := histChunk{w: bitWriter{buf: b}, borrowed: true, st: st}
	if c.numSamples() == 0 && len(b) > histHeaderSize {
		return histChunk{}, corruptAt(histHeaderSize, -1, fmt.Sprintf("%v chunk has no samples but %d bytes after its header", e, len(b)-histHeaderSize))
	}
	return c, nil
}

// empty returns a new empty chunk of c's encoding.
func (c *histChunk) empty() histChunk {
	e := newHistChunk()
	e.st = c.st
	return e
}

// maxSamples is the most samples the chunk's header can count.
func (c *histChunk) maxSamples() int {
	if c.st {
		return stSampleCountMask
	}
	return MaxSamples
}

func (c *histChunk) numSamples() int {
	n := int(binary.BigEndian.Uint16(c.w.buf))
	if c.st {
		n &= stSampleCountMask
	}
	return n
}

func (c *histChunk) setNumSamples(n int) {
	if c.st {
		n = int(c.w.buf[0]&counterResetMask)<<8 | n&stSampleCountMask
	}
	binary.BigEndian.PutUint16(c.w.buf, uint16(n))
}

// crByte is the index of the header byte that holds the counter-reset bits.
func (c *histChunk) crByte() int {
	if c.st {
		return 0
	}
	return histFlagsByte
}

func (c *histChunk) counterResetHeader() histogram.CounterResetHint {
	return counterResetFromBits(c.w.buf[c.crByte()])
}

func (c *histChunk) setCounterResetHeader(h histogram.CounterResetHint) {
	i := c.crByte()
	c.w.buf[i] = c.w.buf[i]&^counterResetMask | counterResetBits(h)
}

// readHistHeader returns the sample count, counter-reset header and ST
// decoder state of histogram chunk bytes b (at least histHeaderSize long)
// of an ST encoding if st is set, else of a plain one.
func readHistHeader(b []byte, st bool) (total int, hdr histogram.CounterResetHint, sts stState) {
	if !st {
		return int(binary.BigEndian.Uint16(b)), counterResetFromBits(b[histFlagsByte]), stState{}
	}
	return int(binary.BigEndian.Uint16(b) & stSampleCountMask), counterResetFromBits(b[0]), readSTHeader(b[stHeaderByte])
}

func (c *histChunk) compact() {
	if n := len(c.w.buf); cap(c.w.buf) > n+compactSlack {
		c.w.buf = slices.Clone(c.w.buf)
		c.borrowed = false
	}
}

// own makes the chunk's bytes its own before an appender writes to them,
// and checks that the bit stream ends where the decoder stopped (end, a
// bit position), as it does for XOR chunks.
func (c *histChunk) own(end int) error {
	free := len(c.w.buf)*8 - end
	if free < 0 || free > 7 {
		return corruptAt(end/8, -1, fmt.Sprintf("histogram chunk: %d unexpected bits after the last sample", free))
	}
	if free > 0 && c.w.buf[len(c.w.buf)-1]&(1<<free-1) != 0 {
		return corruptAt(len(c.w.buf)-1, -1, "histogram chunk: non-zero padding bits")
	}
	if c.borrowed {
		buf := make([]byte, len(c.w.buf), max(initialCapacity, len(c.w.buf)+initialCapacity/2))
		copy(buf, c.w.buf)
		c.w.buf = buf
		c.borrowed = false
	}
	c.w.free = uint8(free)
	return nil
}

// xorWindow is the leading/trailing-zero window of an XOR-encoded field.
// leading is noLeading before any window has been written.
type xorWindow struct {
	leading, trailing uint8
}

// resumed returns the window an appender continuing from decoded bytes
// starts with. A field whose values never changed has no window yet;
// Prometheus's appender then continues with the full 64-bit window (its
// decoder's initial state), so a chunk resumed from bytes keeps encoding
// exactly as Prometheus would resume it.
func (w xorWindow) resumed() xorWindow {
	if w.leading == noLeading {
		return xorWindow{}
	}
	return w
}

// writeXOR writes v XOR prev with the XOR chunk's value encoding (see
// XORAppender.writeValue), updating the window.
func (w *bitWriter) writeXOR(v, prev uint64, win *xorWindow) {
	delta := v ^ prev
	if delta == 0 {
		w.writeBits(0, 1)
		return
	}
	leading := min(uint8(bits.LeadingZeros64(delta)), 31)
	trailing := uint8(bits.TrailingZeros64(delta))
	if win.leading != noLeading && leading >= win.leading && trailing >= win.trailing {
		w.writeBits(0b10, 2)
		w.writeBits(delta>>win.trailing, 64-win.leading-win.trailing)
		return
	}
	win.leading, win.trailing = leading, trailing
	sig := 64 - leading - trailing
	w.writeBits(0b11<<11|uint64(leading)<<6|uint64(sig&63), 13)
	w.writeBits(delta>>trailing, sig)
}

// readXOR reads a value written by writeXOR, XORing it into *v. A '10'
// before any window decodes with the full 64-bit window, as Prometheus's
// decoder does (its resumed appenders write that).
func (r *bitReader) readXOR(v *uint64, win *xorWindow) (ok bool, reason string) {
	buf, n := r.peek(13)
	switch {
	case n < 1:
		return false, "truncated XOR value"
	case buf>>63 == 0:
		r.skip(1)
		return true, ""
	case n < 2:
		return false, "truncated XOR value"
	case buf>>62 == 0b10:
		r.skip(2)
		if win.leading == noLeading {
			*win = xorWindow{}
		}
	default:
		if n < 13 {
			return false, "truncated XOR window"
		}
		hdr := r.take(13)
		leading := uint8(hdr>>6) & 31
		sig := uint8(hdr) & 63
		if sig == 0 {
			sig = 64
		}
		if int(leading)+int(sig) > 64 {
			return false, "XOR window wider than 64 bits"
		}
		win.leading, win.trailing = leading, 64-leading-sig
	}
	x, ok := r.readWide(64 - win.leading - win.trailing)
	if !ok {
		return false, "truncated XOR value"
	}
	*v ^= x << win.trailing
	return true, ""
}

// HistogramAppendResult says what an append to a histogram chunk did.
type HistogramAppendResult uint8

const (
	// AppendedInPlace: the sample was appended to the appender's chunk.
	AppendedInPlace HistogramAppendResult = iota
	// CutNewChunk: the sample cannot join the appender's chunk (schema,
	// zero threshold or custom bounds changed, a counter reset, a switch
	// between counter and gauge, a sample after a stale marker, or the
	// chunk is full). It starts the returned chunk, whose counter-reset
	// header records why; the old chunk is complete and unchanged.
	CutNewChunk
	// Recoded: the sample has buckets the chunk's layout lacks. The
	// returned chunk replaces the appender's chunk: it holds the chunk's
	// samples re-encoded with the wider layout (new buckets empty), then
	// the new sample. The old chunk's bytes are left as they were, so
	// iterators over it stay valid.
	Recoded
)

// String returns the result's name.
func (r HistogramAppendResult) String() string {
	switch r {
	case AppendedInPlace:
		return "appended"
	case CutNewChunk:
		return "new chunk"
	case Recoded:
		return "recoded"
	}
	return fmt.Sprintf("HistogramAppendResult(%d)", uint8(r))
}

// checkShape reports the malformations the encoders cannot handle: spans
// that do not cover the number of buckets given, or that do not list
// bucket indexes in increasing order (a negative offset after the first
// span). Histograms that pass histogram.Validate never have them.
func checkShape(pSpans, nSpans []histogram.Span, np, nn int) error {
	if numBuckets(pSpans) != np || numBuckets(nSpans) != nn {
		return fmt.Errorf("chunks: histogram spans cover %d positive and %d negative buckets, it has %d and %d",
			numBuckets(pSpans), numBuckets(nSpans), np, nn)
	}
	if !increasing(pSpans) || !increasing(nSpans) {
		return errors.New("chunks: histogram spans with a negative offset after the first span")
	}
	return nil
}

func increasing(spans []histogram.Span) bool {
	for i := 1; i < len(spans); i++ {
		if spans[i].Offset < 0 {
			return false
		}
	}
	return true
}
