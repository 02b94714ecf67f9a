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
// Layout of the package: db.go (the DB), head*.go (the in-memory head:
// series, appends, reads), isolation.go (write IDs, read snapshots, the low
// watermark and the per-series write-ID rings), querier.go (the Querier).
// Subpackages hold the storage layers: labels, chunks (sample encoding),
// index (postings), vfs (the filesystem interface all I/O goes through).
package tsdb
