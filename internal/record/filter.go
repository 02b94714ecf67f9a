package record

import (
	"fmt"
	"slices"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// FilterSeries appends to b a Series record holding the entries of the
// Series record rec whose ref keep accepts, byte for byte, and returns the
// extended slice with the number of entries read and kept; if none is
// kept, b is returned unchanged. It checks rec as Series does (label
// counts, lengths, name order) but builds no label set: a WAL checkpoint,
// which copies the series of a whole head, allocates nothing per series.
func (d *Decoder) FilterSeries(rec []byte, keep func(ref uint64) bool, b []byte) (out []byte, total, kept int, err error) {
	if len(rec) == 0 || Type(rec[0]) != Series {
		return b, 0, 0, wrongType("series", rec)
	}
	orig := len(b)
	b = slices.Grow(b, len(rec)) // once, not record by record through append's steps
	b = append(b, byte(Series))
	db := newDecbuf(rec)
	for db.Len() > 0 {
		start := db.Offset()
		ref := db.Be64()
		n := db.Uvarint()
		if !db.Failed() && n > uint64(db.Len()/2) {
			db.Failf("label count %d exceeds what the %d bytes left can hold", n, db.Len())
		}
		if db.Failed() {
			return b[:orig], 0, 0, fmt.Errorf("series record: series %d: %w", total, db.Err())
		}
		var prev []byte
		for i := range int(n) {
			off := db.Offset()
			nb := db.UvarintBytes()
			db.UvarintBytes()
			if db.Failed() {
				return b[:orig], 0, 0, fmt.Errorf("series record: series %d (ref %d): %w", total, ref, db.Err())
			}
			if i > 0 && string(nb) <= string(prev) {
				return b[:orig], 0, 0, fmt.Errorf("series record: series %d (ref %d): %w", total, ref,
					corrupt.Errorf("", int64(off), "label name %q does not sort after %q", nb, prev))
			}
			prev = nb
		}
		total++
		if keep(ref) {
			kept++
			b = append(b, rec[start:db.Offset()]...)
		}
	}
	if kept == 0 {
		return b[:orig], total, 0, nil
	}
	return b, total, kept, nil
}
