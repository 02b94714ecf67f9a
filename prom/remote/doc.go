// Package remote sends the samples an isotsdb DB writes to its WAL to a
// Prometheus remote-write receiver, as remote write 1.0 or 2.0
// (Config.ProtobufMessage).
//
// A Sender tails DIR/wal the way Prometheus's queue manager tails its own
// WAL: it reads the newest checkpoint for series definitions, then the
// segments in order, and follows the newest segment as it grows (polling,
// or woken by Notify). Float samples and native histograms (integer and
// float, exponential and custom buckets) are sent for series kept by
// relabeling, with the external labels added, spread over shards by series
// and sent in batches with retries (see sender.go, client.go). With
// Config.SendExemplars, the exemplars of a commit go with the first sample
// of their series in the commit (or, in 1.0, alone in a TimeSeries if the
// series has no sample in the commit, as Prometheus's queue manager sends
// every exemplar). Remote write 2.0 (encode_v2.go) also carries each
// sample's start time and its series' metadata as of its commit (from
// the WAL's Metadata records; a commit's metadata is applied before its
// samples are queued). With remote write 1.0 and Config.Metadata.Send (on
// in DefaultConfig), the newest metadata of each metric family among the
// series sent goes every Metadata.SendInterval in requests holding only
// metadata, at most Metadata.MaxSamplesPerSend entries each, as
// Prometheus's queue manager sends it (metadata.go).
//
// Delivery is at least once. The sender remembers the WAL position up to
// which every sample it read was acknowledged by the receiver (tracker.go)
// and persists it in DIR/remote/<name>.position (position.go); a new Sender
// over the same directory resumes there. Resuming at that low-water mark
// over the shards sends again what faster shards had stored; with remote
// write 1.0 a rejected request holding such records (those in the WAL
// when the Sender was created) is split in halves down to single samples,
// so that only the samples the receiver rejects on their own are dropped
// (replay.go). KeepWALFrom tells the DB which segments must survive
// checkpoints for that to hold, within a configured cap on how far the
// sender may fall behind (keep.go).
//
// Records of a commit group (one commit with histograms) are sent only once
// the group's last record is in the WAL, so a commit being written is sent
// whole or not at all.
//
// Files: sender.go (lifecycle, retries, resharding rule), config.go,
// read.go (the reader goroutine: checkpoint, catch-up, tailing, lost and
// skipped segments, series garbage collection), tail.go (reading one
// segment from a record boundary), series.go (ref to labels, relabeling),
// shards.go (queues, batching, 1.0 encoding), encode_v2.go (2.0
// encoding), metadata.go (1.0 metadata), client.go (HTTP),
// tracker.go (acknowledged position), position.go (position file),
// replay.go (splitting requests rejected after a restart),
// keep.go (KeepWALFrom), metrics.go.
//
// Not sent: tombstones; with 1.0, start times (1.0 has no field for
// them). A 2.0 exemplar
// whose series has no sample in its commit nor earlier in its batch is not
// sent (a 2.0 TimeSeries needs a sample; Prometheus's receiver rejects
// the request otherwise) and is counted in exemplars_failed_total.
package remote
