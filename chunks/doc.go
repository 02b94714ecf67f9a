// Package chunks holds the sample chunk encoding of isotsdb: a bit stream
// writer and reader, the Gorilla-style XOR chunk that packs a run of
// (timestamp, value) samples into a few bits each, and Meta, a chunk with
// its time range as a block's index records it. The files that hold a
// block's chunks on disk are written and read inside the module
// (internal/chunkseg).
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
// The other encodings are Prometheus's too: integer and float native
// histograms (histogram.go), and, for samples that carry a start timestamp
// (OpenTelemetry's cumulative start time), XOR2 for floats (xor2.go) and
// the ST variants of the two histogram encodings (st.go). Their iterators
// have AtST besides the Iterator methods; the other iterators' AtST
// returns 0.
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
