package ship

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/thanos-io/objstore"

	"github.com/isotsdb/tsdb/ship/shiptest"
)

// weedServer is shiptest's SeaweedFS server, with the bucket of this
// package's client factory.
type weedServer struct {
	*shiptest.Weed
	t testing.TB
}

// startWeed starts a server with the bucket "blocks" (shiptest.Bucket)
// and stops it at the end of the test.
func startWeed(t testing.TB) *weedServer {
	t.Helper()
	return &weedServer{Weed: shiptest.StartWeed(t), t: t}
}

// bucket opens the server's bucket through objstore's client factory.
func (w *weedServer) bucket(name string) objstore.Bucket {
	w.t.Helper()
	bkt, err := NewBucket(w.Config(name), nil)
	require.NoError(w.t, err)
	w.t.Cleanup(func() { bkt.Close() })
	return bkt
}

// waitUp waits until the bucket answers a listing, after a restart.
func waitUp(t testing.TB, bkt objstore.Bucket) {
	t.Helper()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return bkt.Iter(ctx, "", func(string) error { return nil }) == nil
	}, 30*time.Second, 200*time.Millisecond)
}
