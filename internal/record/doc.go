// Package record encodes and decodes the records that isotsdb's head writes
// into its write-ahead log: series definitions, float and histogram samples,
// series metadata, tombstones and exemplars.
//
// The byte layout is Prometheus's WAL record format (tsdb/docs/format/wal.md
// in prometheus/prometheus, as its code actually writes it), so a WAL written
// by isotsdb replays in Prometheus and the float and histogram data of a
// Prometheus WAL replays here. Every record starts with one Type byte:
//
//	Series (1):     repeated { ref be64 | nlabels uvarint | nlabels × (name, value) }
//	                where each string is a uvarint length followed by its bytes.
//	Samples (2):    nothing more when empty, else
//	                base_ref be64 | base_t be64 | repeated { ref-base_ref varint | t-base_t varint | value bits be64 }
//	                (the first sample is repeated in the loop as deltas 0, 0).
//	Tombstones (3): repeated { ref be64 | mint varint | maxt varint }, one entry per interval.
//	Exemplars (4):  nothing more when empty, else
//	                base_ref be64 | base_t be64 | repeated { ref-base_ref varint | t-base_t varint |
//	                value bits be64 | nlabels uvarint | nlabels × (name, value) }
//	                (labels as in Series records, but in any order).
//	MmapMarkers (5): repeated { ref be64 | head chunk ref be64 } (Prometheus's WBL only).
//	Metadata (6):   repeated { ref uvarint | type byte | nfields uvarint | nfields × (name, value) }
//	                where each string is a uvarint length followed by its bytes; the
//	                fields written are UNIT and HELP, others are skipped on reading.
//	Histogram samples (7, 8, 9, 10): like Samples, with a histogram in
//	                place of each value.
//	Samples V2 (11) and histogram samples V2 (12, 13): nothing more when empty, else
//	                ref varint | t varint | st varint | value, then repeated
//	                { ref-prev_ref varint | t-first_t varint | st marker byte [+ st-first_st varint] | value }
//	                where the marker is 0 (no start timestamp), 1 (the previous
//	                sample's) or 2 (explicit, the varint follows), and the value
//	                is the float's bits be64 (11) or a histogram (12, 13).
//	histogram:      hint byte | schema varint | zero_threshold be64 | zero_count | count | sum be64 |
//	                positive spans | negative spans | positive buckets | negative buckets
//	                [| custom values, for the custom-bucket schema only]
//	                where counts are uvarints (integer) or be64 bits (float), every list is a
//	                uvarint length and its elements, a span is offset varint | length uvarint,
//	                integer buckets are varint deltas and float buckets and custom values be64 bits.
//
// Integer histograms go into type 7 and float ones into 8, except that those
// with custom buckets are split off into 9 and 10 (Encoder.HistogramSamples
// returns them to the caller, which writes them next). The V2 types hold
// both kinds of schema. Only the V2 types store start timestamps
// (RefSample.ST and the histogram samples' ST); Encoder.Samples drops them.
// The other types Prometheus
// defines (...) are named so callers can recognise and
// skip them; this package does not decode them.
//
// isotsdb adds two record types of its own, far above Prometheus's, which
// Prometheus skips as unknown: CommitGroup (200) and WBLCopy (201), each a
// uvarint count of the records that follow and belong to it (see Type).
//
// Values are stored as their raw IEEE-754 bits, so every NaN payload
// (including Prometheus's stale marker) survives a round trip.
//
// Encoder and Decoder are not safe for concurrent use; use one per goroutine.
package record
