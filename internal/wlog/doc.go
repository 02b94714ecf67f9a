// Package wlog is isotsdb's write-ahead log: a directory of numbered segment
// files holding opaque records, in Prometheus's WAL format so that either
// program can read what the other wrote.
//
// # Layout
//
// A log directory holds segments named by eight decimal digits (00000000,
// 00000001, ...) and checkpoints (checkpoint.NNNNNNNN/, themselves logs).
// A segment is a sequence of 32 KiB pages; only the last page of a segment
// may be short. A record is stored as one or more fragments, each with a
// 7-byte header:
//
//	type <1 byte> | length <uint16, big endian> | CRC-32C of the data <uint32, big endian> | data <length bytes>
//
// The low 3 bits of the type byte say which part of a record the fragment is
// (1 full, 2 first, 3 middle, 4 last); bit 3 marks a snappy-compressed
// record and bit 4 a zstd-compressed one (zstd is Prometheus-only: this
// package reports it as ErrUnsupportedCompression rather than misreading
// it). A zero type byte means the rest of the page is zero padding, and a
// page tail too short for a header (fewer than 7 bytes) is always padding.
// A record that does not fit in the current page continues in the next ones:
// its first and middle fragments always end exactly at a page boundary.
// Records never span segments: a record that does not fit in the space left
// in the current segment starts a new one (a record larger than a whole
// segment gets a segment of its own, which is then larger than the
// configured size).
//
// # Use
//
// Open starts a new segment after the last existing one, so it never
// appends to a segment that a crash may have torn. Before logging, the
// owner replays the log with NewSegmentsReader and Reader; if the Reader
// ends with a *corrupt.Error (a torn tail after a crash, or damaged bytes),
// Repair truncates the log at the last whole record before the damage.
// Checkpoint compacts a prefix of the segments into a checkpoint so the
// segments can be deleted with Truncate.
//
// A WL is safe for concurrent use. The package-level functions operate on
// directories and may be called concurrently with a WL on the same
// directory only as documented on each.
package wlog
