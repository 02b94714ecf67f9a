package record

import (
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/encoding"
	"github.com/isotsdb/tsdb/labels"
)

// Pieces of the WAL records that other formats built on the same encoding
// reuse: the head's chunk snapshot (Prometheus's memory snapshot) writes a
// series' labels and its newest histogram exactly as Series and histogram
// records do.

// AppendLabels appends ls as a Series record writes a label set: the
// number of labels, then each name and value with its length (uvarints).
func AppendLabels(b []byte, ls labels.Labels) []byte { return appendLabels(b, ls) }

// ReadLabels reads what AppendLabels writes. Names must be in increasing
// order; the labels do not alias db's bytes.
func (d *Decoder) ReadLabels(db *encoding.Decbuf) (labels.Labels, error) {
	n := db.Uvarint()
	// Each label needs at least two bytes (two zero lengths).
	if !db.Failed() && n > uint64(db.Len()/2) {
		db.Failf("label count %d exceeds what the %d bytes left can hold", n, db.Len())
	}
	if db.Failed() {
		return labels.Labels{}, db.Err()
	}
	return d.labels(db, int(n))
}

// AppendHistogram appends h as a histogram record encodes one sample's
// histogram.
func AppendHistogram(b []byte, h *histogram.Histogram) []byte { return appendHistogram(b, h) }

// AppendFloatHistogram appends h as a float histogram record encodes one
// sample's histogram.
func AppendFloatHistogram(b []byte, h *histogram.FloatHistogram) []byte {
	return appendFloatHistogram(b, h)
}

// ReadHistogram reads what AppendHistogram writes; check db.Err after.
func ReadHistogram(db *encoding.Decbuf) *histogram.Histogram { return decodeHistogram(db) }

// ReadFloatHistogram reads what AppendFloatHistogram writes; check db.Err
// after.
func ReadFloatHistogram(db *encoding.Decbuf) *histogram.FloatHistogram {
	return decodeFloatHistogram(db)
}
