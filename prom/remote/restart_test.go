package remote

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSenderRestart stops the sender mid-stream and starts a new one over
// the same directory: it resumes from the persisted position (nothing is
// sent twice after a clean Stop) and loses nothing.
func TestSenderRestart(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(rv.url(t))

	s1, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s1.Start())
	want := ingest(t, db, 20, 0, 100*15000, 15000, s1.Notify)
	require.NoError(t, s1.Stop())
	_, sentBefore := rv.deliveries()
	require.Positive(t, sentBefore)

	// Written while no sender runs.
	for k, v := range ingest(t, db, 20, 101*15000, 150*15000, 15000, nil) {
		want[k] = v
	}
	s2, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.Equal(t, s1.Position(), s2.start, "resumes from the persisted position")
	require.NoError(t, s2.Start())
	for k, v := range ingest(t, db, 20, 151*15000, 200*15000, 15000, s2.Notify) {
		want[k] = v
	}
	waitFor(t, 20*time.Second, "all samples", func() bool { return received(want, rv.counts(t)) == 0 })
	require.NoError(t, s2.Stop())
	require.NoError(t, db.Close())
	seen, total := rv.deliveries()
	require.Equal(t, want, seen, "every sample exactly once across a clean restart")
	require.Equal(t, len(want), total)
}

// TestSenderRestartAbandoned stops a sender whose receiver fails, so that
// the flush deadline passes with samples unacknowledged: the next sender
// sends them again, and only a bounded window is sent twice.
func TestSenderRestartAbandoned(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	cfg := testConfig(rv.url(t))
	cfg.FlushDeadline = 200 * time.Millisecond

	s1, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s1.Start())
	want := ingest(t, db, 20, 0, 100*15000, 15000, s1.Notify)
	waitFor(t, 20*time.Second, "first samples", func() bool { _, n := rv.deliveries(); return n > 0 })
	var failing atomic.Bool
	failing.Store(true)
	rv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	for k, v := range ingest(t, db, 20, 101*15000, 200*15000, 15000, s1.Notify) {
		want[k] = v
	}
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, s1.Stop())
	p1 := s1.Position()
	failing.Store(false)

	s2, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.Equal(t, p1, s2.start)
	require.NoError(t, s2.Start())
	waitFor(t, 20*time.Second, "all samples", func() bool { return received(want, rv.counts(t)) == 0 })
	require.NoError(t, s2.Stop())
	require.NoError(t, db.Close())
	seen, total := rv.deliveries()
	for k := range want {
		require.GreaterOrEqual(t, seen[k], 1, k)
	}
	// Duplicates come only from batches in flight when s1 stopped: at most
	// what its queues and one batch per shard held.
	dups := total - len(want)
	t.Logf("samples delivered %d, distinct %d, duplicates %d", total, len(want), dups)
	require.LessOrEqual(t, dups, cfg.MaxShards*(cfg.Capacity+cfg.MaxSamplesPerSend))
}
