// Package record encodes and decodes the records that isotsdb's head writes
// into its write-ahead log: series definitions, float samples and tombstones.
//
// The byte layout is Prometheus's WAL record format (tsdb/docs/format/wal.md
// in prometheus/prometheus, as its code actually writes it), so a WAL written
// by isotsdb replays in Prometheus and the float data of a Prometheus WAL
// replays here. Every record starts with one Type byte:
//
//	Series (1):     repeated { ref be64 | nlabels uvarint | nlabels × (name, value) }
//	                where each string is a uvarint length followed by its bytes.
//	Samples (2):    nothing more when empty, else
//	                base_ref be64 | base_t be64 | repeated { ref-base_ref varint | t-base_t varint | value bits be64 }
//	                (the first sample is repeated in the loop as deltas 0, 0).
//	Tombstones (3): repeated { ref be64 | mint varint | maxt varint }, one entry per interval.
//
// Decoder.Samples also reads Prometheus's SamplesV2 (11) records, dropping
// their start timestamps. The other types Prometheus defines (exemplars,
// histograms, metadata, ...) are named so callers can recognise and skip them;
// this package does not decode them.
//
// Values are stored as their raw IEEE-754 bits, so every NaN payload
// (including Prometheus's stale marker) survives a round trip.
//
// Encoder and Decoder are not safe for concurrent use; use one per goroutine.
package record
