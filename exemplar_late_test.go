package tsdb

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestExemplarOutOfOrderWindow: exemplars older than their series' newest
// are ErrOutOfOrderExemplar with the out-of-order window off; with it on
// (Options.OutOfOrderTimeWindow or SetOutOfOrderTimeWindow), as in
// Prometheus, those less than the window older are stored at their place
// in time, older ones are still rejected, and a repeat of a stored one is
// ErrDuplicateExemplar. A querier made before the commit of a late
// exemplar does not see it; after a restart the exemplars come back in
// the same order.
func TestExemplarOutOfOrderWindow(t *testing.T) {
	const minute = int64(60_000)
	fsys := vfs.NewMemFS()
	db, err := Open("data", nil, nil, exemplarOpts(fsys, 100))
	require.NoError(t, err)
	ls := labels.FromStrings("__name__", "req_total")
	commit := func(es ...Exemplar) []error {
		t.Helper()
		app := db.Appender(context.Background())
		ref, err := app.Append(0, ls, 0, 0)
		if errors.Is(err, ErrDuplicateSampleForTimestamp) || err == nil {
			err = nil
		}
		require.NoError(t, err)
		var errs []error
		for _, e := range es {
			_, err := app.AppendExemplar(ref, ls, e)
			errs = append(errs, err)
		}
		require.NoError(t, app.Commit())
		return errs
	}
	require.Equal(t, []error{nil}, commit(ex("a", 1, 10*minute)))
	errs := commit(ex("b", 1, 9*minute))
	require.ErrorIs(t, errs[0], ErrOutOfOrderExemplar, "window off")

	require.NoError(t, db.SetOutOfOrderTimeWindow(5*time.Minute))
	errs = commit(ex("b", 2, 9*minute), ex("c", 3, 6*minute), ex("d", 4, 5*minute), ex("e", 5, 11*minute))
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.ErrorIs(t, errs[2], ErrOutOfOrderExemplar, "5 minutes older than the newest: outside the window")
	require.NoError(t, errs[3])
	want := []string{`{__name__="req_total"}: c@360000=3 b@540000=2 a@600000=1 e@660000=5`}
	require.Equal(t, want, exemplarTraces(allExemplars(t, db)))

	// A repeat of a stored exemplar, not the newest: a duplicate, at
	// Commit (found in the storage) as Prometheus drops it.
	q, err := db.ExemplarQuerier(context.Background())
	require.NoError(t, err)
	errs = commit(ex("b", 2, 9*minute), ex("f", 6, 8*minute))
	require.NoError(t, errs[0], "the duplicate is found at Commit")
	require.NoError(t, errs[1])
	want = []string{`{__name__="req_total"}: c@360000=3 f@480000=6 b@540000=2 a@600000=1 e@660000=5`}
	require.Equal(t, want, exemplarTraces(allExemplars(t, db)))
	require.Equal(t, []string{`{__name__="req_total"}: c@360000=3 b@540000=2 a@600000=1 e@660000=5`}, exemplarTraces(selectAll(t, q)),
		"a querier made before the commit does not see its late exemplar")

	require.NoError(t, db.SetOutOfOrderTimeWindow(0))
	errs = commit(ex("g", 7, 10*minute+30_000))
	require.ErrorIs(t, errs[0], ErrOutOfOrderExemplar, "window off again")
	require.NoError(t, db.Close())

	o := exemplarOpts(fsys, 100)
	o.OutOfOrderTimeWindow = 5 * time.Minute
	db, err = Open("data", nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.Equal(t, want, exemplarTraces(allExemplars(t, db)), "replayed with the window on")
}
