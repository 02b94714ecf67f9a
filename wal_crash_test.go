package tsdb

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// crashWorkload is a WAL of transactions whose presence after a crash can
// be checked: transaction k (from 1) writes sample (k, k) to sizes[k-1]
// distinct series, so each transaction is identified by its timestamp.
//
// With mixed set, a third of the series take integer histograms and a
// third float histograms instead (of count k), so that a transaction is a
// commit group of several records.
type crashWorkload struct {
	lsets []labels.Labels
	sizes []int // samples of each transaction
	picks [][]int
	mixed bool
	// late: transactions write at 10k, and a quarter of the series of
	// transaction k > 5 take a late sample at 10(k-5)+3, behind the newer
	// samples that later transactions wrote to them; the value is k. So
	// a commit is in-order and late samples in one record (floats only).
	late bool
	// rotate (with late): the series that take a late sample rotate,
	// series i in transactions k with (i+k)%4 == 0, so that a series
	// picked by every transaction has newer samples to be late behind.
	rotate bool
	// behind (with late): transaction k writes at minute k instead, and
	// the late samples of transactions k > 150 are 150 minutes late, at
	// minute k-150 plus 3ms, within a window of 3h. The workload's driver
	// compacts the head every hour of samples, so most late samples fall
	// behind the head's range (before minValidTime), into block ranges
	// already written.
	behind bool
}

// timeOf returns the time of transaction k's sample in series i.
func (w *crashWorkload) timeOf(k, i int) int64 {
	switch {
	case !w.late:
		return int64(k)
	case w.behind && w.rotate && (i+k)%4 == 0 && k > 150:
		return int64(k-150)*time.Minute.Milliseconds() + 3
	case w.behind:
		return int64(k) * time.Minute.Milliseconds()
	case w.rotate && (i+k)%4 == 0 && k > 5, !w.rotate && i%4 == 0 && k > 5:
		return int64(10*(k-5) + 3)
	}
	return int64(10 * k)
}

// options returns the options the workload's DB is opened with.
func (w *crashWorkload) options(fsys vfs.FS) *Options {
	o := DefaultOptions()
	o.FS = fsys
	if w.late {
		o.OutOfOrderTimeWindow = time.Hour
	}
	if w.behind {
		o.OutOfOrderTimeWindow = 3 * time.Hour
	}
	return o
}

// crashHistogram is the histogram of transaction k: count k, all of it in
// the zero bucket.
func crashHistogram(k int) *histogram.Histogram {
	return &histogram.Histogram{Count: uint64(k), ZeroCount: uint64(k), Sum: float64(k), ZeroThreshold: 0.001, Schema: 3}
}

func newCrashWorkload(seed uint64, txns int) *crashWorkload {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := &crashWorkload{}
	for i := 0; i < 500; i++ {
		w.lsets = append(w.lsets, labels.FromStrings(labels.MetricName, "crash", "s", fmt.Sprint(i)))
	}
	for k := 0; k < txns; k++ {
		// 10 to 500 samples, mostly small, so replays stay quick.
		u := rng.Float64()
		n := 10 + int(490*u*u*u*u)
		w.sizes = append(w.sizes, n)
		w.picks = append(w.picks, rng.Perm(len(w.lsets))[:n])
	}
	return w
}

// matcher selects the workload's series.
func (w *crashWorkload) matcher() *labels.Matcher {
	return labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "crash")
}

// commit writes transaction k (from 1).
func (w *crashWorkload) commit(db *DB, k int) error {
	app := db.Appender(ctx)
	for _, i := range w.picks[k-1] {
		var err error
		switch {
		case !w.mixed || i%3 == 0:
			_, err = app.Append(0, w.lsets[i], w.timeOf(k, i), float64(k))
		case i%3 == 1:
			_, err = app.AppendHistogram(0, w.lsets[i], int64(k), crashHistogram(k), nil)
		default:
			_, err = app.AppendHistogram(0, w.lsets[i], int64(k), nil, crashHistogram(k).ToFloat())
		}
		if err != nil {
			return err
		}
	}
	return app.Commit()
}

// check opens the DB in fsys and returns which transactions are present.
// It fails the test if a transaction is present only in part.
func (w *crashWorkload) check(t *testing.T, fsys vfs.FS, what string) (present []bool) {
	t.Helper()
	db, err := Open("data", nil, nil, w.options(fsys))
	require.NoError(t, err, "open after %s", what)
	defer func() { require.NoError(t, db.Close()) }()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	counts := make([]int, len(w.sizes)+1)
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "crash"))
	for ss.Next() {
		i, err := strconv.Atoi(ss.At().Labels().Get("s"))
		require.NoError(t, err)
		it := ss.At().Iterator(nil)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			var ts int64
			var v float64
			switch vt {
			case chunks.ValFloat:
				ts, v = it.At()
			case chunks.ValHistogram:
				var h *histogram.Histogram
				ts, h = it.AtHistogram(nil)
				v = float64(h.Count)
			default:
				var fh *histogram.FloatHistogram
				ts, fh = it.AtFloatHistogram(nil)
				v = fh.Count
			}
			k := int(v)
			if float64(k) != v || k < 1 || k > len(w.sizes) || ts != w.timeOf(k, i) {
				t.Fatalf("after %s: unexpected sample (%d, %g) in series %d", what, ts, v, i)
			}
			counts[k]++
		}
		require.NoError(t, it.Err())
	}
	require.NoError(t, ss.Err())
	present = make([]bool, len(w.sizes)+1)
	for k := 1; k <= len(w.sizes); k++ {
		if counts[k] != 0 {
			require.Equal(t, w.sizes[k-1], counts[k], "after %s: samples of transaction %d", what, k)
		}
		present[k] = counts[k] > 0
	}
	return present
}

// segments returns the WAL segment files of fsys, in order.
func walSegments(t *testing.T, fsys *vfs.MemFS) []string {
	t.Helper()
	ents, err := fsys.ReadDir("data/wal")
	require.NoError(t, err)
	var segs []string
	for _, e := range ents {
		if !e.IsDir() {
			segs = append(segs, path.Join("data/wal", e.Name()))
		}
	}
	return segs
}

// TestWALCrashMatrix: a log of 1,000
// transactions of 10 to 500 samples, fsynced at every commit, is cut at
// every record boundary of its last segment and at 2,000 random byte
// offsets, and has single bytes flipped: Open always succeeds, every
// transaction is whole or absent, and every transaction whose record was
// whole before the damage is present.
//
// In the mixed variant a third of the samples are integer and a third
// float histograms, so that each transaction is a commit group of up to
// four records: a cut between two of them must drop the whole transaction.
func TestWALCrashMatrix(t *testing.T) {
	for _, variant := range []string{"floats", "mixed", "late", "behind"} {
		t.Run(variant, func(t *testing.T) { testWALCrashMatrix(t, variant) })
	}
}

func testWALCrashMatrix(t *testing.T, variant string) {
	txns := 1000
	if variant == "behind" {
		txns = 900
	}
	w := newCrashWorkload(1, txns)
	w.mixed, w.late = variant == "mixed", variant == "late" || variant == "behind"
	w.behind, w.rotate = variant == "behind", variant == "behind"
	mixed := w.mixed
	fsys := vfs.NewMemFS()
	o := w.options(fsys)
	o.WALSyncEveryCommit = true
	o.WALSegmentSize = 256 << 10
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	// The behind variant compacts the head itself, at fixed points only.
	// The last compaction, after transaction 841 (minute 841), leaves the
	// head from minute 720 on; the head stays below the 3h span that makes
	// it compactable until the last transaction (minute 900), so the 59
	// transactions after it, in a WAL segment of their own, are in the
	// head only. Their late samples from before minute 720 are behind the
	// head's range: replay must take them as late ones.
	const lastCompaction = 841
	if w.behind {
		db.head.onCommit = nil
	}
	behindAtLast := 0.0
	for k := 1; k <= txns; k++ {
		require.NoError(t, w.commit(db, k))
		if w.behind && (k%60 == 0 || k == lastCompaction) {
			require.NoError(t, db.Compact(ctx))
		}
		if w.behind && k == lastCompaction {
			require.Equal(t, 720*time.Minute.Milliseconds(), db.head.minValidTime.Load())
			_, err := db.head.wal.NextSegment()
			require.NoError(t, err)
			behindAtLast = counterValue(t, db.head.metrics.lateAppended)
		}
	}
	base := fsys.Crash() // every commit was fsynced: nothing is lost
	if w.late {
		require.Positive(t, counterValue(t, db.head.metrics.lateAppended), "the late variant wrote no late sample")
	}
	if w.behind {
		require.False(t, db.head.compactable(), "the head became compactable after the last compaction")
		require.Greater(t, counterValue(t, db.head.metrics.lateAppended)-behindAtLast, 100.0, "late samples after the last compaction")
		require.NotEmpty(t, db.Blocks())
		behind := 0
		for k := lastCompaction + 1; k <= txns; k++ {
			for _, i := range w.picks[k-1] {
				if w.timeOf(k, i) < 720*time.Minute.Milliseconds() {
					behind++
				}
			}
		}
		require.Greater(t, behind, 100, "late samples behind the head's range after the last compaction")
	}
	require.NoError(t, db.Close())

	// The last segment with data, and where its records end.
	var seg string
	var data []byte
	for _, s := range walSegments(t, base) {
		if b, err := base.ReadFile(s); err == nil && len(b) > 0 {
			seg, data = s, b
		}
	}
	require.NotEmpty(t, data)
	type recEnd struct {
		off int64
		txn int // transaction whose samples record ends here; 0 for a series record
	}
	var ends []recEnd
	firstTxnInSeg := 0
	r := wlog.NewReader(bytes.NewReader(data))
	var dec record.Decoder
	groupLeft := 0 // records of the current commit group still to come
	for r.Next() {
		e := recEnd{off: r.Offset()}
		txn := 0
		switch typ := record.RecordType(r.Record()); typ {
		case record.Samples:
			smps, err := dec.Samples(r.Record(), nil)
			require.NoError(t, err)
			txn = int(smps[0].V)
		case record.HistogramSamples:
			smps, err := dec.HistogramSamples(r.Record(), nil)
			require.NoError(t, err)
			txn = int(smps[0].T)
		case record.FloatHistogramSamples:
			smps, err := dec.FloatHistogramSamples(r.Record(), nil)
			require.NoError(t, err)
			txn = int(smps[0].T)
		case record.CommitGroup:
			n, err := dec.CommitGroup(r.Record())
			require.NoError(t, err)
			groupLeft = n + 1
		}
		if groupLeft > 0 {
			groupLeft--
		}
		if txn > 0 {
			if firstTxnInSeg == 0 {
				firstTxnInSeg = txn
			}
			if groupLeft == 0 {
				e.txn = txn // the transaction's last record
			}
		}
		ends = append(ends, e)
	}
	require.NoError(t, r.Err())
	require.Zero(t, groupLeft)
	require.Greater(t, len(ends), 50, "the last segment holds many records")
	t.Logf("last segment %s: %d bytes, %d records, transactions %d..%d", seg, len(data), len(ends), firstTxnInSeg, txns)

	// wantPresent returns the transactions that must survive damage at
	// offset off of the last segment: those in earlier segments and those
	// whose samples record ends at or before off.
	lastWhole := func(off int64) int {
		last := firstTxnInSeg - 1
		for _, e := range ends {
			if e.off <= off && e.txn > 0 {
				last = e.txn
			}
		}
		return last
	}
	verify := func(mutate func([]byte) []byte, off int64, what string) {
		t.Helper()
		fs2 := base.Crash() // a copy
		require.NoError(t, fs2.WriteFile(seg, mutate(slices.Clone(data)), 0o666))
		fs2.SyncAll()
		present := w.check(t, fs2, what)
		last := lastWhole(off)
		for k := 1; k <= txns; k++ {
			require.Equal(t, k <= last, present[k], "after %s: transaction %d present (last whole %d)", what, k, last)
		}
	}

	rng := rand.New(rand.NewPCG(2, 3))
	stride := 1
	randomCuts, flips := 2000, 300
	if mixed || w.late {
		randomCuts, flips = 500, 100
	}
	if raceEnabled { // the full matrix runs without -race in scripts/test
		stride, randomCuts, flips = 40, 20, 5
	}
	for i := 0; i < len(ends); i += stride {
		off := ends[i].off
		verify(func(b []byte) []byte { return b[:off] }, off, fmt.Sprintf("cut at record boundary %d", off))
	}
	for i := 0; i < randomCuts; i++ {
		off := rng.Int64N(int64(len(data)) + 1)
		verify(func(b []byte) []byte { return b[:off] }, off, fmt.Sprintf("cut at byte %d", off))
	}
	for i := 0; i < flips; i++ {
		off := rng.Int64N(int64(len(data)))
		verify(func(b []byte) []byte { b[off] ^= 1 << rng.IntN(8); return b }, off, fmt.Sprintf("bit flipped at byte %d", off))
	}
}

// TestWALCrashDropUnsynced crashes a DB while it commits, keeping only what
// was fsynced plus a random prefix of each file's unsynced tail (a torn
// write): with either fsync policy Open succeeds and the transactions
// present are whole and a prefix of those committed; with fsync at every
// commit that prefix includes every acknowledged commit.
func TestWALCrashDropUnsynced(t *testing.T) {
	const txns = 1000
	// mapped: closed chunks are written to chunks_head/ (head_mmap.go)
	// every 25 commits, so a crash also tears those files.
	// mixed: a third of the samples are integer, a third float histograms.
	for _, tc := range []struct{ syncEvery, late, mapped, mixed bool }{
		{false, false, false, false}, {true, false, false, false}, {false, true, false, false}, {true, true, false, false},
		{false, true, true, false}, {true, false, true, true},
	} {
		t.Run(fmt.Sprintf("syncEveryCommit=%v/late=%v/mapped=%v/mixed=%v", tc.syncEvery, tc.late, tc.mapped, tc.mixed), func(t *testing.T) {
			syncEvery := tc.syncEvery
			w := newCrashWorkload(3, txns)
			w.late, w.mixed = tc.late, tc.mixed
			fsys := vfs.NewMemFS()
			o := w.options(fsys)
			o.WALSyncEveryCommit = syncEvery
			o.WALSegmentSize = 64 << 10 // cuts segments: the default policy syncs there
			db, err := Open("data", nil, nil, o)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(4, 5))
			crashes := 60
			if raceEnabled {
				crashes = 6
			}
			every := txns / crashes
			for k := 1; k <= txns; k++ {
				require.NoError(t, w.commit(db, k))
				if tc.mapped && k%25 == 0 {
					require.NoError(t, db.Compact(ctx))
				}
				if k%every != 0 {
					continue
				}
				what := fmt.Sprintf("crash after commit %d", k)
				present := w.check(t, fsys.CrashKeep(rng), what)
				last := 0
				for last < txns && present[last+1] {
					last++
				}
				for j := last + 1; j <= txns; j++ {
					require.False(t, present[j], "%s: transaction %d present after missing %d", what, j, last+1)
				}
				if syncEvery {
					require.Equal(t, k, last, "%s: acknowledged commits lost", what)
				}
			}
			if tc.mapped {
				require.Positive(t, counterValue(t, db.head.metrics.chunksMapped), "no chunk was mapped")
			}
			require.NoError(t, db.Close())
		})
	}
}
