package chunks

import (
	"fmt"
	"strconv"
)

// Encoding identifies a chunk encoding. The values are those of Prometheus's
// chunkenc package, because they are written to chunk files.
type Encoding uint8

// Chunk encodings.
const (
	// EncNone is the zero Encoding; no chunk has it.
	EncNone Encoding = 0
	// EncXOR is the Gorilla-style XOR encoding of float samples (XORChunk).
	EncXOR Encoding = 1
	// EncHistogram is the encoding of integer native histogram samples
	// (HistogramChunk).
	EncHistogram Encoding = 2
	// EncFloatHistogram is the encoding of float native histogram samples
	// (FloatHistogramChunk).
	EncFloatHistogram Encoding = 3
	// EncXOR2 is the encoding of float samples with start timestamps
	// (XOR2Chunk).
	EncXOR2 Encoding = 4
	// EncHistogramST is EncHistogram with start timestamps
	// (HistogramChunk made by NewHistogramSTChunk).
	EncHistogramST Encoding = 5
	// EncFloatHistogramST is EncFloatHistogram with start timestamps
	// (FloatHistogramChunk made by NewFloatHistogramSTChunk).
	EncFloatHistogramST Encoding = 6
)

// String returns the encoding's name as Prometheus spells it ("none", "XOR",
// "histogram", "floathistogram", "XOR2", "histogramST", "floathistogramST"),
// or "Encoding(n)" for a value this package does not know.
func (e Encoding) String() string {
	switch e {
	case EncNone:
		return "none"
	case EncXOR:
		return "XOR"
	case EncHistogram:
		return "histogram"
	case EncFloatHistogram:
		return "floathistogram"
	case EncXOR2:
		return "XOR2"
	case EncHistogramST:
		return "histogramST"
	case EncFloatHistogramST:
		return "floathistogramST"
	}
	return "Encoding(" + strconv.Itoa(int(e)) + ")"
}

// FromData returns a chunk of encoding e over data, which holds the chunk's
// bytes including its 2-byte header. data is not copied: the chunk and its
// iterators read it in place, so the caller must not change it while they are
// in use. Appender on such a chunk copies data first and never writes to it.
//
// EncXOR yields an *XORChunk, EncXOR2 an *XOR2Chunk, EncHistogram and
// EncHistogramST a *HistogramChunk, and EncFloatHistogram and
// EncFloatHistogramST a *FloatHistogramChunk. Any other encoding yields an
// error wrapping ErrUnknownEncoding; data too short to hold the header (or
// a histogram header that cannot be valid) yields one wrapping ErrCorrupt.
// The rest of data is checked only as it is decoded.
func FromData(e Encoding, data []byte) (Chunk, error) {
	switch e {
	case EncXOR:
		if len(data) < headerSize {
			return nil, corruptAt(0, -1, "chunk shorter than its "+strconv.Itoa(headerSize)+"-byte header")
		}
		return &XORChunk{w: bitWriter{buf: data}, borrowed: true}, nil
	case EncHistogram:
		// Typed nil pointers must not become non-nil Chunks.
		c, err := HistogramChunkFromData(data)
		if err != nil {
			return nil, err
		}
		return c, nil
	case EncFloatHistogram:
		c, err := FloatHistogramChunkFromData(data)
		if err != nil {
			return nil, err
		}
		return c, nil
	case EncXOR2:
		c, err := XOR2ChunkFromData(data)
		if err != nil {
			return nil, err
		}
		return c, nil
	case EncHistogramST:
		c, err := HistogramSTChunkFromData(data)
		if err != nil {
			return nil, err
		}
		return c, nil
	case EncFloatHistogramST:
		c, err := FloatHistogramSTChunkFromData(data)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownEncoding, uint8(e))
}

// IsHistogram reports whether chunks of encoding e hold native histograms
// (integer or float, with or without start timestamps).
func (e Encoding) IsHistogram() bool {
	switch e {
	case EncHistogram, EncFloatHistogram, EncHistogramST, EncFloatHistogramST:
		return true
	}
	return false
}

// IsKnown reports whether FromData reads chunks of encoding e.
func (e Encoding) IsKnown() bool { return e >= EncXOR && e <= EncFloatHistogramST }
