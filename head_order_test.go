package tsdb

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// TestSortSeriesModel sorts random subsets of head series, some ranked by
// an order built earlier and some created since, and compares with a sort
// by labels.
func TestSortSeriesModel(t *testing.T) {
	db, _ := openTestDB(t, nil)
	h := db.head
	rng := rand.New(rand.NewPCG(3, 5))
	var all []*memSeries
	create := func(n int) {
		app := db.Appender(ctx)
		for range n {
			l := labels.FromStrings(labels.MetricName, fmt.Sprintf("m%d", rng.IntN(20)), "i", fmt.Sprint(rng.IntN(1000)), "x", fmt.Sprint(rng.Uint64()))
			ref, err := app.Append(0, l, 1, 1)
			require.NoError(t, err)
			all = append(all, h.series.getByRef(ref))
		}
		require.NoError(t, app.Commit())
	}
	for round := range 40 {
		create(50 + rng.IntN(200))
		if round%5 == 0 {
			h.buildOrder()
		}
		for range 10 {
			// A subset in ref order, as the postings give it.
			var sub []*memSeries
			share := rng.IntN(10) + 1
			for _, s := range all {
				if rng.IntN(share) == 0 {
					sub = append(sub, s)
				}
			}
			want := slices.Clone(sub)
			slices.SortFunc(want, compareSeriesLabels)
			h.sortSeries(sub)
			require.Equal(t, len(want), len(sub))
			for i := range want {
				require.Same(t, want[i], sub[i], "round %d: position %d of %d", round, i, len(sub))
			}
		}
	}
}

// TestSelectOrderAcrossBuilds: Select's head series come sorted by labels
// before any order is built, with an order covering some of them, and
// after the order loop rebuilt it.
func TestSelectOrderAcrossBuilds(t *testing.T) {
	db, _ := openTestDB(t, nil)
	add := func(from, to int) {
		app := db.Appender(ctx)
		for i := from; i < to; i++ {
			// Labels in the reverse order of refs.
			_, err := app.Append(0, labels.FromStrings(labels.MetricName, "m", "k", fmt.Sprintf("%06d", 1_000_000-i)), 1, 1)
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	check := func(stage string) {
		q, err := db.Querier(0, 10)
		require.NoError(t, err)
		defer q.Close()
		ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "m"))
		var prev labels.Labels
		n := 0
		for ss.Next() {
			l := ss.At().Labels()
			if n > 0 {
				require.Negative(t, labels.Compare(prev, l), "%s: %s after %s", stage, l, prev)
			}
			prev, n = l, n+1
		}
		require.NoError(t, ss.Err())
		require.Positive(t, n)
	}
	add(0, 500)
	check("no order")
	db.head.buildOrder()
	add(500, 600)
	check("order of the first 500")
	db.head.requestOrder()
	require.Eventually(t, func() bool { return len(db.head.order.Load().rank) > 600 },
		time.Minute, time.Millisecond, "the order loop rebuilds the order")
	check("order of all")
}
