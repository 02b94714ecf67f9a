package promstorage

import (
	"fmt"
	"testing"

	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

// TestTooOldSampleMapping: isotsdb's too-old error (a sample older than
// the out-of-order window) also matches Prometheus's, and only that one.
// It holds without the head's support of late samples, which is what
// returns the error (see late_test.go).
func TestTooOldSampleMapping(t *testing.T) {
	err := mapAppendError(fmt.Errorf("series {a=\"b\"}: %w", tsdb.ErrTooOldSample))
	require.ErrorIs(t, err, tsdb.ErrTooOldSample)
	require.ErrorIs(t, err, storage.ErrTooOldSample)
	require.NotErrorIs(t, err, storage.ErrOutOfOrderSample)
	require.NotErrorIs(t, err, storage.ErrOutOfBounds)
}
