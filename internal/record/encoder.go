package record

import (
	"encoding/binary"
	"math"

	"github.com/isotsdb/tsdb/labels"
)

// Encoder appends encoded records to caller-supplied buffers. The zero value
// is ready to use. Its methods allocate only when b has too little capacity.
type Encoder struct{}

// Series appends a Series record holding s to b and returns the extended
// slice. Labels are written in their (sorted) order.
func (Encoder) Series(s []RefSeries, b []byte) []byte {
	b = append(b, byte(Series))
	for i := range s {
		b = binary.BigEndian.AppendUint64(b, s[i].Ref)
		b = appendLabels(b, s[i].Labels)
	}
	return b
}

// appendLabels writes the label count and then each name and value as a
// uvarint length followed by the bytes.
func appendLabels(b []byte, ls labels.Labels) []byte {
	b = binary.AppendUvarint(b, uint64(ls.Len()))
	ls.Range(func(l labels.Label) {
		b = binary.AppendUvarint(b, uint64(len(l.Name)))
		b = append(b, l.Name...)
		b = binary.AppendUvarint(b, uint64(len(l.Value)))
		b = append(b, l.Value...)
	})
	return b
}

// Samples appends a Samples record holding s to b and returns the extended
// slice. The first sample's ref and timestamp are the base the others are
// stored relative to (with wrapping arithmetic, so any values round-trip);
// values are stored as raw bits, keeping NaN payloads. Start timestamps are
// not stored (see SamplesV2).
func (Encoder) Samples(s []RefSample, b []byte) []byte {
	b = append(b, byte(Samples))
	if len(s) == 0 {
		return b
	}
	baseRef, baseT := s[0].Ref, s[0].T
	b = binary.BigEndian.AppendUint64(b, baseRef)
	b = binary.BigEndian.AppendUint64(b, uint64(baseT))
	for i := range s {
		b = binary.AppendVarint(b, int64(s[i].Ref-baseRef))
		b = binary.AppendVarint(b, s[i].T-baseT)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(s[i].V))
	}
	return b
}

// SamplesV2 appends a SamplesV2 record holding s, start timestamps
// included, to b and returns the extended slice; the bytes are those
// Prometheus writes with start-timestamp storage on. The first sample is
// stored as (ref, t, st varints, value bits); each later one as its ref's
// delta to the previous sample's, its time's delta to the first sample's,
// a start-timestamp marker (none for 0, same as the previous sample's, or
// explicit and a varint delta to the first sample's) and its value bits.
// Deltas wrap, so any values round-trip.
func (Encoder) SamplesV2(s []RefSample, b []byte) []byte {
	b = append(b, byte(SamplesV2))
	if len(s) == 0 {
		return b
	}
	first := &s[0]
	b = binary.AppendVarint(b, int64(first.Ref))
	b = binary.AppendVarint(b, first.T)
	b = binary.AppendVarint(b, first.ST)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(first.V))
	for i := 1; i < len(s); i++ {
		b = binary.AppendVarint(b, int64(s[i].Ref-s[i-1].Ref))
		b = binary.AppendVarint(b, s[i].T-first.T)
		b = appendSTMarker(b, s[i].ST, s[i-1].ST, first.ST)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(s[i].V))
	}
	return b
}

// Tombstones appends a Tombstones record holding t to b and returns the
// extended slice. Each interval becomes its own (ref, mint, maxt) entry.
func (Encoder) Tombstones(t []Stone, b []byte) []byte {
	b = append(b, byte(Tombstones))
	for i := range t {
		for _, iv := range t[i].Intervals {
			b = binary.BigEndian.AppendUint64(b, t[i].Ref)
			b = binary.AppendVarint(b, iv.Mint)
			b = binary.AppendVarint(b, iv.Maxt)
		}
	}
	return b
}

// CommitGroup appends to b a CommitGroup record announcing that the next n
// records belong to one commit.
func (Encoder) CommitGroup(n int, b []byte) []byte {
	b = append(b, byte(CommitGroup))
	return binary.AppendUvarint(b, uint64(n))
}

// WBLCopy appends to b a WBLCopy record announcing that the next n records
// are copies of samples that are also in the writer's WAL.
func (Encoder) WBLCopy(n int, b []byte) []byte {
	b = append(b, byte(WBLCopy))
	return binary.AppendUvarint(b, uint64(n))
}

// MmapMarkers appends to b a MmapMarkers record holding markers. isotsdb
// never writes one into a log; tests use it to stand in for Prometheus.
func (Encoder) MmapMarkers(markers []RefMmapMarker, b []byte) []byte {
	b = append(b, byte(MmapMarkers))
	for _, m := range markers {
		b = binary.BigEndian.AppendUint64(b, m.Ref)
		b = binary.BigEndian.AppendUint64(b, m.MmapRef)
	}
	return b
}
