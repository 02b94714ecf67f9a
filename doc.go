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
// Lock order. A goroutine takes locks in this order only, never two of one
// class at once, never a read lock twice, and releases each itself:
//   - DB.cmtx: compaction, retention, Delete, CleanTombstones, Snapshot
//     and Close hold it throughout;
//   - DB.mu: the block list, headMint, closed;
//   - querier.mu: a Querier's closed flag (queries hold the read side);
//   - querier.setsMu: the head series sets a Querier handed out;
//   - headSeriesSet.mu: a head series set's cursor and captured series;
//   - head.closeMu: commits (read side) against close (write side);
//   - head.tombsMu: replacing the head's deletion intervals;
//   - seriesStripe.mu: a stripe of the series-by-labels map;
//   - index.MemPostings.mu: the head's postings;
//   - memSeries.mu: a series' chunks, write-ID ring and pending marks;
//   - head.rangeMu: the range commits record during a truncation;
//   - isolation.mu: write IDs in flight and open read snapshots;
//   - Block.mu: a block's readers, closing state and tombstones;
//   - refTable.mu: the series-by-ref table's pages and large refs.
//
// The WAL's, the block tombstones' and vfs.MemFS's locks come after all of
// these and never call back up. The order is the rank order of
// internal/lockorder, whose mutexes all of these are (DB.cmtx, a channel,
// reports to the same table); README.md lists the edges that make it.
// Built with the tag invariants (go test -tags invariants) every lock
// operation checks the order, and the head checks its invariants at safe
// points (invariants.go), panicking on a violation; normal builds pay
// nothing for either.
//
// Package layering: labels and vfs import nothing of ours; internal/*
// imports them, chunks and each other, never this package; chunks imports
// labels, vfs and internal/*; this package all of those; check the same
// as this package, but not this package; web, cmd/tsdb and the prom
// module only the public packages (this one, labels, vfs, chunks, check;
// and web), never internal/*. TestLayering checks every import.
//
// Subpackages hold the storage layers: labels, chunks (sample encoding and
// chunk files), vfs (the filesystem interface all I/O goes through), and
// under internal/ the index (postings and the block index), the WAL
// (wlog), its records (record) and tombstones.
package tsdb
