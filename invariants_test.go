package tsdb

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/labels"
)

// invariantsHead returns the head of an open test DB with a few series,
// one of them written by two commits while a read was open (so that its
// ring spilled), and the read still open.
func invariantsHead(t *testing.T) *head {
	t.Helper()
	db, _ := openTestDB(t, nil)
	app := db.Appender(context.Background())
	for i, name := range []string{"a", "b", "c"} {
		_, err := app.Append(0, labels.FromStrings("__name__", name), int64(i), 1)
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	q, err := db.Querier(0, 100)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, q.Close()) })
	for ts := int64(10); ts < 13; ts++ {
		app := db.Appender(context.Background())
		_, err := app.Append(0, labels.FromStrings("__name__", "a"), ts, 2)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
	}
	return db.head
}

func TestHeadCheckInvariants(t *testing.T) {
	h := invariantsHead(t)
	require.NoError(t, h.checkInvariants(true))
	require.NoError(t, h.checkInvariants(false))

	a := h.series.getByHash(labels.FromStrings("__name__", "a").Hash(), labels.FromStrings("__name__", "a"))
	require.NotNil(t, a)
	require.NotNil(t, a.txs.big, "the open read keeps a's write IDs")

	// Each corruption is found (and undone before the next one). The
	// postings' own checks are tested in internal/index.
	corruptions := []struct {
		name    string
		corrupt func() (undo func())
		want    string
	}{
		{"ring ID from the future", func() func() {
			p := &a.txs.big.ids[a.txs.big.first]
			orig := *p
			*p = 1000
			return func() { *p = orig }
		}, "ring holds ID 1000, above the 4 handed out"},
		{"ring longer than the series", func() func() {
			total := a.total
			a.total = 1
			return func() { a.total = total }
		}, "ring holds 3 IDs for 1 samples"},
		{"ring capacity", func() func() {
			ids := a.txs.big.ids
			a.txs.big.ids = append(ids[:len(ids):len(ids)], 0)
			return func() { a.txs.big.ids = ids }
		}, "not a power of two"},
		{"commits in flight miscounted", func() func() {
			h.iso.inflight++
			return func() { h.iso.inflight-- }
		}, "0 commits listed, 1 counted in flight"},
		{"read low mark", func() func() {
			h.iso.readsHead.lowMark++
			return func() { h.iso.readsHead.lowMark-- }
		}, "has low mark 3, want 2"},
		{"series counted twice", func() func() {
			h.numSeries.Add(1)
			return func() { h.numSeries.Add(-1) }
		}, "numSeries is 4, the head holds 3 series"},
		{"series removed but kept", func() func() {
			a.removed = true
			return func() { a.removed = false }
		}, "is removed but still in the ref table"},
	}
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			undo := c.corrupt()
			require.ErrorContains(t, h.checkInvariants(true), c.want)
			undo()
			require.NoError(t, h.checkInvariants(true))
		})
	}
}

func TestHeadCheckCommitInvariants(t *testing.T) {
	h := invariantsHead(t)
	lset := labels.FromStrings("__name__", "a")
	a := h.series.getByHash(lset.Hash(), lset)
	b := &appendBatch{samples: []pendingSample{{s: a, t: 20}, {s: a, t: 21}}}
	require.NoError(t, h.checkCommitInvariants(b))
	a.txs.big.ids[a.txs.big.first] += 100
	require.ErrorContains(t, h.checkCommitInvariants(b), "above the 4 handed out")
	a.txs.big.ids[a.txs.big.first] -= 100
	h.iso.lastID--
	require.ErrorContains(t, h.checkCommitInvariants(b), "above the 3 handed out")
	h.iso.lastID++
	require.NoError(t, h.checkCommitInvariants(b))
}

// The non-quiescent check skips what concurrent commits may make
// disagree for a moment: a series in its stripe but not yet in the ref
// table.
func TestHeadCheckInvariantsConcurrent(t *testing.T) {
	h := invariantsHead(t)
	lset := labels.FromStrings("__name__", "new")
	s := newMemSeries(100, lset)
	h.series.getOrSet(lset.Hash(), lset, func() *memSeries { return s })
	h.series.refs.delete(s, 100) // as if getOrSet had not published it yet
	require.NoError(t, h.checkInvariants(false))
	require.ErrorContains(t, h.checkInvariants(true), "is in stripe")
	h.series.refs.set(s)
	h.postings.Add(100, lset)
	h.numSeries.Add(1)
	require.NoError(t, h.checkInvariants(true))
}

func TestAssertInvariantsPanics(t *testing.T) {
	if !invariantsEnabled {
		t.Skip("the asserts are empty without -tags invariants")
	}
	h := invariantsHead(t)
	h.iso.inflight++
	require.PanicsWithValue(t,
		"tsdb: invariant violated after test: isolation: 0 commits listed, 1 counted in flight",
		func() { h.assertInvariants("test", false) })
	h.iso.inflight--
	h.assertInvariants("test", true)
}

// Under the invariants tag the head's locks check their order: a series
// lock held while a stripe is locked (the wrong way round) panics.
func TestHeadLockOrderChecked(t *testing.T) {
	if !lockorder.Enabled {
		t.Skip("the lock order is checked only with -tags invariants")
	}
	h := invariantsHead(t)
	lset := labels.FromStrings("__name__", "a")
	s := h.series.getByHash(lset.Hash(), lset)
	// The message names both locks and the order; the ranks and the full
	// order change as locks are added, so only their names are checked.
	msg := func() (msg any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		defer func() { msg = recover() }()
		h.series.getByHash(lset.Hash(), lset)
		return nil
	}()
	require.IsType(t, "", msg, "taking a stripe lock under a series lock did not panic")
	require.Regexp(t, `^lockorder: seriesStripe\.mu \(rank \d+\) taken while holding memSeries\.mu \(rank \d+\) \(held: memSeries\.mu\): the order is .*seriesStripe\.mu < .*memSeries\.mu`, msg)
	// The right way round is fine.
	st := &h.series.stripes[lset.Hash()&h.series.mask]
	st.mu.RLock()
	require.Same(t, s, st.lookupLocked(lset.Hash(), lset))
	s.mu.Lock()
	total := s.total
	s.mu.Unlock()
	st.mu.RUnlock()
	require.NotZero(t, total)
}
