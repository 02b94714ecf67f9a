// Package ship uploads the blocks of an isotsdb data directory to object
// storage in the layout Thanos and Mimir read: one directory per block,
// named by its ULID, holding chunks/, index, tombstones (when present) and
// a meta.json extended with a "thanos" section (external labels, source,
// resolution and the list of the block's files with their sizes).
//
// A Shipper is the moving part. Its Sync looks at the data directory once
// and uploads every block that is complete and not shipped yet; Run calls
// Sync on an interval until its context ends. The blocks shipped are
// recorded in thanos.shipper.json in the data directory, in the format of
// Thanos's sidecar, so that a restart (of either) does not upload again.
//
// Invariants a reader of the bucket can rely on:
//
//   - meta.json is uploaded last, after every other file of the block has
//     been uploaded; a block without meta.json in the bucket is one being
//     uploaded (or abandoned) and readers treat it as absent.
//   - A block is recorded as shipped only after its meta.json is uploaded,
//     or when its meta.json is found in the bucket already.
//   - The local block is never modified.
//
// Retention: pass Shipper.KeepBlock as tsdb.Options.KeepBlock and the DB
// keeps every block not shipped yet. With compaction on (MaxBlockDuration
// greater than MinBlockDuration) level-1 blocks can be merged into larger
// blocks before they are shipped; those are then lost to the bucket unless
// Options.UploadCompacted is set, as with Thanos's sidecar and its
// --shipper.upload-compacted flag. Thanos and Mimir compact on their own,
// so the usual set-up turns local compaction off.
package ship
