package tsdb

import (
	"fmt"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// scrapeValue is a deterministic value for series i in round r, mixing
// counters, gauges, constants and special values.
func scrapeValue(i, r int) float64 {
	switch i % 7 {
	case 0:
		return 42 // constant
	case 1:
		return float64(r * (i%13 + 1)) // counter
	case 2:
		return math.Sin(float64(r+i)) * 1e3 // gauge
	case 3:
		if r%50 == 49 {
			return math.Float64frombits(0x7ff0000000000002) // staleness marker
		}
		return float64(r) / 3
	default:
		return float64(i) + float64(r)*0.25
	}
}

// ingestScrapes writes rounds scrapes of lsets, one commit per target of
// 500 series, 15 s apart.
func ingestScrapes(t testing.TB, db *DB, lsets []labels.Labels, rounds int) {
	t.Helper()
	refs := make([]SeriesRef, len(lsets))
	for r := 0; r < rounds; r++ {
		ts := int64(r) * 15000
		for start := 0; start < len(lsets); start += 500 {
			app := db.Appender(ctx)
			for i := start; i < min(start+500, len(lsets)); i++ {
				ref, err := app.Append(refs[i], lsets[i], ts, scrapeValue(i, r))
				if err != nil {
					t.Fatal(err)
				}
				refs[i] = ref
			}
			if err := app.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// requireSameData compares every series and sample of two DBs bit by bit
// and returns the number of samples compared.
func requireSameData(t testing.TB, want, got *DB) int {
	t.Helper()
	qw, err := want.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer qw.Close()
	qg, err := got.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer qg.Close()
	all := labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")
	sw, sg := qw.Select(ctx, all), qg.Select(ctx, all)
	n, samples := 0, 0
	for sw.Next() {
		require.True(t, sg.Next(), "series %s missing", sw.At().Labels())
		require.Equal(t, sw.At().Labels().String(), sg.At().Labels().String())
		iw, ig := sw.At().Iterator(nil), sg.At().Iterator(nil)
		for iw.Next() != chunks.ValNone {
			require.True(t, ig.Next() != chunks.ValNone, "sample missing in %s", sw.At().Labels())
			tw, vw := iw.At()
			tg, vg := ig.At()
			samples++
			if tw != tg || math.Float64bits(vw) != math.Float64bits(vg) {
				t.Fatalf("%s: got (%d, %x), want (%d, %x)", sw.At().Labels(), tg, math.Float64bits(vg), tw, math.Float64bits(vw))
			}
		}
		require.False(t, ig.Next() != chunks.ValNone, "extra samples in %s", sw.At().Labels())
		require.NoError(t, iw.Err())
		require.NoError(t, ig.Err())
		n++
	}
	require.False(t, sg.Next(), "extra series")
	require.NoError(t, sw.Err())
	require.NoError(t, sg.Err())
	require.Positive(t, n)
	return samples
}

// TestWALRoundTrip: 20kseries × 120 rounds,
// Close, Open: every label set and sample comes back identical; with and
// without snappy.
func TestWALRoundTrip(t *testing.T) {
	n := 20000
	if raceEnabled {
		n = 2000 // the full corpus runs in the non-race pass of scripts/test
	}
	lsets := loadSeries(t, n)
	for _, snappy := range []bool{false, true} {
		t.Run(fmt.Sprintf("snappy=%v", snappy), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			opts := func() *Options {
				o := DefaultOptions()
				o.FS, o.WALCompression = fsys, snappy
				o.WALSegmentSize = 8 << 20 // several segments
				return o
			}
			db, err := Open("data", nil, nil, opts())
			require.NoError(t, err)
			ingestScrapes(t, db, lsets, 120)

			// The model: the same data, in a DB without a WAL.
			mo := DefaultOptions()
			mo.FS, mo.NoWAL = vfs.NewMemFS(), true
			model, err := Open("model", nil, nil, mo)
			require.NoError(t, err)
			defer model.Close()
			ingestScrapes(t, model, lsets, 120)
			require.NoError(t, db.Close())

			reg := prometheus.NewRegistry()
			db2, err := Open("data", nil, reg, opts())
			require.NoError(t, err)
			defer db2.Close()
			require.Equal(t, int64(len(lsets)), db2.Head().NumSeries())
			require.Equal(t, len(lsets)*120, requireSameData(t, model, db2))
			require.Positive(t, gauge(t, reg, "tsdb_wal_replay_duration_seconds"))

			// Refs survive: appending by the old refs' labels still works
			// and the WAL keeps growing from where it was.
			app := db2.Appender(ctx)
			_, err = app.Append(0, lsets[0], 120*15000, 1)
			require.NoError(t, err)
			require.NoError(t, app.Commit())
		})
	}
}
