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
//   - exemplar.go, exemplar_storage.go: exemplars (Appender.AppendExemplar,
//     DB.ExemplarQuerier, DB.SetMaxExemplars) and the ring that holds the
//     newest of them.
//   - invariants.go, invariants_on.go, invariants_off.go: the head's
//     invariants, checked under the invariants build tag.
//   - querier.go, querier_labels.go, merge.go: the Querier, its label
//     queries, merging blocks and head.
//   - metadata.go, head_metadata.go, querier_metadata.go: series metadata
//     (metric type, unit, help): its types, the head's versions of it,
//     its WAL records and replay, reading it through a Querier.
//   - wal.go, wal_checkpoint.go, wal_mark.go: logging commits, replaying
//     the WAL, checkpointing it after a head truncation, the WAL marks
//     that tell replay which samples the blocks hold.
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
//   - wblLog.mu: writing, cutting and truncating the WBL;
//   - head.tombsMu: replacing the head's deletion intervals;
//   - seriesStripe.mu: a stripe of the series-by-labels map;
//   - index.MemPostings.mu: the head's postings;
//   - memSeries.mu: a series' chunks, write-ID ring, pending marks and
//     metadata;
//   - head.rangeMu: the range commits record during a truncation;
//   - exemplarStorage.mu: the head's exemplar ring and its index;
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
// Package layering: labels, vfs and histogram import nothing of ours;
// internal/* imports them, chunks and each other, never this package;
// chunks imports labels, vfs, histogram and internal/*; this package all
// of those; check the same as this package, but not this package; web,
// cmd/tsdb and the prom module only the public packages (this one,
// labels, vfs, histogram, chunks, check; and web), never internal/*.
// TestLayering checks every import.
//
// Subpackages hold the storage layers. Public: labels (label sets,
// matchers, selectors), histogram (native histograms: the data model and
// its validation; histogramtest below it generates histograms for tests),
// chunks (the sample encodings and chunks.Meta), vfs
// (the filesystem interface all I/O goes through), check (the offline
// consistency checker, and the one way cmd/tsdb reads the formats) and web
// (the HTTP handler). Under internal/: index (postings and the block
// index), chunkseg (the chunk segment files of a block), wlog (the WAL's
// segments) and record (its records), tombstones (deletion intervals and
// their file), encoding (Decbuf, the one decoder those formats share),
// corrupt (the one corruption error), metricnames (the metrics' names) and
// chunktest (test sample generators), lockorder (the lock ranks and the
// mutexes that check them under the invariants tag).
//
// Errors: the exported sentinels are in errors.go. Every error that reports
// damaged data on disk, whatever the file, satisfies errors.Is(err,
// ErrCorrupt), and errors.As(err, new(*CorruptionError)) gives the file and
// offset of the damage; a damaged block's errors also wrap ErrCorruptBlock.
package tsdb
