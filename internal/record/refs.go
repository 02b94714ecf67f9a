package record

import (
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// RefSeries defines a series: the reference the head assigned to it and its
// labels. Later Samples and Tombstones records name the series by Ref only.
type RefSeries struct {
	Ref    uint64
	Labels labels.Labels
}

// RefSample is one float sample of the series Ref. ST is its start
// timestamp (0: none); only SamplesV2 records store it.
type RefSample struct {
	Ref uint64
	ST  int64
	T   int64
	V   float64
}

// Stone is a set of deleted time ranges of the series Ref. The encoding has
// one entry per interval, so a Stone with no intervals encodes to nothing,
// and decoding yields one Stone per interval.
type Stone struct {
	Ref       uint64
	Intervals tombstones.Intervals
}

// RefMmapMarker is an entry of a MmapMarkers record: the out-of-order
// samples of series Ref logged before it were written to the head chunk
// at MmapRef (Prometheus's chunks_head/ reference: segment and offset).
// isotsdb loads only in-order chunks from those files and ignores the
// markers.
type RefMmapMarker struct {
	Ref     uint64
	MmapRef uint64
}
