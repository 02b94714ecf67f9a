package cli

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
)

// TestDumpStaleMarkers dumps stale markers that isotsdb wrote itself, from
// the head (WAL replay): a float marker prints as "stale", a measured NaN
// as "NaN", and the float marker appended to a histogram series (which the
// head stores as a histogram marker) as "stale" too; --stale-as-nan gives
// promtool's lines.
func TestDumpStaleMarkers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := tsdb.Open(dir, nil, nil, nil)
	require.NoError(t, err)
	app := db.Appender(context.Background())
	f, hs := labels.FromStrings("__name__", "f"), labels.FromStrings("__name__", "h")
	for _, s := range []struct {
		t int64
		v float64
	}{{1000, 1}, {2000, math.NaN()}, {3000, value.StaleMarker()}, {4000, 2}} {
		_, err := app.Append(0, f, s.t, s.v)
		require.NoError(t, err)
	}
	h := &histogram.Histogram{Count: 3, Sum: 4.5, Schema: 0, PositiveSpans: []histogram.Span{{Offset: 0, Length: 1}}, PositiveBuckets: []int64{3}}
	_, err = app.AppendHistogram(0, hs, 1000, h, nil)
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	app = db.Appender(context.Background())
	_, err = app.Append(0, hs, 2000, value.StaleMarker())
	require.NoError(t, err)
	require.NoError(t, app.Commit())
	require.NoError(t, db.Close())

	code, out, stderr := runCLI(t, "dump", dir)
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, `{__name__="f"} 1 1000
{__name__="f"} NaN 2000
{__name__="f"} stale 3000
{__name__="f"} 2 4000
{__name__="h"} {count:3, sum:4.5, (0.5,1]:3} 1000
{__name__="h"} stale 2000
`, out)

	code, out, stderr = runCLI(t, "dump", dir, "--stale-as-nan")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, `{__name__="f"} 1 1000
{__name__="f"} NaN 2000
{__name__="f"} NaN 3000
{__name__="f"} 2 4000
{__name__="h"} {count:3, sum:4.5, (0.5,1]:3} 1000
{__name__="h"} {count:0, sum:NaN} 2000
`, out)
}
