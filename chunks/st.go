package chunks

import "fmt"

// Start timestamps (ST). The encodings EncXOR2, EncHistogramST and
// EncFloatHistogramST store, besides each sample's time t, an optional start
// time st: the time the cumulative value of the sample started counting
// from (OpenTelemetry's start time; 0 means "not known"). All three keep it
// the same way, which is Prometheus's:
//
// One byte at offset stHeaderByte of the chunk (right after the sample
// count) says where ST data is: bit 7 is set if sample 0 carries one
// ("first ST known"), and bits 6..0 hold the index of the first sample
// after sample 0 that carries one ("first ST change"; 0 for none). Every
// sample from that index on carries one.
//
// The ST data of a sample follows its encoded time and value:
//
//	sample 0                varint bytes of t - st (only if bit 7 is set)
//	sample i = first change signed varbit of prevT - st
//	sample i > first change signed varbit of (prevT - st) minus the same
//	                        quantity of the sample before
//
// where prevT is the time of sample i-1. Samples between 0 and the first
// change have the ST of sample 0 (or 0). The first change is recorded at
// the first sample whose ST differs from the previous sample's, and at the
// latest at index maxSTChangeOn (so that the index fits in 7 bits, even if
// ST changes later); from there on every sample carries a delta, 1 bit when
// prevT - st did not change. So a chunk whose STs are all 0 costs only the
// header byte for its first 127 samples, and a delta per sample after that
// (Prometheus's choice, kept for identical bytes).

const (
	// stHeaderByte is the offset of the ST header byte in every ST encoding:
	// it follows the 2-byte sample count.
	stHeaderByte = 2
	// stKnownBit is set in the ST header if sample 0 carries its ST.
	stKnownBit = 0x80
	// maxSTChangeOn is the largest index the header can name as the first
	// ST change; the encoder starts per-sample ST data there at the latest.
	maxSTChangeOn = 0x7f
)

// stState is the ST coder's state after a sample. Encoder and decoder share
// it: an appender resumed from decoded bytes takes the decoder's state.
type stState struct {
	st       int64 // ST of the last sample
	diff     int64 // prevT - st of the last sample, once changeOn > 0
	changeOn uint8 // index of the first sample after 0 that carries ST, 0 if none yet
	known    bool  // sample 0 carries ST
}

// encode writes the ST data of the sample at index i (0-based) with time t
// and start time st; prevT is the time of sample i-1 (unused for i == 0).
// It updates the ST header byte of the chunk w writes (w.buf[stHeaderByte]).
// It must be called right after the sample's time and value are written.
func (s *stState) encode(w *bitWriter, i int, t, prevT, st int64) {
	switch {
	case i == 0:
		if st != 0 {
			w.putVarintBytes(t - st)
			s.known = true
			w.buf[stHeaderByte] |= stKnownBit
		}
	case s.changeOn == 0:
		if st != s.st || i == maxSTChangeOn {
			s.changeOn = uint8(i)
			s.diff = prevT - st
			w.putVarbitInt(s.diff)
			w.buf[stHeaderByte] |= uint8(i)
		}
	default:
		d := prevT - st
		w.putVarbitInt(d - s.diff)
		s.diff = d
	}
	s.st = st
}

// decode reads the ST data of the sample at index i with time t; prevT is
// the time of sample i-1. The state must have known and changeOn set from
// the header (see readSTHeader). ok is false if the stream ends first.
func (s *stState) decode(r *bitReader, i int, t, prevT int64) (ok bool, reason string) {
	if i == 0 {
		if s.known {
			d, reason := r.readVarintBytes()
			if reason != "" {
				return false, reason + " in first start timestamp"
			}
			s.st = t - d
		}
		return true, ""
	}
	if s.changeOn == 0 || i < int(s.changeOn) {
		return true, ""
	}
	d, ok := r.readVarbitInt()
	if !ok {
		return false, "truncated start timestamp"
	}
	if i == int(s.changeOn) {
		s.diff = d
	} else {
		s.diff += d
	}
	s.st = prevT - s.diff
	return true, ""
}

// checkResumable reports the ST headers that no encoder writes and that an
// encoder could not continue after the chunk's n samples: one that names
// no first change in a chunk of more than maxSTChangeOn+1 samples (a later
// change could not be recorded), or a first change at a sample the chunk
// does not have (the decoder would not read the ST data appended).
func (s *stState) checkResumable(n int) error {
	switch {
	case s.changeOn == 0 && n > maxSTChangeOn+1:
		return corruptAt(stHeaderByte, -1, fmt.Sprintf("ST header names no first change but the chunk has %d samples", n))
	case s.changeOn > 0 && int(s.changeOn) >= n:
		return corruptAt(stHeaderByte, -1, fmt.Sprintf("ST header names a first change at sample %d of a chunk of %d", s.changeOn, n))
	}
	return nil
}

// readSTHeader returns a decoder state for a chunk whose ST header byte is
// hdr.
func readSTHeader(hdr byte) stState {
	return stState{known: hdr&stKnownBit != 0, changeOn: hdr &^ stKnownBit}
}

// putVarintBytes writes v as a zig-zag varint, one 8-bit group per byte of
// encoding/binary's varint (the bytes need not be aligned in the stream).
func (w *bitWriter) putVarintBytes(v int64) {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	for u >= 0x80 {
		w.writeBits(u&0x7f|0x80, 8)
		u >>= 7
	}
	w.writeBits(u, 8)
}

// readVarintBytes reads a value written by putVarintBytes. It returns a
// non-empty reason on failure.
func (r *bitReader) readVarintBytes() (int64, string) {
	u, reason := r.readUvarintBytes()
	if reason != "" {
		return 0, reason
	}
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v, ""
}

// readUvarintBytes reads a uvarint as whole 8-bit groups from the bit
// stream. It accepts exactly what encoding/binary.ReadUvarint accepts and
// returns a non-empty reason on failure.
func (r *bitReader) readUvarintBytes() (uint64, string) {
	var x uint64
	var shift uint
	for i := range maxVarintLen64 {
		b, ok := r.readBits(8)
		if !ok {
			return 0, "truncated varint"
		}
		if b < 0x80 {
			if i == maxVarintLen64-1 && b > 1 {
				return 0, "varint overflows 64 bits"
			}
			return x | b<<shift, ""
		}
		x |= (b & 0x7f) << shift
		shift += 7
	}
	return 0, "varint overflows 64 bits"
}

// maxVarintLen64 is encoding/binary.MaxVarintLen64.
const maxVarintLen64 = 10
