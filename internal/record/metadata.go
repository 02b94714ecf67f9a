package record

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Metric types of Metadata records: the byte Prometheus's writer stores
// for each of its model.MetricType values. A decoder keeps the byte as
// read, so a type added by a newer writer survives a round trip; the root
// package maps bytes it does not know to MetricTypeUnknown.
const (
	MetricTypeUnknown        uint8 = 0
	MetricTypeCounter        uint8 = 1
	MetricTypeGauge          uint8 = 2
	MetricTypeHistogram      uint8 = 3
	MetricTypeGaugeHistogram uint8 = 4
	MetricTypeSummary        uint8 = 5
	MetricTypeInfo           uint8 = 6
	MetricTypeStateset       uint8 = 7
)

// Field names of a Metadata record entry. Entries carry their fields by
// name so that a writer can add fields; readers skip names they do not
// know.
const (
	metaFieldUnit = "UNIT"
	metaFieldHelp = "HELP"
)

// RefMetadata is the metadata of the series Ref: its metric type (one of
// the MetricType... bytes) and the unit and help text of its metric.
type RefMetadata struct {
	Ref  uint64
	Type uint8
	Unit string
	Help string
}

// Metadata appends a Metadata record holding m to b and returns the
// extended slice. Each entry is the series ref (uvarint), the type byte,
// the number of named fields (uvarint, always 2 here) and the fields UNIT
// and HELP, names and values each a uvarint length and the bytes: the
// layout Prometheus writes.
func (Encoder) Metadata(m []RefMetadata, b []byte) []byte {
	b = append(b, byte(Metadata))
	for i := range m {
		b = binary.AppendUvarint(b, m[i].Ref)
		b = append(b, m[i].Type)
		b = binary.AppendUvarint(b, 2)
		b = appendString(b, metaFieldUnit)
		b = appendString(b, m[i].Unit)
		b = appendString(b, metaFieldHelp)
		b = appendString(b, m[i].Help)
	}
	return b
}

// appendString appends s as a uvarint length followed by its bytes.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// minMetadataSize is the smallest Metadata entry: a one-byte ref, the type
// byte and a one-byte field count of zero.
const minMetadataSize = 1 + 1 + 1

// Metadata appends the entries of a Metadata record to out, in record
// order. Fields other than UNIT and HELP are skipped; a field missing from
// an entry is empty; of a field given twice the last counts. The returned
// strings do not alias rec. The field count is checked against the bytes
// left (each field needs at least two) before the fields are read.
func (d *Decoder) Metadata(rec []byte, out []RefMetadata) ([]RefMetadata, error) {
	if len(rec) == 0 || Type(rec[0]) != Metadata {
		return out, wrongType("metadata", rec)
	}
	orig := len(out)
	db := newDecbuf(rec)
	out = slices.Grow(out, db.Len()/minMetadataSize)
	for db.Len() > 0 {
		m := RefMetadata{Ref: db.Uvarint(), Type: db.Byte()}
		n := db.Uvarint()
		if !db.Failed() && n > uint64(db.Len()/2) {
			db.Failf("field count %d exceeds what the %d bytes left can hold", n, db.Len())
		}
		for i := uint64(0); i < n && !db.Failed(); i++ {
			name := db.UvarintBytes()
			value := db.UvarintBytes()
			if db.Failed() {
				break
			}
			switch string(name) {
			case metaFieldUnit:
				m.Unit = string(value)
			case metaFieldHelp:
				m.Help = string(value)
			}
		}
		if db.Failed() {
			return out[:orig], fmt.Errorf("metadata record: entry %d: %w", len(out)-orig, db.Err())
		}
		out = append(out, m)
	}
	return out, nil
}
