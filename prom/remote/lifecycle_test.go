package remote

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSenderLifecycle attacks the Sender's lifecycle: Stop before Start,
// twice, racing Notify and KeepWALFrom; Start after Stop; the DB closed
// under a running sender. Nothing panics or hangs, and a stopped Sender
// refuses to start again.
func TestSenderLifecycle(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	db := openIso(t, dir, isoOptions())
	want := ingest(t, db, 5, 0, 20*15000, 15000, func() {})

	idle, err := New(dir, testConfig(rv.url(t)), nil, nil)
	require.NoError(t, err)
	require.NoError(t, idle.Stop(), "Stop before Start")
	require.True(t, errors.Is(idle.Start(), ErrStopped), "Start after Stop")

	s, err := New(dir, testConfig(rv.url(t)), nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	require.True(t, errors.Is(s.Start(), ErrStopped), "a second Start")
	waitFor(t, 30*time.Second, "all samples", func() bool { return received(want, rv.counts(t)) == 0 })
	require.NoError(t, db.Close(), "the DB goes first")

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				s.Notify()
				_ = s.KeepWALFrom()
				_ = s.Position()
			}
		})
	}
	wg.Go(func() { require.NoError(t, s.Stop()) })
	wg.Wait()
	require.NoError(t, s.Stop(), "a second Stop")
	s.Notify()
	require.GreaterOrEqual(t, s.KeepWALFrom(), 0)
}
