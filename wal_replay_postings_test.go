package tsdb

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestReplayIndexesSeriesInRefOrder: the WAL holds Series records out of
// ref order (series are created at Append and logged at Commit, so
// concurrent appenders commit them in any order); replay must still add
// them to the postings without copying a list to insert below its end,
// which made Open quadratic in the series of a label value, and every
// series must be found by its labels afterwards.
func TestReplayIndexesSeriesInRefOrder(t *testing.T) {
	fsys := vfs.NewMemFS()
	opts := DefaultOptions()
	opts.FS = fsys
	db, err := Open("data", nil, nil, opts)
	require.NoError(t, err)
	const apps, per = 8, 50
	var open []Appender
	for a := range apps {
		app := db.Appender(ctx)
		for i := range per {
			_, err := app.Append(0, labels.FromStrings(labels.MetricName, "m", "a", fmt.Sprint(a), "i", fmt.Sprint(i)), 1000, 1)
			require.NoError(t, err)
		}
		open = append(open, app)
	}
	for a := apps - 1; a >= 0; a-- { // the newest refs are logged first
		require.NoError(t, open[a].Commit())
	}
	require.NoError(t, db.Close())

	db, err = Open("data", nil, nil, opts)
	require.NoError(t, err)
	defer db.Close()
	require.Zero(t, db.head.postings.Copies(), "lists copied during replay")
	q, err := db.Querier(0, 2000)
	require.NoError(t, err)
	defer q.Close()
	got := querySamples(t, q, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "m"))
	require.Len(t, got, apps*per)
	for a := range apps {
		got := querySamples(t, q, labels.MustNewMatcher(labels.MatchEqual, "a", fmt.Sprint(a)))
		require.Len(t, got, per, "appender %d's series", a)
	}
}
