package tsdb

import (
	"errors"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/wlog"
)

// Errors returned by Appender.Append for a sample that is rejected. A
// rejected sample affects nothing else: the other samples of the same
// Appender can still be committed.
var (
	// ErrOutOfOrderSample: the sample is older than the series' newest sample.
	ErrOutOfOrderSample = errors.New("tsdb: out of order sample")
	// ErrDuplicateSampleForTimestamp: the series already has a sample at this
	// timestamp with a different value (compared bit by bit, so NaN payloads
	// and the staleness marker count as different values). Appending the same
	// value bits again is a no-op, not an error.
	ErrDuplicateSampleForTimestamp = errors.New("tsdb: duplicate sample for timestamp")
	// ErrTooOldSample: out-of-order samples are accepted
	// (Options.OutOfOrderTimeWindow), but this one is older than the
	// head's newest sample minus the window.
	ErrTooOldSample = errors.New("tsdb: too old sample")
	// ErrOutOfBounds: the sample is older than the head's appendable window,
	// or its timestamp lies outside [MinSampleTime, MaxSampleTime].
	ErrOutOfBounds = errors.New("tsdb: out of bounds")
	// ErrTooFarInFuture: the sample is later than the wall clock plus
	// Options.MaxFutureSkew (only with that option set).
	ErrTooFarInFuture = errors.New("tsdb: sample too far in the future")
	// ErrInvalidSample: the label set is empty, has an empty or duplicate
	// label name, or a name or value that is not valid UTF-8.
	ErrInvalidSample = errors.New("tsdb: invalid sample")
	// ErrInvalidMetadata: UpdateMetadata got a metric type that is not
	// one of the MetricType constants, or a unit or help text that is not
	// valid UTF-8.
	ErrInvalidMetadata = errors.New("tsdb: invalid metadata")
	// ErrUnknownSeries: UpdateMetadata named a series the head does not
	// hold (neither by ref nor by labels). Append a sample of the series
	// first, in the same Appender or an earlier one: as in Prometheus,
	// metadata alone does not create a series.
	ErrUnknownSeries = errors.New("tsdb: unknown series")
)

// Errors returned by Appender.AppendExemplar for an exemplar that is
// rejected. A rejected exemplar affects nothing else in the transaction.
var (
	// ErrExemplarsDisabled: exemplars are off (Options.MaxExemplars, or
	// DB.SetMaxExemplars, is 0).
	ErrExemplarsDisabled = errors.New("tsdb: exemplar storage is disabled (MaxExemplars is 0)")
	// ErrOutOfOrderExemplar: the exemplar is older than its series' newest
	// (at the same time: it has a lower value, or an equal value and
	// labels that hash lower; see exemplar.go).
	ErrOutOfOrderExemplar = errors.New("tsdb: out of order exemplar")
	// ErrDuplicateExemplar: the exemplar equals its series' newest
	// (Exemplar.Equals). Nothing is lost by ignoring it; Prometheus's
	// scrape loop does.
	ErrDuplicateExemplar = errors.New("tsdb: duplicate exemplar")
	// ErrExemplarLabelLength: the exemplar's label names and values
	// together have more than ExemplarMaxLabelSetLength runes.
	ErrExemplarLabelLength = errors.New("tsdb: exemplar label set too long")
	// ErrInvalidExemplar: the exemplar's labels have a duplicate or empty
	// name or are not valid UTF-8, or its time lies outside
	// [MinSampleTime, MaxSampleTime] (then the error also wraps
	// ErrOutOfBounds).
	ErrInvalidExemplar = errors.New("tsdb: invalid exemplar")
	// ErrExemplarSeriesNotFound: the head has no series of that ref or
	// labels. Append a sample of the series first, in the same or an
	// earlier transaction.
	ErrExemplarSeriesNotFound = errors.New("tsdb: exemplar for a series not in the head")
)

// Errors about the state of the database or of an Appender or Querier.
var (
	// ErrClosed: the DB (or the Querier) was closed. An Appender created
	// before DB.Close returns it from Append and Commit after Close (a
	// Commit concurrent with Close either completes before Close closes the
	// WAL, or returns ErrClosed); a Commit that returns it applied and
	// logged nothing.
	ErrClosed = errors.New("tsdb: closed")
	// ErrAppenderClosed: Append, Commit or Rollback was called on an Appender
	// that was already committed or rolled back.
	ErrAppenderClosed = errors.New("tsdb: appender already committed or rolled back")
	// ErrInvalidTimeRange: a time range whose start is after its end.
	ErrInvalidTimeRange = errors.New("tsdb: invalid time range")
	// ErrWAL: writing the write-ahead log failed (the error also wraps the
	// cause, e.g. syscall.ENOSPC). The Commit that gets it made nothing
	// visible, and every later Commit fails the same way: close the DB and
	// open it again, which replays and repairs the log.
	ErrWAL = errors.New("tsdb: write-ahead log failed; reopen the DB")
	// ErrWBL: writing the WBL, the second log that holds copies of late
	// samples for Prometheus (see wal.go), failed (the error also wraps
	// the cause). Unlike ErrWAL, the Commit that gets it first did apply
	// its samples and logged them in the WAL, which replay restores: only
	// the WBL lacks them, so Prometheus opening the directory would miss
	// those late samples. Every later Commit fails with it before logging
	// or applying anything: close the DB and open it again.
	ErrWBL = errors.New("tsdb: out-of-order log (WBL) failed; reopen the DB")
	// ErrWALIncomplete: Open found WAL segments missing that no checkpoint
	// covers (deleted or lost files), so replaying what is there would
	// silently drop the series and samples they held. The error names the
	// WAL directory and the missing segments. Options.AcceptIncompleteWAL
	// opens such a WAL anyway when the missing part precedes the first
	// segment present.
	ErrWALIncomplete = errors.New("tsdb: write-ahead log is incomplete")
	// ErrUnsupportedCompression: Open or OpenReadOnly found WAL records
	// compressed in a way isotsdb cannot decode (zstd, which Prometheus can
	// write). The records are valid data, not damage: the WAL is neither
	// repaired nor read past them.
	ErrUnsupportedCompression = wlog.ErrUnsupportedCompression
)

// Errors of opening a directory read-only and of the requests a DB refuses
// to carry out as asked.
var (
	// ErrNotTSDB: OpenReadOnly was given a directory that holds no database
	// (neither a WAL nor a block).
	ErrNotTSDB = errors.New("tsdb: not a TSDB data directory")
	// ErrReadOnly: a write (an Appender's Append or Commit, Compact, Delete,
	// CleanTombstones) to a DB opened with OpenReadOnly.
	ErrReadOnly = errors.New("tsdb: read-only DB")
	// ErrInvalidDelete: a Delete without matchers (which would delete
	// everything).
	ErrInvalidDelete = errors.New("tsdb: delete needs at least one matcher")
	// ErrInvalidSnapshotDir: Snapshot was given a directory that is not
	// empty, or lies inside the data directory (other than below its
	// snapshots/ directory).
	ErrInvalidSnapshotDir = errors.New("tsdb: invalid snapshot directory")
)

// ErrInvalidOption: Open was given an Options field with a value it cannot
// use (the error names the field).
var ErrInvalidOption = errors.New("tsdb: invalid option")

// Errors of damaged data on disk.
var (
	// ErrCorrupt is matched, through errors.Is, by every error that reports
	// damaged data on disk, whatever the file: a block's index, chunk
	// segment files, tombstones or meta.json, WAL segments and records, the
	// bytes of a chunk. errors.As(err, new(*CorruptionError)) then gives
	// where the damage is (file and offset) when it is known.
	ErrCorrupt = corrupt.ErrCorrupt
	// ErrCorruptBlock is wrapped by the errors of blocks whose contents are
	// damaged (a file missing or of the wrong kind, unparsable meta.json,
	// bad magic, checksum or format) so that they fail to open or verify,
	// and by the errors of reading an open block's data (a query, a
	// compaction) that find the data damaged; the error names the block
	// directory. Such an error satisfies errors.Is(err, ErrCorrupt) too.
	// Open skips such a block. A block that cannot be opened because the
	// filesystem failed (an I/O error reading or mapping one of its files)
	// is not corrupt: that error wraps neither ErrCorruptBlock nor
	// ErrCorrupt, and Open fails with it.
	ErrCorruptBlock = errors.New("tsdb: corrupt block")
)

// CorruptionError reports damaged data: File is the path of the damaged
// file ("" when the bytes were not read from a file, as for a chunk's
// bytes), Offset the byte offset where the damage starts in it (-1 when
// not known), Err what is wrong. errors.Is(err, ErrCorrupt) holds for
// every *CorruptionError.
type CorruptionError = corrupt.Error
