// Package chunks holds the sample chunk encoding of isotsdb: a bit stream
// writer and reader, the Gorilla-style XOR chunk that packs a run of
// (timestamp, value) samples into a few bits each, and the segment files
// that hold a block's chunks on disk.
//
// The XOR chunk is byte-for-byte the encoding that Prometheus's TSDB calls
// "XOR chunk data" (tsdb/docs/format/chunks.md), so chunks written here can be
// read by Prometheus tooling and vice versa. A chunk's bytes are:
//
//	num_samples uint16 big-endian
//	t0 varint, v0 as 64 raw bits
//	t1-t0 uvarint, v1 XOR-encoded against v0
//	then per sample: delta-of-delta of the timestamp, value XOR-encoded
//	zero padding up to a byte boundary
//
// # Segment files
//
// A block stores its chunks in the segment files of its chunks/ directory,
// 000001, 000002, ..., in the layout Prometheus's TSDB uses for blocks
// (tsdb/docs/format/chunks.md): an 8-byte header (magic 0x85BD40DD, version
// 1, three zero bytes), then one record per chunk:
//
//	data length uvarint | encoding byte | chunk bytes | CRC-32C of encoding and chunk bytes, big-endian
//
// SegmentWriter writes them, cutting a new file before one would pass the
// size limit (512 MiB by default); a record never spans files.
// SegmentReader maps the files and returns chunks by reference: the 0-based
// index of the file in name order in the upper 32 bits of a uint64, the
// record's byte offset in the lower 32 (see BlockRef).
//
// # Concurrency
//
// A chunk is written by one goroutine at a time. Readers may iterate a chunk
// while it is being appended to, under one rule: each call to
// [Chunk.Iterator] must not overlap an Append (the head calls it with the
// series lock held, the same lock that Append runs under). The iterator
// captures at creation everything an Append could change afterwards: the
// sample count, the slice header and a copy of the last byte. It then
// decodes exactly that many samples and never touches the header bytes, the
// last byte or anything past the captured length, so appends that OR bits
// into the last byte, append bytes or reallocate do not race with it.
package chunks
