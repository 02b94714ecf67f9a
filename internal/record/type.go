package record

// Type is the first byte of every record and says how the rest is encoded.
// The values are Prometheus's; never renumber them.
type Type uint8

// Record types. Series, Samples, SamplesV2, Tombstones, Exemplars, MmapMarkers,
// Metadata, the histogram sample types (7 to 10, 12 and 13) and isotsdb's CommitGroup and
// WBLCopy are decoded by this package; the others
// are listed so that callers can recognise records written by Prometheus and
// skip them instead of misreading them.
const (
	// Unknown is what RecordType reports for an empty record or a type byte
	// this package does not know.
	Unknown Type = 255
	// Series records define series: a reference and its label set.
	Series Type = 1
	// Samples records hold float samples of already defined series.
	Samples Type = 2
	// Tombstones records hold deletion intervals of series.
	Tombstones Type = 3
	// Exemplars records hold exemplars of already defined series.
	// Encoder.Exemplars writes them and Decoder.Exemplars reads them.
	Exemplars Type = 4
	// MmapMarkers records (Prometheus's out-of-order WBL) say that a
	// series' out-of-order samples logged so far were written to a head
	// chunk file (chunks_head/). Decoder.MmapMarkers reads them.
	MmapMarkers Type = 5
	// Metadata records hold the metric type, unit and help of series.
	// Encoder.Metadata writes them and Decoder.Metadata reads them.
	Metadata Type = 6
	// HistogramSamples records hold integer native histograms with
	// exponential schemas. Encoder.HistogramSamples writes them and
	// Decoder.HistogramSamples reads them.
	HistogramSamples Type = 7
	// FloatHistogramSamples records hold float native histograms with
	// exponential schemas. Encoder.FloatHistogramSamples writes them and
	// Decoder.FloatHistogramSamples reads them.
	FloatHistogramSamples Type = 8
	// CustomBucketsHistogramSamples records hold integer histograms with
	// custom buckets, in the HistogramSamples layout.
	// Decoder.HistogramSamples reads them.
	CustomBucketsHistogramSamples Type = 9
	// CustomBucketsFloatHistogramSamples records hold float histograms with
	// custom buckets, in the FloatHistogramSamples layout.
	// Decoder.FloatHistogramSamples reads them.
	CustomBucketsFloatHistogramSamples Type = 10
	// SamplesV2 records hold float samples with optional start timestamps.
	// Encoder.SamplesV2 writes them and Decoder.Samples reads them.
	SamplesV2 Type = 11
	// HistogramSamplesV2 records hold integer histograms of any schema with
	// start timestamps. Encoder.HistogramSamplesV2 writes them and
	// Decoder.HistogramSamples reads them.
	HistogramSamplesV2 Type = 12
	// FloatHistogramSamplesV2 records hold float histograms of any schema
	// with start timestamps. Encoder.FloatHistogramSamplesV2 writes them and
	// Decoder.FloatHistogramSamples reads them.
	FloatHistogramSamplesV2 Type = 13
	// MinValidTime records (Prometheus) appear only in checkpoints and carry
	// the mint of the truncation that wrote them; skipped here.
	MinValidTime Type = 14

	// CommitGroup is isotsdb's record, not Prometheus's: it says that the
	// next N records (a uvarint after the type byte) hold the samples of
	// one commit, which must be replayed whole or not at all. Commits
	// whose samples fit one record (float-only ones) do not need it.
	// Prometheus skips record types it does not know ("so that users can
	// roll back"), so a WAL with it stays readable by Prometheus, which
	// just does not get the atomicity. The value is far above Prometheus's
	// types so that a new one of theirs does not collide with it.
	CommitGroup Type = 200
	// WBLCopy is isotsdb's record, not Prometheus's, written only into
	// the WBL (the log of out-of-order samples, see the root package's
	// wal.go): it says that the next N records (a uvarint after the type
	// byte, at least 1) hold copies of samples that are also in the
	// WAL of the DB that wrote them. That DB skips them on replay, its WAL
	// being authoritative; Prometheus skips the marker and reads the
	// samples. It is laid out like CommitGroup.
	WBLCopy Type = 201
)

// String returns the lower-case snake_case name of the type, or "unknown".
func (t Type) String() string {
	switch t {
	case Series:
		return "series"
	case Samples:
		return "samples"
	case Tombstones:
		return "tombstones"
	case Exemplars:
		return "exemplars"
	case MmapMarkers:
		return "mmap_markers"
	case Metadata:
		return "metadata"
	case HistogramSamples:
		return "histogram_samples"
	case FloatHistogramSamples:
		return "float_histogram_samples"
	case CustomBucketsHistogramSamples:
		return "custom_buckets_histogram_samples"
	case CustomBucketsFloatHistogramSamples:
		return "custom_buckets_float_histogram_samples"
	case SamplesV2:
		return "samples_v2"
	case HistogramSamplesV2:
		return "histogram_samples_v2"
	case FloatHistogramSamplesV2:
		return "float_histogram_samples_v2"
	case MinValidTime:
		return "min_valid_time"
	case CommitGroup:
		return "commit_group"
	case WBLCopy:
		return "wbl_copy"
	default:
		return "unknown"
	}
}

// RecordType returns the type of an encoded record: the value of its first
// byte if that is a type listed in this package, Unknown otherwise (and for
// an empty record). It does not validate the rest of the record.
func RecordType(rec []byte) Type {
	if len(rec) == 0 {
		return Unknown
	}
	t := Type(rec[0])
	if t >= Series && t <= MinValidTime || t == CommitGroup || t == WBLCopy {
		return t
	}
	return Unknown
}
