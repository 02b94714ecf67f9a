// Package check is an offline consistency checker for isotsdb data
// directories. It reads the files with the format packages (internal/index,
// chunks and internal/chunkseg, internal/tombstones, internal/wlog,
// internal/record) and never through a DB, takes no lock and writes nothing, so it can look at a directory another process has open,
// and a test can run it on every database it made (Dir after Close).
//
// For every block it checks:
//
//   - meta.json: parses, version 1, minTime < maxTime, its ULID is the
//     directory's name, and its stats match what the block holds (the
//     split into float and histogram samples too, where the meta has it);
//   - index: opens (header, TOC and the checksums of the symbol table and
//     postings offset table), symbols sorted, every series entry decodes
//     and verifies, series strictly sorted by labels, every postings list
//     verifies and is strictly increasing, and the postings and the series
//     agree: a series is in the list of each of its label pairs and in no
//     other;
//   - chunks: every chunk a series refers to resolves and its CRC verifies,
//     its samples decode, strictly increase in time and lie inside the
//     chunk's [minTime, maxTime] from the index and inside the block's
//     [minTime, maxTime), and as many decode as its header counts; native
//     histogram samples (both histogram encodings) pass the histogram
//     package's Validate, stale markers excepted, and a histogram chunk
//     ends with its last sample; the chunks of a series are sorted and do
//     not overlap; every record of every segment file verifies and has an
//     encoding the chunks package reads, referenced or not;
//   - tombstones: the file decodes and names series of the index.
//
// Blocks that overlap in time and leftover temporary directories are
// reported as warnings.
//
// The WAL: the last checkpoint and every segment after it read to the end
// and every record decodes. Damage after which no valid record follows in
// the log is what a crash leaves at the tail while writing (a torn tail,
// which the next open repairs) and is a warning; damage followed by valid
// records means records were lost from the middle of the log and is an
// error. Damage in a checkpoint is always an error.
//
// The head chunk files (chunks_head/, Prometheus's format): every file up
// to the first damage is read and every record's CRC verified, as the
// DB's open reads them (internal/headchunks.Verify), and the files,
// chunks and bytes are counted. Damage is a warning: the next open cuts
// the damaged file after its last whole chunk, and the WAL, which holds
// every sample the files do, replays the rest.
//
// Every finding is a Problem naming the file (or directory), the byte
// offset where known, and the series where relevant.
//
// # Reads for the inspection commands
//
// Package check is also the one way cmd/tsdb reaches the on-disk formats
// where the public API does not: BlockChunks reads a block's series with
// the range, encoding and sample count of each chunk (tsdb analyze),
// IndexSeries its series and chunk time ranges from the index alone,
// LastCheckpoint finds the WAL's newest checkpoint (tsdb ls).
package check
