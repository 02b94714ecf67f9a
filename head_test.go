package tsdb

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
)

// stepper drives one commit sample by sample from the test goroutine.
type stepper struct {
	app      *headAppender
	atSample chan int // the commit is about to apply sample i
	proceed  chan struct{}
	done     chan error // the commit returned
	txn      *modelTxn
	next     int // index of the sample about to be applied
}

// modelTxn is what the model knows of one Appender.
type modelTxn struct {
	app       Appender
	samples   []modelSample // buffered, in Append order
	completed int           // model clock at completion, 0 while in progress
}

type modelSample struct {
	series int
	t      int64
	v      float64
}

// appliedSample is a sample the model has applied to a series.
type appliedSample struct {
	t   int64
	v   float64
	txn *modelTxn
}

type modelQuerier struct {
	q          Querier
	clock      int // model clock when the querier was created
	mint, maxt int64
}

// TestIsolationModel: random appends of floats and histograms, commits (applied
// sample by sample, interleaved with everything else), rollbacks and
// queriers opened, read and closed in random order; every read is compared
// with a model of what its snapshot must show.
func TestIsolationModel(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runIsolationModel(t, seed, 3000, false) })
	}
}

// TestIsolationModelLate is TestIsolationModel with the out-of-order
// window on and samples often far behind their series' newest: late
// samples (head_late.go), cut into late chunks, must be seen with their
// commit's in-order samples or not at all.
func TestIsolationModelLate(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runIsolationModel(t, seed, 3000, true) })
	}
}

func runIsolationModel(t *testing.T, seed uint64, steps int, late bool) {
	rng := rand.New(rand.NewPCG(seed, seed))
	o := DefaultOptions()
	o.SamplesPerChunk = 5 // cross chunk boundaries all the time
	if late {
		o.OutOfOrderTimeWindow = time.Hour
	}
	db, _ := openTestDB(t, o)
	h := db.head

	const nSeries = 6
	lsets := make([]labels.Labels, nSeries)
	for i := range lsets {
		lsets[i] = labels.FromStrings(labels.MetricName, "m", "s", fmt.Sprint(i))
	}
	var steppers sync.Map // *headAppender -> *stepper
	// stop releases the paused commits when the test ends, so that a
	// failure is reported instead of Close waiting for them forever.
	stop := make(chan struct{})
	h.commitHook = func(a *headAppender, i int) {
		v, _ := steppers.Load(a)
		st := v.(*stepper)
		select {
		case st.atSample <- i:
		case <-stop:
			return
		}
		select {
		case <-st.proceed:
		case <-stop:
		}
	}
	t.Cleanup(func() { close(stop) })

	var (
		clock      = 1 // advances at every completion and every querier creation
		open       []*modelTxn
		inProgress []*stepper
		queriers   []*modelQuerier
		applied    = make([][]appliedSample, nSeries)
		lastIssued = make([]int64, nSeries)
		nextValue  = 0.0
	)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: "+format, append([]any{seed}, args...)...)
	}

	// applyModel mirrors the head applying one sample at commit time: it is
	// dropped if the series already has a sample at or after its time.
	// With the window on, a sample older than the newest is inserted in
	// time order unless the series has one at its time.
	applyModel := func(st *stepper, i int) {
		s := st.txn.samples[i]
		as := applied[s.series]
		if len(as) > 0 && s.t <= as[len(as)-1].t {
			if !late {
				return
			}
			k, found := slices.BinarySearchFunc(as, s.t, func(a appliedSample, t int64) int { return cmpInt64(a.t, t) })
			if !found {
				applied[s.series] = slices.Insert(as, k, appliedSample{t: s.t, v: s.v, txn: st.txn})
			}
			return
		}
		applied[s.series] = append(as, appliedSample{t: s.t, v: s.v, txn: st.txn})
	}
	// waitStep waits for the commit to reach its next sample or return.
	waitStep := func(st *stepper) bool {
		select {
		case i := <-st.atSample:
			if i != st.next {
				fail("commit at sample %d, model at %d", i, st.next)
			}
			return false
		case err := <-st.done:
			if err != nil {
				fail("commit: %v", err)
			}
			if st.next != len(st.txn.samples) {
				fail("commit returned after %d of %d samples", st.next, len(st.txn.samples))
			}
			clock++
			st.txn.completed = clock
			return true
		}
	}
	startCommit := func(txn *modelTxn) {
		a := txn.app.(*headAppender)
		st := &stepper{app: a, atSample: make(chan int), proceed: make(chan struct{}), done: make(chan error, 1), txn: txn}
		steppers.Store(a, st)
		go func() { st.done <- txn.app.Commit() }()
		if !waitStep(st) {
			inProgress = append(inProgress, st)
		}
	}
	step := func(k int) {
		st := inProgress[k]
		applyModel(st, st.next)
		st.next++
		st.proceed <- struct{}{}
		if waitStep(st) {
			inProgress = slices.Delete(inProgress, k, k+1)
		}
	}
	check := func(mq *modelQuerier) {
		t.Helper()
		want := map[string][]sample{}
		for si, as := range applied {
			var ss []sample
			for _, a := range as {
				if a.txn.completed != 0 && a.txn.completed <= mq.clock && a.t >= mq.mint && a.t <= mq.maxt {
					ss = append(ss, sample{a.t, a.v})
				}
			}
			if len(ss) > 0 {
				want[lsets[si].String()] = ss
			}
		}
		got := querySamples(t, mq.q)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			fail("querier of clock %d [%d,%d]:\n got %v\nwant %v", mq.clock, mq.mint, mq.maxt, got, want)
		}
		// Seek lands on the first visible sample at or after the target.
		for si, l := range lsets {
			ss := want[l.String()]
			if len(ss) == 0 {
				continue
			}
			target := ss[len(ss)/2].T
			set := mq.q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, "s", fmt.Sprint(si)))
			if !set.Next() {
				fail("series %s vanished", l)
			}
			it := set.At().Iterator(nil)
			if it.Seek(target-1) == chunks.ValNone {
				fail("seek %d in %s found nothing", target-1, l)
			}
			if ts := it.AtT(); ts > target {
				fail("seek %d in %s landed on %d, after %d", target-1, l, ts, target)
			}
			if it.Seek(target) == chunks.ValNone {
				fail("seek %d in %s found nothing", target, l)
			}
			if ts := it.AtT(); ts != target {
				fail("seek %d in %s landed on %d", target, l, ts)
			}
		}
	}

	for i := 0; i < steps; i++ {
		switch op := rng.IntN(100); {
		case op < 10 && len(open) < 4:
			open = append(open, &modelTxn{app: db.Appender(ctx)})
		case op < 40 && len(open) > 0:
			txn := open[rng.IntN(len(open))]
			for n := 1 + rng.IntN(4); n > 0; n-- {
				si := rng.IntN(nSeries)
				ts := lastIssued[si] + int64(rng.IntN(8)) - 2
				if late && rng.IntN(3) == 0 {
					ts = max(0, lastIssued[si]-int64(rng.IntN(200))) // late
				}
				lastIssued[si] = max(lastIssued[si], ts)
				nextValue++
				// A third of the samples are integer and a third float
				// histograms (of count nextValue), read back by
				// querySamples as -count and -count-½.
				var err error
				v := nextValue
				switch rng.IntN(3) {
				case 0:
					_, err = txn.app.Append(0, lsets[si], ts, v)
				case 1:
					_, err = txn.app.AppendHistogram(0, lsets[si], ts, crashHistogram(int(v)), nil)
					v = -v
				default:
					_, err = txn.app.AppendHistogram(0, lsets[si], ts, nil, crashHistogram(int(v)).ToFloat())
					v = -v - 0.5
				}
				switch {
				case err == nil:
					txn.samples = append(txn.samples, modelSample{si, ts, v})
				case errors.Is(err, ErrOutOfOrderSample), errors.Is(err, ErrDuplicateSampleForTimestamp):
				default:
					fail("append: %v", err)
				}
			}
		case op < 50 && len(open) > 0:
			k := rng.IntN(len(open))
			txn := open[k]
			open = slices.Delete(open, k, k+1)
			if len(txn.samples) == 0 {
				require.NoError(t, txn.app.Commit())
				continue
			}
			startCommit(txn)
		case op < 55 && len(open) > 0:
			k := rng.IntN(len(open))
			require.NoError(t, open[k].app.Rollback())
			open = slices.Delete(open, k, k+1)
		case op < 75 && len(inProgress) > 0:
			step(rng.IntN(len(inProgress)))
		case op < 82:
			q, err := db.Querier(0, math.MaxInt64)
			require.NoError(t, err)
			mq := &modelQuerier{q: q, clock: clock, mint: math.MinInt64, maxt: math.MaxInt64}
			if rng.IntN(2) == 0 {
				mq.q.Close()
				lo := int64(rng.IntN(int(max(lastIssued[0], 1)) + 1))
				mq.mint, mq.maxt = lo, lo+int64(rng.IntN(40))
				q, err = db.Querier(mq.mint, mq.maxt)
				require.NoError(t, err)
				mq.q = q
			} else {
				mq.mint = 0
			}
			clock++
			queriers = append(queriers, mq)
		case op < 95 && len(queriers) > 0:
			check(queriers[rng.IntN(len(queriers))])
		case len(queriers) > 0:
			k := rng.IntN(len(queriers))
			check(queriers[k])
			require.NoError(t, queriers[k].q.Close())
			queriers = slices.Delete(queriers, k, k+1)
		}
	}
	for len(inProgress) > 0 {
		step(0)
	}
	for _, txn := range open {
		require.NoError(t, txn.app.Rollback())
	}
	for _, mq := range queriers {
		check(mq)
		require.NoError(t, mq.q.Close())
	}
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	check(&modelQuerier{q: q, clock: clock, mint: math.MinInt64, maxt: math.MaxInt64})
	require.NoError(t, q.Close())
	reads, inflight := h.iso.stats()
	require.Zero(t, reads)
	require.Zero(t, inflight)
	if late {
		cut := 0
		h.series.refs.each(func(s *memSeries) {
			s.mu.Lock()
			if s.hasLateLocked() && len(s.x.late.chunks) > 0 {
				cut++
			}
			s.mu.Unlock()
		})
		require.Positive(t, cut, "no series cut a late chunk: the model did not cover them")
	}
}

// TestRingMemoryBounded: after 10⁶ commits (10⁵ under -race) with no open
// reads each series' ring holds a handful of IDs; with one read held open
// it grows; after the read closes and one more commit it shrinks back.
func TestRingMemoryBounded(t *testing.T) {
	db, _ := openTestDB(t, nil)
	const nSeries = 10
	commits := 1_000_000
	if raceEnabled { // ten times slower: a tenth still shows an unbounded ring
		commits = 100_000
	}
	lsets := make([]labels.Labels, nSeries)
	refs := make([]SeriesRef, nSeries)
	for i := range lsets {
		lsets[i] = seriesLabels(i)
	}
	ts := make([]int64, nSeries)
	commit := func(i int) {
		si := i % nSeries
		ts[si]++
		app := db.Appender(ctx)
		ref, err := app.Append(refs[si], lsets[si], ts[si], float64(i))
		if err != nil {
			t.Fatal(err)
		}
		refs[si] = ref
		if err := app.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	ringSizes := func() (maxLen, maxCap int) {
		for _, ref := range refs {
			s := db.head.series.getByRef(ref)
			s.mu.Lock()
			maxLen, maxCap = max(maxLen, s.txs.len()), max(maxCap, s.txs.cap())
			s.mu.Unlock()
		}
		return maxLen, maxCap
	}
	for i := 0; i < commits; i++ {
		commit(i)
	}
	l, c := ringSizes()
	require.LessOrEqual(t, l, 2, "ring length after %d commits without reads", commits)
	require.Equal(t, 1, c, "one ID, held inline")

	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		commit(i)
	}
	l, c = ringSizes()
	require.Equal(t, 100, l, "each series holds the IDs of its 100 commits since the read")
	require.GreaterOrEqual(t, c, 100)

	require.NoError(t, q.Close())
	for i := 0; i < nSeries; i++ {
		commit(i) // one more commit per series
	}
	l, c = ringSizes()
	require.Equal(t, 1, l)
	require.Equal(t, 1, c, "ring back to one inline ID")
}

// TestMemSeriesSize guards the size of memSeries: at 128 bytes it fills
// two cache lines exactly (and an allocation size class of its own); at
// 136, WAL replay measured 20% slower. A field added must pay for itself
// elsewhere in the struct.
func TestMemSeriesSize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(memSeries{}), uintptr(128))
}
