// Package interop holds the tests that check isotsdb and Prometheus's TSDB
// can read each other's data directories. It has no API: everything lives
// in its _test.go files, which `go test ./interop/` runs.
//
// The tests, each a subtest of TestInterop:
//
//   - prometheus-reads-isotsdb: isotsdb writes a data dir (blocks cut every
//     30 minutes, leveled compaction, a WAL with a checkpoint and data not
//     yet in blocks, optionally tombstones). Prometheus's OpenDBReadOnly
//     must accept every block (the walk `promtool tsdb analyze` does, plus
//     reading every chunk) and its querier must return, sample by sample
//     and bit by bit, what isotsdb's own querier returns and what was
//     written.
//   - isotsdb-reads-prometheus: Prometheus writes blocks (BlockWriter and
//     its own head compaction) and a WAL holding native histograms,
//     exemplars and metadata next to float samples. isotsdb must return the
//     float data exactly as Prometheus's querier does, the last metadata of
//     each series as written, and count the records it skips (exemplars)
//     in tsdb_wal_records_skipped_total. A zstd-compressed WAL,
//     which isotsdb cannot decode, must be refused with no existing file
//     changed, and Prometheus must still read all of it afterwards.
//   - snapshot: a snapshot taken by isotsdb, with and without the head,
//     opens in Prometheus with the data it should hold.
//
// Head chunk files (chunks_head/) are checked apart, in
// headchunks_test.go, through files checked in under the root module's
// internal/headchunks/testdata (that package cannot be imported from
// here): Prometheus's ChunkDiskMapper must iterate and read every record
// isotsdb's Writer wrote there (testdata/golden), and the files it writes
// itself (testdata/prom, rewritten with -update-headchunks) must match the
// checked-in ones, which isotsdb's Open reads in the root module's tests.
//
// Every comparison is against a model of what was written, so two readers
// that agree on a wrong answer still fail. TestInterop logs the matrix of
// what passed.
package interop
