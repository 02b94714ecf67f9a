package wlog

import (
	"fmt"

	"github.com/isotsdb/tsdb/internal/metricnames"
)

// CompressionType names how records are compressed when written. Reading
// handles every supported type regardless of this setting.
type CompressionType string

// Supported compression types.
const (
	// CompressionNone writes records as they are. The empty string means
	// the same.
	CompressionNone CompressionType = "none"
	// CompressionSnappy compresses each record with snappy (block format),
	// keeping the original when compression would not make it smaller.
	CompressionSnappy CompressionType = "snappy"
)

// compressionZstd is what Prometheus calls its zstd setting; it is named
// only to reject it with a clear error.
const compressionZstd CompressionType = "zstd"

// SyncPolicy says when a WL makes its writes durable with fsync.
type SyncPolicy int

const (
	// SyncOnSegmentCut (the default) fsyncs a segment when it is completed
	// (in the background, so that Log is not held up) and the active
	// segment on Sync and Close, as Prometheus does. A crash may lose the
	// records logged since the last of these.
	SyncOnSegmentCut SyncPolicy = iota
	// SyncEveryLog fsyncs before every Log call returns, so a crash loses
	// nothing that Log acknowledged. A completed segment is then fsynced
	// in the Log call that completes it.
	SyncEveryLog
)

// String returns the policy's name.
func (p SyncPolicy) String() string {
	switch p {
	case SyncOnSegmentCut:
		return "sync-on-segment-cut"
	case SyncEveryLog:
		return "sync-every-log"
	default:
		return fmt.Sprintf("SyncPolicy(%d)", int(p))
	}
}

// Options configure a WL. The zero value is valid: 128 MiB segments, no
// compression, SyncOnSegmentCut.
type Options struct {
	// SegmentSize is the size at which a new segment is started. It must
	// be a positive multiple of PageSize; 0 means DefaultSegmentSize.
	SegmentSize int
	// Compression is how records are written. "" means CompressionNone.
	Compression CompressionType
	// Sync is the fsync policy.
	Sync SyncPolicy
	// MetricNames names the WL's metrics; the zero value gives the
	// default names (MetricsPrefix + fsync_duration_seconds, ...).
	MetricNames metricnames.Namer
	// MetricsPrefix starts the default name of each of the WL's metrics;
	// "" means "tsdb_wal_". A DB's second log (its WBL) uses "tsdb_wbl_".
	MetricsPrefix string
	// MetricsHelp names the log in the metrics' help texts; "" means
	// "write-ahead log".
	MetricsHelp string
}

// normalize returns o with defaults filled in, or an error for a value that
// cannot be used.
func (o Options) normalize() (Options, error) {
	if o.MetricsPrefix == "" {
		o.MetricsPrefix = "tsdb_wal_"
	}
	if o.MetricsHelp == "" {
		o.MetricsHelp = "write-ahead log"
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.SegmentSize < PageSize || o.SegmentSize%PageSize != 0 {
		return o, fmt.Errorf("%w: segment size %d is not a positive multiple of %d", ErrInvalidOptions, o.SegmentSize, PageSize)
	}
	switch o.Compression {
	case "", CompressionNone:
		o.Compression = CompressionNone
	case CompressionSnappy:
	case compressionZstd:
		return o, fmt.Errorf("%w: %q cannot be written by this package", ErrUnsupportedCompression, o.Compression)
	default:
		return o, fmt.Errorf("%w: unknown compression %q", ErrInvalidOptions, o.Compression)
	}
	switch o.Sync {
	case SyncOnSegmentCut, SyncEveryLog:
	default:
		return o, fmt.Errorf("%w: unknown sync policy %d", ErrInvalidOptions, int(o.Sync))
	}
	return o, nil
}
