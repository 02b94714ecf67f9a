package remote

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// stall makes the receiver answer 503 while the returned flag is set.
func stall(rv *receiver) *atomic.Bool {
	var down atomic.Bool
	down.Store(true)
	rv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	return &down
}

func segments(t *testing.T, dir string) []int {
	t.Helper()
	segs, err := wlog.SegmentIndexes(vfs.OS(), filepath.Join(dir, "wal"))
	require.NoError(t, err)
	return segs
}

const twoHours = 2 * 3600 * 1000

// stalledSender starts a sender over a new DB with 32 KiB WAL segments,
// whose receiver answers 503 until the returned flag is cleared. cfg
// adjusts the sender's configuration; keep, if not nil, returns what to
// plug into the DB's options as KeepWALFrom (keepSender: the sender's own).
func stalledSender(t *testing.T, cfg func(*Config), keep func(*Sender) func() int) (*receiver, *atomic.Bool, *Sender, *tsdb.DB, string) {
	t.Helper()
	rv := newReceiver(t)
	down := stall(rv)
	dir := t.TempDir()
	c := testConfig(rv.url(t))
	if cfg != nil {
		cfg(&c)
	}
	s, err := New(dir, c, nil, nil)
	require.NoError(t, err)
	o := isoOptions()
	o.WALSegmentSize = 32 << 10
	if keep != nil {
		o.KeepWALFrom = keep(s)
	}
	db := openIso(t, dir, o)
	require.NoError(t, s.Start())
	return rv, down, s, db, dir
}

// keepSender plugs the sender's KeepWALFrom into the DB as it is.
func keepSender(s *Sender) func() int { return s.KeepWALFrom }

// TestKeepWALFrom plugs the sender into Options.KeepWALFrom: while the
// receiver is down, head compactions (which checkpoint) keep every segment
// the sender has not had acknowledged, and once the receiver is back
// everything arrives; then later checkpoints remove segments again.
func TestKeepWALFrom(t *testing.T) {
	rv, down, s, db, dir := stalledSender(t, nil, keepSender)
	ctx := context.Background()

	want := map[string]int{}
	for r := range int64(3) {
		for k, v := range ingest(t, db, 20, r*twoHours, (r+1)*twoHours-15000, 15000, s.Notify) {
			want[k] = v
		}
		require.NoError(t, db.Compact(ctx))
	}
	require.NotEmpty(t, db.Blocks(), "head compaction cut blocks")
	segs := segments(t, dir)
	require.Greater(t, len(segs), 5, "the WAL spans several segments")
	require.Equal(t, 0, segs[0], "no segment the sender needs was removed")
	require.Zero(t, testutil.ToFloat64(s.metrics.segmentsLost))

	down.Store(false)
	waitFor(t, 30*time.Second, "all samples", func() bool { return received(want, rv.counts(t)) == 0 })
	waitFor(t, 10*time.Second, "position", func() bool { return s.KeepWALFrom() >= segs[len(segs)-1] })

	// The sender caught up: the next checkpoint removes old segments.
	for k, v := range ingest(t, db, 20, 3*twoHours, 4*twoHours-15000, 15000, s.Notify) {
		want[k] = v
	}
	require.NoError(t, db.Compact(ctx))
	require.Greater(t, segments(t, dir)[0], 0, "checkpoint truncated the WAL again")
	waitFor(t, 30*time.Second, "all samples", func() bool { return received(want, rv.counts(t)) == 0 })
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	require.Zero(t, testutil.ToFloat64(s.metrics.segmentsLost))
}

// TestKeepWALFromCap: with MaxSegmentsBehind set and the receiver down, the
// sender gives up the oldest segments instead of holding the WAL, counts
// them, and sends what is written after it recovers.
func TestKeepWALFromCap(t *testing.T) {
	const maxBehind = 3
	// Every answer the DB gets at a checkpoint, with the newest segment the
	// sender had seen just before. The checkpoints run when the DB's
	// background compaction decides, in the middle of an ingest as often
	// as not, so the test checks each answer against what the sender knew
	// then, not the WAL's length at some moment after.
	type answer struct{ keep, newest int }
	var (
		mu      sync.Mutex
		answers []answer
	)
	record := func(s *Sender) func() int {
		return func() int {
			newest := int(s.newestSeg.Load())
			keep := s.KeepWALFrom()
			mu.Lock()
			answers = append(answers, answer{keep, newest})
			mu.Unlock()
			return keep
		}
	}
	rv, down, s, db, dir := stalledSender(t, func(c *Config) { c.MaxSegmentsBehind = maxBehind }, record)
	ctx := context.Background()

	for r := range int64(3) {
		ingest(t, db, 20, r*twoHours, (r+1)*twoHours-15000, 15000, s.Notify)
		segs := segments(t, dir)
		waitFor(t, 10*time.Second, "the sender sees the newest segment", func() bool {
			return int(s.newestSeg.Load()) >= segs[len(segs)-1]
		})
		require.NoError(t, db.Compact(ctx)) // and waits for a background one
	}
	mu.Lock()
	got := slices.Clone(answers)
	mu.Unlock()
	require.NotEmpty(t, got, "checkpoints asked the sender")
	capped := false
	for _, a := range got {
		// Nothing was acknowledged: without the cap every answer would be 0.
		require.GreaterOrEqual(t, a.keep, a.newest-maxBehind, "the cap bounds what the sender holds (%+v)", got)
		capped = capped || a.keep > 0
	}
	require.True(t, capped, "the cap let a checkpoint drop segments (%+v)", got)
	require.Greater(t, segments(t, dir)[0], 0, "the WAL was truncated")
	// samples_skipped_total is not checked here: the checkpoint that asked
	// removes the given-up segments at once, and the reader, stalled on its
	// full queue, may find them gone before it counts their samples (see
	// Sender.skipAhead; TestSkipAheadCounts checks the count).
	waitFor(t, 10*time.Second, "segments dropped", func() bool { return testutil.ToFloat64(s.metrics.segmentsDropped) > 0 })

	down.Store(false)
	last := ingest(t, db, 20, 3*twoHours, 3*twoHours+100*15000, 15000, s.Notify)
	waitFor(t, 30*time.Second, "samples written after recovery", func() bool { return received(last, rv.counts(t)) == 0 })
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	t.Logf("answers %+v, segments dropped %v, samples skipped %v, lost %v", got,
		testutil.ToFloat64(s.metrics.segmentsDropped), testutil.ToFloat64(s.metrics.samplesSkipped),
		testutil.ToFloat64(s.metrics.segmentsLost))
}

// TestSegmentsRemovedUnderSender runs the DB without KeepWALFrom while the
// receiver is down: checkpoints remove segments the sender has not sent.
// The sender counts the loss, reloads series from the checkpoint and goes
// on with what is left and what comes after.
func TestSegmentsRemovedUnderSender(t *testing.T) {
	// Capacity 100: the reader waits early, in the first segments.
	rv, down, s, db, dir := stalledSender(t, func(c *Config) { c.Capacity = 100 }, nil)
	ctx := context.Background()
	for r := range int64(3) {
		ingest(t, db, 20, r*twoHours, (r+1)*twoHours-15000, 15000, s.Notify)
		require.NoError(t, db.Compact(ctx))
	}
	require.Greater(t, segments(t, dir)[0], 1, "checkpoints removed segments")
	down.Store(false)
	last := ingest(t, db, 20, 3*twoHours, 3*twoHours+100*15000, 15000, s.Notify)
	waitFor(t, 30*time.Second, "samples written after recovery", func() bool { return received(last, rv.counts(t)) == 0 })
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	require.Positive(t, testutil.ToFloat64(s.metrics.segmentsLost))
}

// TestSeriesChurn: series that stop (the head drops them and the next
// checkpoint leaves them out) are forgotten by the sender once it has read
// past that checkpoint.
func TestSeriesChurn(t *testing.T) {
	rv := newReceiver(t)
	dir := t.TempDir()
	s, err := New(dir, testConfig(rv.url(t)), nil, nil)
	require.NoError(t, err)
	o := isoOptions()
	o.WALSegmentSize = 32 << 10
	o.KeepWALFrom = s.KeepWALFrom
	db := openIso(t, dir, o)
	require.NoError(t, s.Start())
	ctx := context.Background()

	want := ingest(t, db, 20, 0, twoHours-15000, 15000, s.Notify) // series i=0..19
	churned := func(from, to int64) {
		for k, v := range ingestNamed(t, db, "n", 20, from, to, 15000, s.Notify) {
			want[k] = v
		}
	}
	for r := int64(1); r < 4; r++ {
		churned(r*twoHours, (r+1)*twoHours-15000)
		waitFor(t, 30*time.Second, "samples", func() bool { return received(want, rv.counts(t)) == 0 })
		require.NoError(t, db.Compact(ctx))
	}
	churned(4*twoHours, 4*twoHours+200*15000) // rolls segments past the checkpoint
	waitFor(t, 30*time.Second, "samples", func() bool { return received(want, rv.counts(t)) == 0 })
	require.NoError(t, s.Stop())
	require.NoError(t, db.Close())
	require.Zero(t, testutil.ToFloat64(s.metrics.samplesDropped), "no sample lost its series")
	require.Len(t, s.series.refs, 20, "only the live series are remembered")
}

// TestSkipAheadCounts: giving up segments still on disk counts each of them
// and every float sample in them, as the WAL's own reader finds them.
func TestSkipAheadCounts(t *testing.T) {
	dir := t.TempDir()
	o := isoOptions()
	o.WALSegmentSize = 32 << 10
	db := openIso(t, dir, o)
	ingest(t, db, 20, 0, twoHours-15000, 15000, func() {})
	require.NoError(t, db.Close())
	segs := segments(t, dir)
	require.Greater(t, len(segs), 3, "the WAL spans several segments")
	skip := segs[len(segs)-2]

	want := 0
	var dec record.Decoder
	for seg := range skip {
		f, err := os.Open(wlog.SegmentName(filepath.Join(dir, "wal"), seg))
		require.NoError(t, err)
		r := wlog.NewReader(f)
		for r.Next() {
			if rec := r.Record(); len(rec) > 0 && record.Type(rec[0]) == record.Samples {
				ss, err := dec.Samples(rec, nil)
				require.NoError(t, err)
				want += len(ss)
			}
		}
		require.NoError(t, r.Err())
		require.NoError(t, f.Close())
	}
	require.Positive(t, want)

	s, err := New(dir, testConfig(&url.URL{Scheme: "http", Host: "127.0.0.1:1"}), nil, nil)
	require.NoError(t, err)
	require.Equal(t, wlog.Position{Segment: skip}, s.skipAhead(context.Background(), wlog.Position{}, skip))
	require.Equal(t, float64(skip), testutil.ToFloat64(s.metrics.segmentsDropped))
	require.Equal(t, float64(want), testutil.ToFloat64(s.metrics.samplesSkipped))
}
