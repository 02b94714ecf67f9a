// Package tsdb is an embeddable time-series database with write isolation.
//
// It stores Prometheus-style samples: series named by label sets, each a
// stream of (int64 millisecond timestamp, float64 value) pairs. Every
// Appender is one transaction: Commit makes all of its samples visible at
// once. A Querier sees exactly the commits that had completed when it was
// created, so a query never sees part of a commit (half a scrape) nor any
// commit made after it started.
//
// Start with Open, write with DB.Appender and read with DB.Querier. The
// isolation rules are described, and implemented, in isolation.go.
//
// Layout of the package, by file:
//   - db.go, db_readonly.go: the DB; Open and OpenReadOnly (one assembly),
//     its blocks, Close and the preamble of the operations that hold the
//     compaction lock. options.go, errors.go, metrics.go: Options, the
//     exported errors, the metrics.
//   - head.go, head_append.go, head_read.go, head_refs.go, head_stripes.go,
//     head_tombstones.go, head_truncate.go: the in-memory head: series,
//     appends (transactions), isolated reads, the series-by-ref table, the
//     series-by-labels map, deletion intervals, truncation.
//   - isolation.go: write IDs, read snapshots, the low watermark and the
//     per-series write-ID rings. atomic.go: atomic raise and lower.
//   - querier.go, querier_labels.go, merge.go: the Querier, its label
//     queries, merging blocks and head.
//   - wal.go, wal_checkpoint.go: logging commits, replaying the WAL,
//     checkpointing it after a head truncation.
//   - block.go, block_write.go: reading and writing blocks on disk.
//   - compact.go, compact_head.go, retention.go: DB.Compact and block
//     compaction, head compaction, retention.
//   - delete.go, clean_tombstones.go, snapshot.go: DB.Delete,
//     DB.CleanTombstones, DB.Snapshot.
//
// Subpackages hold the storage layers. Public: labels (label sets,
// matchers, selectors), chunks (the sample encodings and chunks.Meta), vfs
// (the filesystem interface all I/O goes through), check (the offline
// consistency checker, and the one way cmd/tsdb reads the formats) and web
// (the HTTP handler). Under internal/: index (postings and the block
// index), chunkseg (the chunk segment files of a block), wlog (the WAL's
// segments) and record (its records), tombstones (deletion intervals and
// their file), encoding (Decbuf, the one decoder those formats share),
// corrupt (the one corruption error), metricnames (the metrics' names) and
// chunktest (test sample generators).
//
// Errors: the exported sentinels are in errors.go. Every error that reports
// damaged data on disk, whatever the file, satisfies errors.Is(err,
// ErrCorrupt), and errors.As(err, new(*CorruptionError)) gives the file and
// offset of the damage; a damaged block's errors also wrap ErrCorruptBlock.
package tsdb
