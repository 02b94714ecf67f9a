// Package chunkseg writes and reads the chunk segment files of a block.
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
// record's byte offset in the lower 32 (see BlockRef). The chunks
// themselves (their encodings, iterators, chunks.Meta) are package chunks.
//
// Damaged files give a *corrupt.Error naming the file and the offset of
// the damage; one about a chunk's own bytes wraps the error chunks returns
// for them.
package chunkseg
