package tsdb

import (
	"time"

	"github.com/isotsdb/tsdb/vfs"
)

// Options configure a DB. The zero value of a field means its default, as
// set by DefaultOptions, unless its comment says otherwise.
type Options struct {
	// FS is the filesystem through which the DB does all of its file I/O.
	// Default: the operating system's (vfs.OS()).
	FS vfs.FS

	// RetentionDuration is how long data is kept. Default 15 days.
	RetentionDuration time.Duration
	// MaxBytes caps the bytes of blocks on disk; 0 means no cap.
	MaxBytes int64
	// KeepBlock, if set, is asked about every block retention (time or
	// MaxBytes) would delete; a block for which it returns true stays,
	// and still counts against MaxBytes. A shipper uses it to keep the
	// blocks it has not uploaded yet. It is called with compaction's lock
	// held, so it must return quickly and must not call the DB. It does
	// not stop compaction from replacing blocks by the block it merges
	// them into (turn compaction off, MaxBlockDuration equal to
	// MinBlockDuration, to keep every block cut from the head).
	KeepBlock func(BlockMeta) bool
	// MinBlockDuration is the time range of the blocks cut from the head,
	// and the unit in which the head bounds its appendable window. Default 2h.
	MinBlockDuration time.Duration
	// MaxBlockDuration is the largest range compaction produces. Default:
	// 10% of RetentionDuration, at most 31 days.
	MaxBlockDuration time.Duration

	// MaxFutureSkew, if positive, makes Append reject samples later than
	// the wall clock plus this with ErrTooFarInFuture (counted in
	// tsdb_head_samples_rejected_total{reason="too_far_in_future"}). Off
	// (0) by default, so that backfills and clients with their own notion
	// of time keep working. Set it (to a few minutes or an hour, well
	// below MinBlockDuration/2) when the DB ingests current data from
	// clients it does not control: the head's appendable window follows
	// its newest sample, so a single sample far in the future (e.g.
	// microseconds sent as milliseconds) would otherwise make every
	// current sample ErrOutOfBounds until the clock reaches it. Mimir calls
	// this the creation grace period.
	MaxFutureSkew time.Duration

	// OutOfOrderTimeWindow lets the head accept late samples: a sample
	// older than its series' newest (which would be ErrOutOfOrderSample)
	// is accepted if it is no older than the head's newest sample minus
	// this window. Late samples are isolated like any other: a query sees
	// a commit's in-order and late samples together or not at all. Older
	// samples get ErrTooOldSample naming the window. 0 (the default) turns
	// it off: late samples are ErrOutOfOrderSample, as before. Negative
	// values are 0. DB.SetOutOfOrderTimeWindow changes it at run time.
	//
	// Late samples must also lie in the head's appendable range (not
	// before the data already cut into blocks, nor more than half a block
	// range before the head's newest sample); older ones get
	// ErrOutOfBounds. So a window up to MinBlockDuration/2 works fully.
	//
	// With the window on, the DB also keeps a WBL (wbl/ next to wal/):
	// copies of the late samples in Prometheus's out-of-order log, so that
	// Prometheus can open the directory (see wal.go). Late samples written
	// with the window on are restored at the next Open whatever the window
	// is then.
	OutOfOrderTimeWindow time.Duration

	// MaxExemplars is the number of exemplars the head keeps, the newest
	// of all series (exemplar.go). 0, the default, turns exemplars off:
	// Appender.AppendExemplar then returns ErrExemplarsDisabled, and the
	// exemplars of a WAL (Prometheus's) are skipped at Open. Negative
	// values are 0. Prometheus's --storage.tsdb.max-exemplars defaults to
	// 100,000; each exemplar costs some 64 bytes plus its labels (the ring
	// grows with use up to this bound). DB.SetMaxExemplars changes it at
	// run time.
	MaxExemplars int64

	// WALSegmentSize is the size of WAL segment files. Default 128 MiB.
	WALSegmentSize int
	// WALCompression compresses WAL records with snappy.
	WALCompression bool
	// WALSyncEveryCommit makes Commit fsync the WAL before it returns, so
	// that a machine crash loses no acknowledged commit. Off by default (as
	// in Prometheus): segments are fsynced when completed and on Close. See
	// wal.go for what a crash can lose under each policy.
	WALSyncEveryCommit bool
	// SnapshotOnShutdown makes Close write a snapshot of the head
	// (chunk_snapshot.go: Prometheus's memory snapshot, which its
	// --enable-feature=memory-snapshot-on-shutdown reads) once the WAL is
	// closed, and Open restore the head from it instead of replaying the
	// WAL if the WAL still ends where the snapshot says. Open removes the
	// snapshot whether it used it or not, and falls back to the WAL replay
	// for any snapshot it cannot use. Off by default, as in Prometheus.
	SnapshotOnShutdown bool
	// KeepWALFrom, if set, returns the first WAL segment that a reader of
	// the WAL (a remote-write sender tailing it) still needs: checkpoints
	// then remove no segment from that one on, and the WAL grows until the
	// reader moves on. The reader bounds that growth itself, by moving on
	// past what it gives up. It is called by head compaction with
	// compaction's lock held, so it must return quickly and must not call
	// the DB.
	KeepWALFrom func() int
	// NoWAL runs the DB without a write-ahead log: commits are not durable
	// and the head starts empty at every Open.
	NoWAL bool
	// AcceptIncompleteWAL lets Open (and OpenReadOnly) go on when the
	// oldest part of the WAL is missing: the first segment is not the one
	// after the last checkpoint (segments numbered from N > 0 with no
	// checkpoint, or a checkpoint.M with M < N-1), or a checkpoint exists
	// and no segment after it. The data of the missing segments is lost;
	// Open logs a warning naming them, replays what is there and removes
	// the segments the checkpoint already covers so that the log is
	// sequential again. Without it such a WAL fails Open with an error
	// wrapping ErrWALIncomplete. A gap between two segments after the
	// checkpoint (e.g. 3, 4, 6) is refused even with this option: replay
	// cannot continue past it (the records after it refer to series
	// defined in the lost segment); to accept that loss, move away the
	// segments before the gap and open with this option.
	AcceptIncompleteWAL bool

	// IsolationDisabled turns write isolation off: queries then see
	// whatever samples were applied when they read a series, including part
	// of a commit in flight. For write-only users and for measuring the cost
	// of isolation.
	IsolationDisabled bool

	// NoLockfile skips the lock file that stops two processes from opening
	// the same directory.
	NoLockfile bool

	// SamplesPerChunk is the number of samples after which the head starts
	// a new chunk. Default 120.
	SamplesPerChunk int

	// StripeSize is the number of stripes (a power of two) of the head's
	// series-by-labels map; more stripes mean less lock contention when
	// series are created or looked up by labels, and more memory: each
	// occupied stripe holds a small map of its own, so stripes far
	// outnumbering series waste memory. Default 4096. (Lookups by ref, the
	// common case, take no lock at all.)
	StripeSize int

	// TrackLeakedQueriers records where each Querier is created and logs
	// one warning naming that place when a Querier becomes unreachable
	// without Close. It costs a stack capture per Querier.
	TrackLeakedQueriers bool

	// MetricsNamespace chooses the names of the DB's metrics: "tsdb" (the
	// default; "" means it) registers them as tsdb_...; "prometheus"
	// registers each metric whose meaning, type, unit and labels are those
	// of a metric of Prometheus's TSDB under Prometheus's name (e.g.
	// prometheus_tsdb_head_series), so that dashboards and alerts written
	// for Prometheus, such as its monitoring mixin's, work unchanged; the
	// other metrics are then named prometheus_tsdb_... after their default
	// names. The README's "Metrics" section lists both names of every
	// metric. Any other value makes Open fail with an error wrapping
	// ErrInvalidOption. (For a prefix of your own, wrap the Registerer
	// with prometheus.WrapRegistererWithPrefix.)
	MetricsNamespace string

	// TrackLeakedAppenders records where each Appender is created and logs
	// one warning naming that place when an Appender with buffered samples
	// becomes unreachable without Commit or Rollback (its samples are then
	// discarded, as by Rollback). It costs a stack capture per Appender.
	TrackLeakedAppenders bool
}

// DefaultOptions returns the options used when Open is given nil.
func DefaultOptions() *Options {
	return &Options{
		RetentionDuration: 15 * 24 * time.Hour,
		MinBlockDuration:  2 * time.Hour,
		WALSegmentSize:    128 << 20,
		SamplesPerChunk:   120,
		StripeSize:        1 << 12,
	}
}

// withDefaults returns a copy of o with every zero field set to its default.
func (o *Options) withDefaults() Options {
	d := DefaultOptions()
	if o == nil {
		o = d
	}
	r := *o
	if r.FS == nil {
		r.FS = vfs.OS()
	}
	if r.RetentionDuration <= 0 {
		r.RetentionDuration = d.RetentionDuration
	}
	if r.MinBlockDuration <= 0 {
		r.MinBlockDuration = d.MinBlockDuration
	}
	if r.MaxBlockDuration <= 0 {
		r.MaxBlockDuration = min(r.RetentionDuration/10, 31*24*time.Hour)
	}
	r.MaxBlockDuration = max(r.MaxBlockDuration, r.MinBlockDuration)
	if r.WALSegmentSize <= 0 {
		r.WALSegmentSize = d.WALSegmentSize
	}
	r.MaxFutureSkew = max(r.MaxFutureSkew, 0)
	r.OutOfOrderTimeWindow = max(r.OutOfOrderTimeWindow, 0)
	r.MaxExemplars = max(r.MaxExemplars, 0)
	if r.SamplesPerChunk <= 0 {
		r.SamplesPerChunk = d.SamplesPerChunk
	}
	if r.StripeSize <= 0 || r.StripeSize&(r.StripeSize-1) != 0 {
		r.StripeSize = d.StripeSize
	}
	return r
}
