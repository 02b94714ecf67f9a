package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/encoding"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// Decoder decodes records into caller-supplied slices. The zero value is
// ready to use; it keeps scratch space between calls, so reuse one Decoder
// per goroutine. It is not safe for concurrent use.
//
// Every method appends to out and returns the extended slice. On error it
// returns out unchanged (same length) and an error wrapping ErrWrongType or
// a *corrupt.Error (its Offset counts from the start of the record; it
// names no file: the caller, which knows where the record is, wraps it).
// Sizes read from the record are checked against the bytes left before
// anything is allocated, so hostile input cannot cause allocations larger
// than a small multiple of its own size.
type Decoder struct {
	builder labels.ScratchBuilder // reused for every series; Reset before use
}

func wrongType(want string, rec []byte) error {
	if len(rec) == 0 {
		return fmt.Errorf("%w: empty record, want %s", ErrWrongType, want)
	}
	return fmt.Errorf("%w: type byte %d (%s), want %s", ErrWrongType, rec[0], Type(rec[0]), want)
}

// Series appends the series defined in a Series record to out.
//
// The returned labels do not alias rec, so rec may be reused as soon as
// Series returns. Label names
// must be strictly increasing (sorted, unique), as every writer produces
// them; anything else is reported as corruption.
func (d *Decoder) Series(rec []byte, out []RefSeries) ([]RefSeries, error) {
	if len(rec) == 0 || Type(rec[0]) != Series {
		return out, wrongType("series", rec)
	}
	orig := len(out)
	db := newDecbuf(rec)
	for db.Len() > 0 {
		ref := db.Be64()
		n := db.Uvarint()
		// Each label needs at least two bytes (two zero lengths).
		if !db.Failed() && n > uint64(db.Len()/2) {
			db.Failf("label count %d exceeds what the %d bytes left can hold", n, db.Len())
		}
		if db.Failed() {
			return out[:orig], fmt.Errorf("series record: series %d: %w", len(out)-orig, db.Err())
		}
		ls, err := d.labels(&db, int(n))
		if err != nil {
			return out[:orig], fmt.Errorf("series record: series %d (ref %d): %w", len(out)-orig, ref, err)
		}
		out = append(out, RefSeries{Ref: ref, Labels: ls})
	}
	return out, nil
}

// labels reads n (name, value) pairs into a label set. The builder gets
// strings that alias rec (no copy); that is safe because
// ScratchBuilder.Labels copies them into the label set's own encoding
// before returning, and the builder is Reset before the next use. A test
// (TestSeriesLabelsDoNotAliasRecord) guards this assumption.
func (d *Decoder) labels(db *encoding.Decbuf, n int) (labels.Labels, error) {
	d.builder.Reset()
	var prevName string
	for i := 0; i < n; i++ {
		off := db.Offset()
		nb := db.UvarintBytes()
		vb := db.UvarintBytes()
		if db.Failed() {
			return labels.Labels{}, db.Err()
		}
		name := aliasString(nb)
		if i > 0 && name <= prevName {
			return labels.Labels{}, corrupt.Errorf("", int64(off), "label name %q does not sort after %q", name, prevName)
		}
		prevName = name
		d.builder.Add(name, aliasString(vb))
	}
	ls := d.builder.Labels()
	d.builder.Reset() // drop the aliases so rec is not kept alive
	return ls, nil
}

// aliasString returns a string sharing b's memory. The caller must make sure
// the string does not outlive b or see b change.
func aliasString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Samples appends the samples of a Samples or SamplesV2 record to out.
// Values keep their exact bits, NaN payloads included. Samples records
// store no start timestamps: their samples have ST 0.
func (d *Decoder) Samples(rec []byte, out []RefSample) ([]RefSample, error) {
	if len(rec) == 0 {
		return out, wrongType("samples", rec)
	}
	switch Type(rec[0]) {
	case Samples:
		return samplesV1(rec, out)
	case SamplesV2:
		return samplesV2(rec, out)
	default:
		return out, wrongType("samples", rec)
	}
}

// minSampleV1Size is the smallest encoding of one sample in a Samples record:
// two one-byte varints and the 8-byte value.
const minSampleV1Size = 1 + 1 + 8

func samplesV1(rec []byte, out []RefSample) ([]RefSample, error) {
	if len(rec) == 1 {
		return out, nil
	}
	if len(rec) < 1+16 {
		return out, corrupt.Errorf("", 1, "samples record: truncated base (%d bytes): %w", len(rec)-1, encoding.ErrShort)
	}
	baseRef := binary.BigEndian.Uint64(rec[1:])
	baseT := int64(binary.BigEndian.Uint64(rec[9:]))
	// This loop is the hot path of WAL replay, so it works on the slice
	// directly instead of through a Decbuf.
	b := rec[17:]
	orig := len(out)
	out = slices.Grow(out, len(b)/minSampleV1Size)
	for len(b) > 0 {
		dref, n := binary.Varint(b)
		if n <= 0 {
			return out[:orig], samplesV1Error(rec, b, len(out)-orig, varintProblem(n))
		}
		b = b[n:]
		dt, n := binary.Varint(b)
		if n <= 0 {
			return out[:orig], samplesV1Error(rec, b, len(out)-orig, varintProblem(n))
		}
		b = b[n:]
		if len(b) < 8 {
			return out[:orig], samplesV1Error(rec, b, len(out)-orig, fmt.Errorf("64-bit field: %w", encoding.ErrShort))
		}
		out = append(out, RefSample{
			Ref: baseRef + uint64(dref),
			T:   baseT + dt,
			V:   math.Float64frombits(binary.BigEndian.Uint64(b)),
		})
		b = b[8:]
	}
	return out, nil
}

// samplesV1Error reports a problem at the start of rest, a suffix of rec,
// with the same causes as a Decbuf's.
func samplesV1Error(rec, rest []byte, sample int, cause error) error {
	return fmt.Errorf("samples record: sample %d: %w", sample, corrupt.At("", int64(len(rec)-len(rest)), cause))
}

// varintProblem is the cause of a failed varint read that returned n <= 0.
func varintProblem(n int) error {
	if n == 0 {
		return fmt.Errorf("varint: %w", encoding.ErrShort)
	}
	return fmt.Errorf("varint: %w", encoding.ErrVarint)
}

// newDecbuf returns a Decbuf over the fields of rec, after its type byte;
// its offsets count from the start of rec.
func newDecbuf(rec []byte) encoding.Decbuf {
	d := encoding.NewDecbuf(rec)
	d.Skip(1)
	return d
}

// Start-timestamp markers of SamplesV2 records.
const (
	stNone     = 0 // no start timestamp
	stSame     = 1 // same start timestamp as the previous sample
	stExplicit = 2 // a varint delta to the first sample's start timestamp follows
)

// minSampleV2Size is the smallest encoding of one sample in a SamplesV2
// record: ref, t and start-time fields of one byte each plus the value.
const minSampleV2Size = 1 + 1 + 1 + 8

// samplesV2 reads Prometheus's SamplesV2 layout: the first sample is
// (ref varint, t varint, st varint, value be64); every later one is
// (ref delta to the previous sample varint, t delta to the first sample
// varint, st marker byte [+ varint], value be64).
func samplesV2(rec []byte, out []RefSample) ([]RefSample, error) {
	orig := len(out)
	db := newDecbuf(rec)
	if db.Len() == 0 {
		return out, nil
	}
	out = slices.Grow(out, db.Len()/minSampleV2Size)
	var prevRef uint64
	var firstT, firstST, prevST int64
	for i := 0; db.Len() > 0; i++ {
		var ref uint64
		var t, st int64
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
		v := db.Be64()
		if db.Failed() {
			return out[:orig], fmt.Errorf("samples record: sample %d: %w", i, db.Err())
		}
		prevRef, prevST = ref, st
		out = append(out, RefSample{Ref: ref, ST: st, T: t, V: math.Float64frombits(v)})
	}
	return out, nil
}

// minStoneSize is the smallest tombstone entry: 8-byte ref, two one-byte varints.
const minStoneSize = 8 + 1 + 1

// Tombstones appends the entries of a Tombstones record to out, one Stone
// with one interval per entry, in record order. The intervals of one call
// share a single allocation; each Stone's Intervals has capacity 1, so
// appending to it never overwrites a neighbour.
func (d *Decoder) Tombstones(rec []byte, out []Stone) ([]Stone, error) {
	if len(rec) == 0 || Type(rec[0]) != Tombstones {
		return out, wrongType("tombstones", rec)
	}
	orig := len(out)
	db := newDecbuf(rec)
	if db.Len() == 0 {
		return out, nil
	}
	ivs := make([]tombstones.Interval, 0, db.Len()/minStoneSize)
	out = slices.Grow(out, db.Len()/minStoneSize)
	for db.Len() > 0 {
		ref := db.Be64()
		mint := db.Varint()
		maxt := db.Varint()
		if db.Failed() {
			return out[:orig], fmt.Errorf("tombstones record: tombstone %d: %w", len(out)-orig, db.Err())
		}
		k := len(ivs)
		ivs = append(ivs, tombstones.Interval{Mint: mint, Maxt: maxt})
		out = append(out, Stone{Ref: ref, Intervals: ivs[k : k+1 : k+1]})
	}
	return out, nil
}

// CommitGroup returns the number of records a CommitGroup record announces.
func (d *Decoder) CommitGroup(rec []byte) (int, error) {
	if len(rec) == 0 || Type(rec[0]) != CommitGroup {
		return 0, wrongType("commit group", rec)
	}
	n, err := recordCount(rec)
	if err != nil {
		return 0, fmt.Errorf("commit group record: %w", err)
	}
	return n, nil
}

// WBLCopy returns the number of records a WBLCopy record announces.
func (d *Decoder) WBLCopy(rec []byte) (int, error) {
	if len(rec) == 0 || Type(rec[0]) != WBLCopy {
		return 0, wrongType("WBL copy", rec)
	}
	n, err := recordCount(rec)
	if err != nil {
		return 0, fmt.Errorf("WBL copy record: %w", err)
	}
	return n, nil
}

// recordCount decodes the body of a CommitGroup or WBLCopy record: one
// uvarint in [1, MaxInt32] and nothing after it.
func recordCount(rec []byte) (int, error) {
	db := newDecbuf(rec)
	n := db.Uvarint()
	if err := db.Err(); err != nil {
		return 0, err
	}
	if db.Len() != 0 || n == 0 || n > math.MaxInt32 {
		return 0, corrupt.At("", 1, fmt.Errorf("bad count of %d records with %d trailing bytes", n, db.Len()))
	}
	return int(n), nil
}

// MmapMarkers appends the markers of a MmapMarkers record to out.
func (d *Decoder) MmapMarkers(rec []byte, out []RefMmapMarker) ([]RefMmapMarker, error) {
	if len(rec) == 0 || Type(rec[0]) != MmapMarkers {
		return out, wrongType("mmap markers", rec)
	}
	const size = 16 // two be64
	body := rec[1:]
	if len(body)%size != 0 {
		return out, fmt.Errorf("mmap markers record: %w", corrupt.At("", int64(1+len(body)/size*size),
			fmt.Errorf("%d trailing bytes, not a whole marker", len(body)%size)))
	}
	out = slices.Grow(out, len(body)/size)
	for ; len(body) > 0; body = body[size:] {
		out = append(out, RefMmapMarker{Ref: binary.BigEndian.Uint64(body), MmapRef: binary.BigEndian.Uint64(body[8:])})
	}
	return out, nil
}
