package tsdb

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// newTestExemplarStorage returns a storage of n exemplars with metrics
// registered nowhere.
func newTestExemplarStorage(n int64) *exemplarStorage {
	return newExemplarStorage(n, &exemplarMetrics{
		appended:   prometheus.NewCounter(prometheus.CounterOpts{Name: "a"}),
		outOfOrder: prometheus.NewCounter(prometheus.CounterOpts{Name: "o"}),
	})
}

// modelExemplar is an exemplar as the model of the ring keeps it.
type modelExemplar struct {
	series string
	ts     int64
}

// storedExemplars returns what es holds, every series' exemplars in time
// order, flattened in series label order.
func storedExemplars(t *testing.T, es *exemplarStorage) []modelExemplar {
	t.Helper()
	var out []modelExemplar
	sets := [][]*labels.Matcher{{labels.MustNewMatcher(labels.MatchRegexp, "s", ".*")}}
	for _, r := range es.selectVisible(nil, math.MinInt64, math.MaxInt64, sets) {
		for _, e := range r.Exemplars {
			out = append(out, modelExemplar{series: r.SeriesLabels.Get("s"), ts: e.Ts})
		}
	}
	return out
}

// modelView is storedExemplars for the model: the newest n exemplars
// appended, grouped by series in label order, each series in time order.
func modelView(appended []modelExemplar, n int) []modelExemplar {
	if n == 0 || len(appended) == 0 {
		return nil
	}
	kept := slices.Clone(appended[max(0, len(appended)-n):])
	slices.SortStableFunc(kept, func(a, b modelExemplar) int {
		if a.series != b.series {
			return labels.Compare(labels.FromStrings("s", a.series), labels.FromStrings("s", b.series))
		}
		return 0
	})
	return kept
}

// TestExemplarRingWrap: a ring of three keeps the newest three exemplars of
// all series; a series whose exemplars are all overwritten disappears.
func TestExemplarRingWrap(t *testing.T) {
	es := newTestExemplarStorage(3)
	a, b := labels.FromStrings("s", "a"), labels.FromStrings("s", "b")
	add := func(ls labels.Labels, ts int64) {
		t.Helper()
		require.True(t, es.addReplayed(ls, Exemplar{Value: float64(ts), Ts: ts}, 0))
		require.NoError(t, es.checkInvariants(newIsolation()))
	}
	add(a, 1)
	add(b, 2)
	add(a, 3)
	require.Equal(t, []modelExemplar{{"a", 1}, {"a", 3}, {"b", 2}}, storedExemplars(t, es))
	add(a, 4) // overwrites a@1
	require.Equal(t, []modelExemplar{{"a", 3}, {"a", 4}, {"b", 2}}, storedExemplars(t, es))
	add(a, 5) // overwrites b@2, b's last
	require.Equal(t, []modelExemplar{{"a", 3}, {"a", 4}, {"a", 5}}, storedExemplars(t, es))
	n, series, oldest := es.stats()
	require.Equal(t, 3, n)
	require.Equal(t, 1, series)
	require.Equal(t, int64(3), oldest)
	add(b, 6)
	add(b, 7)
	add(b, 8) // a's last overwritten
	require.Equal(t, []modelExemplar{{"b", 6}, {"b", 7}, {"b", 8}}, storedExemplars(t, es))
	_, series, _ = es.stats()
	require.Equal(t, 1, series)
	// A ring of one: every append overwrites, also the series' own only
	// exemplar.
	es.resize(1)
	add(b, 9)
	add(a, 10)
	require.Equal(t, []modelExemplar{{"a", 10}}, storedExemplars(t, es))
}

// TestExemplarResize: growing keeps everything, shrinking keeps the newest,
// 0 turns exemplars off and drops them all; appends then continue with the
// new size.
func TestExemplarResize(t *testing.T) {
	es := newTestExemplarStorage(4)
	for i := range 6 {
		require.True(t, es.addReplayed(labels.FromStrings("s", fmt.Sprint(i%2)), Exemplar{Ts: int64(i), HasTs: true}, 0))
	}
	require.Equal(t, []modelExemplar{{"0", 2}, {"0", 4}, {"1", 3}, {"1", 5}}, storedExemplars(t, es))
	es.resize(10)
	require.NoError(t, es.checkInvariants(newIsolation()))
	require.Equal(t, []modelExemplar{{"0", 2}, {"0", 4}, {"1", 3}, {"1", 5}}, storedExemplars(t, es))
	require.True(t, es.addReplayed(labels.FromStrings("s", "0"), Exemplar{Ts: 6, HasTs: true}, 0))
	es.resize(2)
	require.NoError(t, es.checkInvariants(newIsolation()))
	require.Equal(t, []modelExemplar{{"0", 6}, {"1", 5}}, storedExemplars(t, es))
	es.resize(0)
	require.NoError(t, es.checkInvariants(newIsolation()))
	require.False(t, es.enabled())
	require.Empty(t, storedExemplars(t, es))
	require.False(t, es.addReplayed(labels.FromStrings("s", "0"), Exemplar{Ts: 7, HasTs: true}, 0))
	require.ErrorIs(t, es.appendable(labels.FromStrings("s", "0"), 0, &Exemplar{Ts: 7, HasTs: true}, 0), ErrExemplarsDisabled)
	es.resize(-5)
	require.False(t, es.enabled())
	es.resize(1)
	require.True(t, es.addReplayed(labels.FromStrings("s", "0"), Exemplar{Ts: 8, HasTs: true}, 0))
	require.Equal(t, []modelExemplar{{"0", 8}}, storedExemplars(t, es))
	// An absurd limit costs nothing until exemplars come.
	es.resize(math.MaxInt64)
	require.Equal(t, int64(math.MaxInt32), es.size.Load())
	require.LessOrEqual(t, cap(es.ring), 16)
	require.NoError(t, es.checkInvariants(newIsolation()))
}

// TestExemplarRingModel appends random exemplars to random series and
// resizes the ring at random, comparing with a model (the newest n of all
// exemplars appended) and checking the invariants after every step.
func TestExemplarRingModel(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			size := 1 + r.IntN(20)
			es := newTestExemplarStorage(int64(size))
			var appended []modelExemplar
			last := map[string]int64{}
			for step := range 400 {
				if r.IntN(40) == 0 {
					// appended holds at most the old size: what the ring
					// held. It keeps the newest of them.
					size = r.IntN(25)
					es.resize(int64(size))
					appended = appended[max(0, len(appended)-size):]
				} else {
					s := fmt.Sprint(r.IntN(6))
					ts := last[s] + 1 + int64(r.IntN(3))
					ok := es.addReplayed(labels.FromStrings("s", s), Exemplar{Labels: labels.FromStrings("trace_id", fmt.Sprint(step)), Ts: ts, HasTs: true}, 0)
					require.Equal(t, size > 0, ok, "step %d", step)
					if ok {
						// Stored exemplars of a series that was dropped
						// entirely no longer bound its next one.
						appended = append(appended, modelExemplar{s, ts})
						appended = appended[max(0, len(appended)-size):]
						last[s] = ts
					}
				}
				require.NoError(t, es.checkInvariants(newIsolation()), "step %d", step)
				require.Equal(t, modelView(appended, size), storedExemplars(t, es), "step %d (seed %d)", step, seed)
			}
		})
	}
}

// TestExemplarOutOfOrderModel is TestExemplarRingModel with an
// out-of-order window: exemplars come up to window+5 ms older than their
// series' newest, or repeat a stored one. The model accepts an exemplar
// iff its series has none stored, or it is not a repeat of a stored one
// and no more than window-1 ms older than the series' newest; the ring
// holds the newest (in append order) of those accepted, each series in
// time order, and keeps its invariants as overwriting unlinks exemplars
// from the middle of their lists.
func TestExemplarOutOfOrderModel(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			size := 1 + r.IntN(20)
			window := int64(r.IntN(12))
			es := newTestExemplarStorage(int64(size))
			var appended []modelExemplar
			ts := map[string]int64{} // a clock per series
			for step := range 500 {
				if r.IntN(50) == 0 {
					size = r.IntN(25)
					es.resize(int64(size))
					appended = appended[max(0, len(appended)-size):]
					require.NoError(t, es.checkInvariants(newIsolation()), "step %d", step)
					continue
				}
				s := fmt.Sprint(r.IntN(4))
				ts[s] += int64(r.IntN(3))
				at := ts[s] - int64(r.IntN(int(window)+6))
				// Equal times make equal exemplars: a repeat is a duplicate.
				e := Exemplar{Labels: labels.FromStrings("trace_id", fmt.Sprint(at)), Ts: at, HasTs: true}
				want := size > 0
				newest, stored, dup := int64(math.MinInt64), false, false
				for _, m := range appended {
					if m.series == s {
						stored, newest, dup = true, max(newest, m.ts), dup || m.ts == at
					}
				}
				if stored && (dup || at < newest && at <= newest-window) {
					want = false
				}
				ok := es.addReplayed(labels.FromStrings("s", s), e, window)
				require.Equal(t, want, ok, "step %d: exemplar at %d, series %s newest %d (stored %v, repeat %v), window %d", step, at, s, newest, stored, dup, window)
				if ok {
					appended = append(appended, modelExemplar{s, at})
					appended = appended[max(0, len(appended)-size):]
				}
				require.NoError(t, es.checkInvariants(newIsolation()), "step %d", step)
				want2 := modelView(appended, size)
				slices.SortStableFunc(want2, func(a, b modelExemplar) int {
					if c := labels.Compare(labels.FromStrings("s", a.series), labels.FromStrings("s", b.series)); c != 0 {
						return c
					}
					return cmp.Compare(a.ts, b.ts)
				})
				require.Equal(t, want2, storedExemplars(t, es), "step %d (seed %d)", step, seed)
			}
		})
	}
}
