package record

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/encoding"
)

// RefHistogramSample is one integer native-histogram sample of the series
// Ref. ST is the sample's start timestamp (0 for none); only the V2 record
// layout stores it, the others drop it on encoding and decode it as 0.
//
// H is never nil in a decoded sample; the decoder allocates it and its
// slices afresh for every sample, so the caller may keep or modify it.
type RefHistogramSample struct {
	Ref   uint64
	ST, T int64
	H     *histogram.Histogram
}

// RefFloatHistogramSample is one float native-histogram sample of the series
// Ref; otherwise like RefHistogramSample.
type RefFloatHistogramSample struct {
	Ref   uint64
	ST, T int64
	FH    *histogram.FloatHistogram
}

// histSample is what the record layouts need from the two sample kinds.
type histSample interface {
	header() (ref uint64, st, t int64)
	customBuckets() bool
	appendHistogram(b []byte) []byte
}

func (s *RefHistogramSample) header() (uint64, int64, int64) { return s.Ref, s.ST, s.T }
func (s *RefHistogramSample) customBuckets() bool            { return s.H.UsesCustomBuckets() }
func (s *RefHistogramSample) appendHistogram(b []byte) []byte {
	return appendHistogram(b, s.H)
}

func (s *RefFloatHistogramSample) header() (uint64, int64, int64) { return s.Ref, s.ST, s.T }
func (s *RefFloatHistogramSample) customBuckets() bool            { return s.FH.UsesCustomBuckets() }
func (s *RefFloatHistogramSample) appendHistogram(b []byte) []byte {
	return appendFloatHistogram(b, s.FH)
}

// HistogramSamples appends a HistogramSamples record holding the samples of
// s that use exponential schemas to b, and returns the extended slice and
// the samples of s that use custom buckets, in order (nil if none). The
// caller writes those with CustomBucketsHistogramSamples, as Prometheus
// does. Start timestamps are not stored.
//
// Like Prometheus, the record's base ref and timestamp are those of s[0]
// even if s[0] is split off. If every sample uses custom buckets, nothing
// is appended and b is returned as passed.
func (Encoder) HistogramSamples(s []RefHistogramSample, b []byte) ([]byte, []RefHistogramSample) {
	return appendSplitV1(b, HistogramSamples, s)
}

// CustomBucketsHistogramSamples appends a CustomBucketsHistogramSamples
// record holding all of s to b and returns the extended slice. It does not
// check the schemas: the record type is only a label, and the decoder reads
// any schema from it. Start timestamps are not stored.
func (Encoder) CustomBucketsHistogramSamples(s []RefHistogramSample, b []byte) []byte {
	return appendV1(b, CustomBucketsHistogramSamples, s)
}

// FloatHistogramSamples is HistogramSamples for float histograms: it writes
// a FloatHistogramSamples record and splits off the custom-bucket samples
// for CustomBucketsFloatHistogramSamples.
func (Encoder) FloatHistogramSamples(s []RefFloatHistogramSample, b []byte) ([]byte, []RefFloatHistogramSample) {
	return appendSplitV1(b, FloatHistogramSamples, s)
}

// CustomBucketsFloatHistogramSamples is CustomBucketsHistogramSamples for
// float histograms.
func (Encoder) CustomBucketsFloatHistogramSamples(s []RefFloatHistogramSample, b []byte) []byte {
	return appendV1(b, CustomBucketsFloatHistogramSamples, s)
}

// HistogramSamplesV2 appends a HistogramSamplesV2 record holding all of s,
// start timestamps included, to b and returns the extended slice. The V2
// layout has no custom-bucket variant: exponential and custom-bucket
// samples share the record, as in Prometheus with start-timestamp storage
// enabled.
func (Encoder) HistogramSamplesV2(s []RefHistogramSample, b []byte) []byte {
	return appendV2(b, HistogramSamplesV2, s)
}

// FloatHistogramSamplesV2 is HistogramSamplesV2 for float histograms.
func (Encoder) FloatHistogramSamplesV2(s []RefFloatHistogramSample, b []byte) []byte {
	return appendV2(b, FloatHistogramSamplesV2, s)
}

// appendSplitV1 writes the V1 layout (see appendV1) for the samples of s
// that do not use custom buckets and returns the others.
func appendSplitV1[S any, P interface {
	*S
	histSample
}](b []byte, typ Type, s []S) ([]byte, []S) {
	orig := len(b)
	b = append(b, byte(typ))
	if len(s) == 0 {
		return b, nil
	}
	baseRef, _, baseT := P(&s[0]).header()
	b = binary.BigEndian.AppendUint64(b, baseRef)
	b = binary.BigEndian.AppendUint64(b, uint64(baseT))
	var custom []S
	for i := range s {
		p := P(&s[i])
		if p.customBuckets() {
			custom = append(custom, s[i])
			continue
		}
		b = appendV1Entry(b, p, baseRef, baseT)
	}
	if len(custom) == len(s) {
		return b[:orig], custom
	}
	return b, custom
}

// appendV1 writes the V1 layout: the type byte, and unless s is empty the
// first sample's ref and timestamp as be64 followed by one entry per sample
// (see appendV1Entry).
func appendV1[S any, P interface {
	*S
	histSample
}](b []byte, typ Type, s []S) []byte {
	b = append(b, byte(typ))
	if len(s) == 0 {
		return b
	}
	baseRef, _, baseT := P(&s[0]).header()
	b = binary.BigEndian.AppendUint64(b, baseRef)
	b = binary.BigEndian.AppendUint64(b, uint64(baseT))
	for i := range s {
		b = appendV1Entry(b, P(&s[i]), baseRef, baseT)
	}
	return b
}

// appendV1Entry writes ref-baseRef varint | t-baseT varint | histogram,
// with wrapping arithmetic so that any values round-trip.
func appendV1Entry(b []byte, p histSample, baseRef uint64, baseT int64) []byte {
	ref, _, t := p.header()
	b = binary.AppendVarint(b, int64(ref-baseRef))
	b = binary.AppendVarint(b, t-baseT)
	return p.appendHistogram(b)
}

// appendV2 writes the V2 layout: the type byte, and unless s is empty the
// first sample as ref varint | t varint | st varint | histogram, then every
// later one as ref delta to the previous sample varint | t delta to the
// first sample varint | start-time marker [+ varint] | histogram.
func appendV2[S any, P interface {
	*S
	histSample
}](b []byte, typ Type, s []S) []byte {
	b = append(b, byte(typ))
	if len(s) == 0 {
		return b
	}
	firstRef, firstST, firstT := P(&s[0]).header()
	b = binary.AppendVarint(b, int64(firstRef))
	b = binary.AppendVarint(b, firstT)
	b = binary.AppendVarint(b, firstST)
	b = P(&s[0]).appendHistogram(b)
	prevRef, prevST := firstRef, firstST
	for i := 1; i < len(s); i++ {
		p := P(&s[i])
		ref, st, t := p.header()
		b = binary.AppendVarint(b, int64(ref-prevRef))
		b = binary.AppendVarint(b, t-firstT)
		b = appendSTMarker(b, st, prevST, firstST)
		b = p.appendHistogram(b)
		prevRef, prevST = ref, st
	}
	return b
}

// appendSTMarker writes the start-time field of a later sample of a V2
// record: stNone for 0, else stSame if st equals the previous sample's,
// else stExplicit and the delta to the first sample's.
func appendSTMarker(b []byte, st, prevST, firstST int64) []byte {
	switch st {
	case 0:
		return append(b, stNone)
	case prevST:
		return append(b, stSame)
	default:
		b = append(b, stExplicit)
		return binary.AppendVarint(b, st-firstST)
	}
}

// appendHistogram writes hint byte | schema varint | zero threshold be64 |
// zero count uvarint | count uvarint | sum be64 | positive spans |
// negative spans | positive deltas | negative deltas, and for the
// custom-bucket schema the custom values. Every list is a uvarint length
// followed by its elements; a span is offset varint | length uvarint,
// deltas are varints and floats be64 bits.
func appendHistogram(b []byte, h *histogram.Histogram) []byte {
	b = append(b, byte(h.CounterResetHint))
	b = binary.AppendVarint(b, int64(h.Schema))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(h.ZeroThreshold))
	b = binary.AppendUvarint(b, h.ZeroCount)
	b = binary.AppendUvarint(b, h.Count)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(h.Sum))
	b = appendSpans(b, h.PositiveSpans)
	b = appendSpans(b, h.NegativeSpans)
	b = appendDeltas(b, h.PositiveBuckets)
	b = appendDeltas(b, h.NegativeBuckets)
	if histogram.IsCustomBucketsSchema(h.Schema) {
		b = appendFloats(b, h.CustomValues)
	}
	return b
}

// appendFloatHistogram is appendHistogram for float histograms: the zero
// count, count and bucket counts are be64 float bits.
func appendFloatHistogram(b []byte, h *histogram.FloatHistogram) []byte {
	b = append(b, byte(h.CounterResetHint))
	b = binary.AppendVarint(b, int64(h.Schema))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(h.ZeroThreshold))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(h.ZeroCount))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(h.Count))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(h.Sum))
	b = appendSpans(b, h.PositiveSpans)
	b = appendSpans(b, h.NegativeSpans)
	b = appendFloats(b, h.PositiveBuckets)
	b = appendFloats(b, h.NegativeBuckets)
	if histogram.IsCustomBucketsSchema(h.Schema) {
		b = appendFloats(b, h.CustomValues)
	}
	return b
}

func appendSpans(b []byte, spans []histogram.Span) []byte {
	b = binary.AppendUvarint(b, uint64(len(spans)))
	for _, s := range spans {
		b = binary.AppendVarint(b, int64(s.Offset))
		b = binary.AppendUvarint(b, uint64(s.Length))
	}
	return b
}

func appendDeltas(b []byte, deltas []int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(deltas)))
	for _, d := range deltas {
		b = binary.AppendVarint(b, d)
	}
	return b
}

func appendFloats(b []byte, fs []float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(fs)))
	for _, f := range fs {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

// HistogramSamples appends the samples of a HistogramSamples,
// CustomBucketsHistogramSamples or HistogramSamplesV2 record to out. Any
// record type may hold any schema. Histograms are decoded as stored, bit
// for bit; they are not validated (unknown schemas and bucket counts that
// disagree with the spans included), which is the caller's job.
func (d *Decoder) HistogramSamples(rec []byte, out []RefHistogramSample) ([]RefHistogramSample, error) {
	if len(rec) == 0 {
		return out, wrongType("histogram samples", rec)
	}
	var v2 bool
	switch Type(rec[0]) {
	case HistogramSamples, CustomBucketsHistogramSamples:
	case HistogramSamplesV2:
		v2 = true
	default:
		return out, wrongType("histogram samples", rec)
	}
	orig := len(out)
	err := walkHistogramRecord(rec, v2, minHistogramSize, func(db *encoding.Decbuf, ref uint64, st, t int64) {
		h := decodeHistogram(db)
		if !db.Failed() {
			out = append(out, RefHistogramSample{Ref: ref, ST: st, T: t, H: h})
		}
	})
	if err != nil {
		return out[:orig], fmt.Errorf("histogram samples record: sample %d: %w", len(out)-orig, err)
	}
	return out, nil
}

// FloatHistogramSamples is HistogramSamples for FloatHistogramSamples,
// CustomBucketsFloatHistogramSamples and FloatHistogramSamplesV2 records.
func (d *Decoder) FloatHistogramSamples(rec []byte, out []RefFloatHistogramSample) ([]RefFloatHistogramSample, error) {
	if len(rec) == 0 {
		return out, wrongType("float histogram samples", rec)
	}
	var v2 bool
	switch Type(rec[0]) {
	case FloatHistogramSamples, CustomBucketsFloatHistogramSamples:
	case FloatHistogramSamplesV2:
		v2 = true
	default:
		return out, wrongType("float histogram samples", rec)
	}
	orig := len(out)
	err := walkHistogramRecord(rec, v2, minFloatHistogramSize, func(db *encoding.Decbuf, ref uint64, st, t int64) {
		h := decodeFloatHistogram(db)
		if !db.Failed() {
			out = append(out, RefFloatHistogramSample{Ref: ref, ST: st, T: t, FH: h})
		}
	})
	if err != nil {
		return out[:orig], fmt.Errorf("float histogram samples record: sample %d: %w", len(out)-orig, err)
	}
	return out, nil
}

// Smallest encodings of a histogram: hint byte, one-byte schema, the be64
// fields, the zero count and count as one-byte uvarints (integer) or be64
// (float), and four empty lists.
const (
	minHistogramSize      = 1 + 1 + 8 + 1 + 1 + 8 + 4
	minFloatHistogramSize = 1 + 1 + 8 + 8 + 8 + 8 + 4
)

// walkHistogramRecord reads the sample headers of a V1 or V2 histogram
// record and calls body with the Decbuf positioned at each sample's
// histogram; body reads it and leaves any failure in the Decbuf. It returns
// the first failure. minSize, the smallest histogram encoding, is used to
// reject records that end inside a histogram before body allocates.
func walkHistogramRecord(rec []byte, v2 bool, minSize int, body func(db *encoding.Decbuf, ref uint64, st, t int64)) error {
	db := newDecbuf(rec)
	if db.Len() == 0 {
		return nil
	}
	if !v2 {
		baseRef := db.Be64()
		baseT := int64(db.Be64())
		for db.Len() > 0 {
			dref := db.Varint()
			dt := db.Varint()
			if !db.Failed() && db.Len() < minSize {
				db.Failf("histogram needs at least %d bytes, %d left: %w", minSize, db.Len(), encoding.ErrShort)
			}
			if db.Failed() {
				break
			}
			body(&db, baseRef+uint64(dref), 0, baseT+dt)
		}
		return db.Err()
	}
	var firstT, firstST, prevST int64
	var prevRef uint64
	for i := 0; db.Len() > 0; i++ {
		var ref uint64
		var st, t int64
		if i == 0 {
			ref = uint64(db.Varint())
			t = db.Varint()
			st = db.Varint()
			firstT, firstST = t, st
		} else {
			ref = prevRef + uint64(db.Varint())
			t = firstT + db.Varint()
			switch m := db.Byte(); m {
			case stNone:
			case stSame:
				st = prevST
			case stExplicit:
				st = firstST + db.Varint()
			default:
				db.FailAt(db.Offset()-1, fmt.Errorf("unknown start-time marker %d", m))
			}
		}
		if db.Failed() {
			break
		}
		prevRef, prevST = ref, st
		if db.Len() < minSize {
			db.Failf("histogram needs at least %d bytes, %d left: %w", minSize, db.Len(), encoding.ErrShort)
			break
		}
		body(&db, ref, st, t)
	}
	return db.Err()
}

// decodeHistogram reads what appendHistogram writes. Lists of length 0
// decode as nil; CustomValues is read only for the custom-bucket schema.
func decodeHistogram(db *encoding.Decbuf) *histogram.Histogram {
	h := &histogram.Histogram{}
	h.CounterResetHint = readHint(db)
	h.Schema = readInt32(db, "schema")
	h.ZeroThreshold = math.Float64frombits(db.Be64())
	h.ZeroCount = db.Uvarint()
	h.Count = db.Uvarint()
	h.Sum = math.Float64frombits(db.Be64())
	h.PositiveSpans = readSpans(db, "positive span")
	h.NegativeSpans = readSpans(db, "negative span")
	h.PositiveBuckets = readDeltas(db, "positive bucket")
	h.NegativeBuckets = readDeltas(db, "negative bucket")
	if histogram.IsCustomBucketsSchema(h.Schema) {
		h.CustomValues = readFloats(db, "custom value")
	}
	return h
}

// decodeFloatHistogram reads what appendFloatHistogram writes, like
// decodeHistogram.
func decodeFloatHistogram(db *encoding.Decbuf) *histogram.FloatHistogram {
	h := &histogram.FloatHistogram{}
	h.CounterResetHint = readHint(db)
	h.Schema = readInt32(db, "schema")
	h.ZeroThreshold = math.Float64frombits(db.Be64())
	h.ZeroCount = math.Float64frombits(db.Be64())
	h.Count = math.Float64frombits(db.Be64())
	h.Sum = math.Float64frombits(db.Be64())
	h.PositiveSpans = readSpans(db, "positive span")
	h.NegativeSpans = readSpans(db, "negative span")
	h.PositiveBuckets = readFloats(db, "positive bucket")
	h.NegativeBuckets = readFloats(db, "negative bucket")
	if histogram.IsCustomBucketsSchema(h.Schema) {
		h.CustomValues = readFloats(db, "custom value")
	}
	return h
}

// readHint reads a counter-reset hint byte; values beyond GaugeType are
// corruption.
func readHint(db *encoding.Decbuf) histogram.CounterResetHint {
	off := db.Offset()
	c := histogram.CounterResetHint(db.Byte())
	if c > histogram.GaugeType {
		db.FailAt(off, fmt.Errorf("unknown counter-reset hint %d", c))
		return 0
	}
	return c
}

// readInt32 reads a varint that must fit an int32.
func readInt32(db *encoding.Decbuf, what string) int32 {
	off := db.Offset()
	v := db.Varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		db.FailAt(off, fmt.Errorf("%s %d: %w", what, v, encoding.ErrOverflow))
		return 0
	}
	return int32(v)
}

// readCount reads a list length and checks that the bytes left can hold
// that many elements of at least elemSize bytes each, so that a corrupt
// length cannot cause a large allocation.
func readCount(db *encoding.Decbuf, what string, elemSize int) int {
	off := db.Offset()
	n := db.Uvarint()
	if db.Failed() {
		return 0
	}
	if n > uint64(db.Len()/elemSize) {
		db.FailAt(off, fmt.Errorf("%s count %d exceeds what the %d bytes left can hold: %w", what, n, db.Len(), encoding.ErrShort))
		return 0
	}
	return int(n)
}

// readSpans reads a span list: each span is at least two bytes.
func readSpans(db *encoding.Decbuf, what string) []histogram.Span {
	n := readCount(db, what, 2)
	if n == 0 {
		return nil
	}
	spans := make([]histogram.Span, n)
	for i := range spans {
		spans[i].Offset = readInt32(db, "span offset")
		spans[i].Length = db.Uvarint32()
	}
	if db.Failed() {
		return nil
	}
	return spans
}

// readDeltas reads a list of varint bucket deltas.
func readDeltas(db *encoding.Decbuf, what string) []int64 {
	n := readCount(db, what, 1)
	if n == 0 {
		return nil
	}
	ds := make([]int64, n)
	for i := range ds {
		ds[i] = db.Varint()
	}
	if db.Failed() {
		return nil
	}
	return ds
}

// readFloats reads a list of be64 float bits.
func readFloats(db *encoding.Decbuf, what string) []float64 {
	n := readCount(db, what, 8)
	if n == 0 {
		return nil
	}
	fs := make([]float64, n)
	for i := range fs {
		fs[i] = math.Float64frombits(db.Be64())
	}
	if db.Failed() {
		return nil
	}
	return fs
}
