package remote

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestCommitGroupWhole writes a WAL by hand: a commit group whose last
// record comes later, in the next segment. Nothing of the group is sent
// before its last record is in the WAL; then all of it is.
func TestCommitGroupWhole(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	w, err := wlog.Open(nil, nil, vfs.OS(), filepath.Join(dir, "wal"), wlog.Options{SegmentSize: 32 << 10})
	require.NoError(t, err)
	var enc record.Encoder
	require.NoError(t, w.Log(enc.Series([]record.RefSeries{
		{Ref: 1, Labels: labels.FromStrings("__name__", "a")},
		{Ref: 2, Labels: labels.FromStrings("__name__", "b")},
	}, nil)))
	require.NoError(t, w.Log(enc.Samples([]record.RefSample{{Ref: 1, T: 1000, V: 1}}, nil))) // a whole commit
	require.NoError(t, w.Log(enc.CommitGroup(2, nil), enc.Samples([]record.RefSample{{Ref: 1, T: 2000, V: 2}}, nil)))

	cfg := testConfig(rv.url(t))
	s, err := New(dir, cfg, nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	waitFor(t, 10*time.Second, "the whole commit", func() bool { _, n := rv.deliveries(); return n == 1 })
	time.Sleep(10 * cfg.PollInterval)
	_, n := rv.deliveries()
	require.Equal(t, 1, n, "nothing of the open group is sent")

	_, err = w.NextSegment()
	require.NoError(t, err)
	time.Sleep(10 * cfg.PollInterval)
	_, n = rv.deliveries()
	require.Equal(t, 1, n, "nothing of the open group is sent across segments")

	require.NoError(t, w.Log(enc.Samples([]record.RefSample{{Ref: 2, T: 2000, V: 3}}, nil)))
	s.Notify()
	waitFor(t, 10*time.Second, "the group", func() bool { _, n := rv.deliveries(); return n == 3 })
	require.NoError(t, s.Stop())
	require.NoError(t, w.Close())
	seen, _ := rv.deliveries()
	require.Equal(t, map[string]int{`{__name__="a"}@1000=1`: 1, `{__name__="a"}@2000=2`: 1, `{__name__="b"}@2000=3`: 1}, seen)
	require.Equal(t, wlog.Position{Segment: 1, Offset: s.Position().Offset}, s.Position())
}
