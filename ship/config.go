package ship

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/go-kit/log"
	"github.com/thanos-io/objstore"
	"github.com/thanos-io/objstore/client"
)

// NewBucket returns the bucket that an objstore configuration describes,
// in the YAML that Thanos and Mimir's tools read:
//
//	type: S3          # or GCS, AZURE, FILESYSTEM, SWIFT, COS, ...
//	config:
//	  bucket: blocks
//	  endpoint: 127.0.0.1:8333
//	  insecure: true
//	prefix: ""        # optional
//
// A document that does not parse, or names an unknown type or an invalid
// provider config, returns an error wrapping ErrBadConfig. logger may be
// nil. The configuration can hold secrets: errors do not quote it.
func NewBucket(config []byte, logger *slog.Logger) (objstore.Bucket, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	bkt, err := client.NewBucket(kitLogger{logger}, config, "isotsdb-ship", nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	return bkt, nil
}

// kitLogger passes objstore's go-kit log lines to slog, at debug level:
// the providers log their set-up, which a shipper need not repeat.
type kitLogger struct{ l *slog.Logger }

var _ log.Logger = kitLogger{}

func (k kitLogger) Log(keyvals ...any) error {
	k.l.Log(context.Background(), slog.LevelDebug, "objstore", keyvals...)
	return nil
}
