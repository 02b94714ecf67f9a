package ship

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Options configures a Shipper. The zero value is valid: level-1 blocks
// only, no external labels, source "isotsdb", default backoff, no metrics
// and no logging.
type Options struct {
	// ExternalLabels go into the thanos section of every uploaded
	// meta.json; Thanos and Mimir tell the blocks of different sources
	// apart by them.
	ExternalLabels map[string]string
	// Source is written as thanos.source ("sidecar", "isotsdb", ...).
	// Empty means DefaultSource.
	Source string
	// UploadCompacted makes the shipper upload blocks of any compaction
	// level, not only the level-1 blocks cut from the head (Thanos's
	// --shipper.upload-compacted).
	UploadCompacted bool
	// AllowDeleteUnshipped makes KeepBlock always return false, so that
	// retention may delete blocks that were never shipped.
	AllowDeleteUnshipped bool
	// Backoff bounds the retries of one file's upload.
	Backoff Backoff
	// Progress, if set, is called after each file is uploaded with the
	// file's size in bytes, from the goroutine running Sync.
	Progress func(bytes int64)
	// Logger receives one line per block shipped or failed; nil discards.
	Logger *slog.Logger
	// Registerer receives the shipper's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultSource is the thanos.source written when Options.Source is empty.
const DefaultSource = "isotsdb"

// Backoff is an exponential backoff: the first retry waits Min, each
// next one twice as long, at most Max, and the upload gives up after
// Attempts tries in all. Zero fields take the defaults below.
type Backoff struct {
	Min      time.Duration
	Max      time.Duration
	Attempts int
}

// Defaults for Backoff: five tries over about 3 s ride out a restarting
// object store or a dropped connection, while a block whose store is down
// for longer fails its Sync soon and is tried again at the next one
// instead of holding up the others.
const (
	defaultBackoffMin      = 200 * time.Millisecond
	defaultBackoffMax      = 5 * time.Second
	defaultBackoffAttempts = 5
)

func (b Backoff) withDefaults() Backoff {
	if b.Min <= 0 {
		b.Min = defaultBackoffMin
	}
	if b.Max < b.Min {
		b.Max = max(defaultBackoffMax, b.Min)
	}
	if b.Attempts <= 0 {
		b.Attempts = defaultBackoffAttempts
	}
	return b
}

// delay is the wait before retry number n (1 for the first retry).
func (b Backoff) delay(n int) time.Duration {
	d := b.Min
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}
