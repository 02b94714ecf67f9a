// Package headchunks writes and reads the head chunk files of a database's
// chunks_head/ directory: the files into which the head memory-maps its full
// chunks, in the format Prometheus's TSDB uses (tsdb/docs/format/head_chunks.md),
// so that each program can open the other's directory.
//
// # Files
//
// Files are named by a sequence number, six digits zero-padded (000001,
// 000002, ...), and the numbers of the files in a directory are contiguous:
// Prometheus refuses to open a directory with a gap. Each file starts with
// an 8-byte header (magic 0x0130BC91 big-endian, version 1, three zero
// bytes) and then holds records, one per chunk:
//
//	series ref uint64 BE | mint int64 BE | maxt int64 BE | encoding byte |
//	data length uvarint | data | CRC-32C uint32 BE
//
// The CRC covers every byte of the record before it, from the series ref
// to the end of the data. The top bit of the encoding byte (0x80) marks an
// out-of-order chunk. A record never spans files; a file may end in zero
// bytes (Prometheus preallocates its files), which are not a record.
//
// A chunk is addressed by the reference Prometheus calls ChunkDiskMapperRef
// (see Ref): the file's sequence number in the upper 32 bits and the byte
// offset of its record in the lower 32.
//
// # Use
//
// Open loads a directory, checking every record, repairs what a crash or
// damage left (see Open), and returns a Writer that appends records to new
// files and serves chunks by reference, those loaded (OpenRefs gives their
// references) and those added. Truncate drops the oldest files
// once the head no longer needs them.
//
// # Mapped chunks
//
// Chunks handed out by Open and Writer.Chunk read the file's memory mapping
// in place: nothing is copied. Each mapping is unmapped by the garbage
// collector once no chunk that reads it is reachable (runtime.AddCleanup),
// never explicitly, so removing a file (Truncate) or closing the Writer
// leaves every chunk handed out valid. The bytes are reached through the
// chunk value itself: an iterator or a Bytes slice taken from such a chunk
// is safe to use only while the chunk is reachable too, so callers keep the
// chunk (not just its iterator) for as long as they iterate.
package headchunks
