// Package remote sends the samples an isotsdb DB writes to its WAL to a
// Prometheus remote-write 1.0 receiver.
//
// A Sender tails DIR/wal the way Prometheus's queue manager tails its own
// WAL: it reads the newest checkpoint for series definitions, then the
// segments in order, and follows the newest segment as it grows (polling,
// or woken by Notify). Float samples and native histograms (integer and
// float, exponential and custom buckets) are sent for series kept by
// relabeling, with the external labels added, spread over shards by series
// and sent in batches with retries (see sender.go, client.go).
//
// Delivery is at least once. The sender remembers the WAL position up to
// which every sample it read was acknowledged by the receiver (tracker.go)
// and persists it in DIR/remote/<name>.position (position.go); a new Sender
// over the same directory resumes there. KeepWALFrom tells the DB which
// segments must survive checkpoints for that to hold, within a configured
// cap on how far the sender may fall behind (keep.go).
//
// Records of a commit group (one commit with histograms) are sent only once
// the group's last record is in the WAL, so a commit being written is sent
// whole or not at all.
//
// Files: sender.go (lifecycle, retries, resharding rule), config.go,
// read.go (the reader goroutine: checkpoint, catch-up, tailing, lost and
// skipped segments, series garbage collection), tail.go (reading one
// segment from a record boundary), series.go (ref to labels, relabeling),
// shards.go (queues, batching, encoding), client.go (HTTP),
// tracker.go (acknowledged position), position.go (position file),
// keep.go (KeepWALFrom), metrics.go.
//
// Not sent: exemplars, metadata, start timestamps (remote write 1.0 has no
// field for them) and tombstones. Only remote write 1.0 is spoken.
package remote
