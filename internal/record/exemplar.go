package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/isotsdb/tsdb/internal/encoding"
	"github.com/isotsdb/tsdb/labels"
)

// RefExemplar is one exemplar of the series Ref: the exemplar's own labels
// (trace ID and the like, not the series'), its value and its time.
// Prometheus's Exemplars records do not say whether the exemplar carried
// a timestamp of its own, so neither does this.
type RefExemplar struct {
	Ref    uint64
	T      int64
	V      float64
	Labels labels.Labels
}

// Exemplars appends an Exemplars record holding e to b and returns the
// extended slice; the bytes are those Prometheus writes. The first
// exemplar's ref and time are the base the others are stored relative to
// (wrapping, so any values round-trip); values keep their exact bits.
func (Encoder) Exemplars(e []RefExemplar, b []byte) []byte {
	b = append(b, byte(Exemplars))
	if len(e) == 0 {
		return b
	}
	baseRef, baseT := e[0].Ref, e[0].T
	b = binary.BigEndian.AppendUint64(b, baseRef)
	b = binary.BigEndian.AppendUint64(b, uint64(baseT))
	for i := range e {
		b = binary.AppendVarint(b, int64(e[i].Ref-baseRef))
		b = binary.AppendVarint(b, e[i].T-baseT)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(e[i].V))
		b = appendLabels(b, e[i].Labels)
	}
	return b
}

// minExemplarSize is the smallest encoding of one exemplar: two one-byte
// varints, the 8-byte value and a zero label count.
const minExemplarSize = 1 + 1 + 8 + 1

// Exemplars appends the exemplars of an Exemplars record to out. The
// returned labels do not alias rec.
//
// Unlike a series' labels, an exemplar's need not arrive sorted (Prometheus
// writes them as its scrape or remote-write input gave them): they are
// sorted here, and a label set with a duplicate name is returned as it is
// for the caller to reject (labels.Labels.HasDuplicateNames), since the
// record itself is not damaged.
func (d *Decoder) Exemplars(rec []byte, out []RefExemplar) ([]RefExemplar, error) {
	if len(rec) == 0 || Type(rec[0]) != Exemplars {
		return out, wrongType("exemplars", rec)
	}
	orig := len(out)
	db := newDecbuf(rec)
	if db.Len() == 0 {
		return out, nil
	}
	baseRef := db.Be64()
	baseT := int64(db.Be64())
	if db.Failed() {
		return out, fmt.Errorf("exemplars record: base: %w", db.Err())
	}
	out = slices.Grow(out, db.Len()/minExemplarSize)
	for db.Len() > 0 {
		dref := db.Varint()
		dt := db.Varint()
		v := db.Be64()
		n := db.Uvarint()
		if !db.Failed() && n > uint64(db.Len()/2) {
			db.Failf("label count %d exceeds what the %d bytes left can hold", n, db.Len())
		}
		if db.Failed() {
			return out[:orig], fmt.Errorf("exemplars record: exemplar %d: %w", len(out)-orig, db.Err())
		}
		ls, err := d.unsortedLabels(&db, int(n))
		if err != nil {
			return out[:orig], fmt.Errorf("exemplars record: exemplar %d: %w", len(out)-orig, err)
		}
		out = append(out, RefExemplar{
			Ref:    baseRef + uint64(dref),
			T:      baseT + dt,
			V:      math.Float64frombits(v),
			Labels: ls,
		})
	}
	return out, nil
}

// unsortedLabels reads n (name, value) pairs in any order into a label set
// (sorted by the builder). Like labels, it lets the builder alias rec only
// until Labels has copied the strings.
func (d *Decoder) unsortedLabels(db *encoding.Decbuf, n int) (labels.Labels, error) {
	d.builder.Reset()
	for i := 0; i < n; i++ {
		nb := db.UvarintBytes()
		vb := db.UvarintBytes()
		if db.Failed() {
			d.builder.Reset()
			return labels.Labels{}, db.Err()
		}
		d.builder.Add(aliasString(nb), aliasString(vb))
	}
	ls := d.builder.Labels()
	d.builder.Reset()
	return ls, nil
}
