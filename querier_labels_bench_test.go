package tsdb

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// labelBenchDB returns a DB whose head holds the 20,000 series of
// testdata/20kseries.json scraped every 15 s for two hours, every commit
// complete, and the ranges the label benchmarks query: all of it and its
// last hour.
func labelBenchDB(b *testing.B) (*DB, []struct {
	name       string
	mint, maxt int64
}) {
	lsets := loadSeries(b, 20000)
	o := DefaultOptions()
	o.NoWAL, o.FS = true, vfs.NewMemFS()
	db, err := Open("data", nil, nil, o)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, db.Close()) })
	refs := make([]SeriesRef, len(lsets))
	const rounds = 2 * 3600 / 15
	for r := range rounds {
		ts := int64(r) * 15000
		for start := 0; start < len(lsets); start += 500 {
			app := db.Appender(ctx)
			for i := start; i < start+500; i++ {
				ref, err := app.Append(refs[i], lsets[i], ts, float64(r))
				require.NoError(b, err)
				refs[i] = ref
			}
			require.NoError(b, app.Commit())
		}
	}
	maxt := int64(rounds-1) * 15000
	return db, []struct {
		name       string
		mint, maxt int64
	}{
		{"all", 0, maxt},
		{"last1h", maxt - time.Hour.Milliseconds(), maxt},
	}
}

// BenchmarkLabelValues: LabelValues without matchers on a fresh querier,
// for the label with the most values (pwtdcjrs, 792) and __name__ (463).
func BenchmarkLabelValues(b *testing.B) {
	db, ranges := labelBenchDB(b)
	for _, name := range []string{"pwtdcjrs", labels.MetricName} {
		for _, r := range ranges {
			b.Run(fmt.Sprintf("name=%s/range=%s", name, r.name), func(b *testing.B) {
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					q, err := db.Querier(r.mint, r.maxt)
					require.NoError(b, err)
					vs, err := q.LabelValues(ctx, name)
					require.NoError(b, err)
					require.NoError(b, q.Close())
					n = len(vs)
				}
				b.ReportMetric(float64(n), "values")
			})
		}
	}
}

// BenchmarkLabelNames: LabelNames without matchers on a fresh querier.
func BenchmarkLabelNames(b *testing.B) {
	db, ranges := labelBenchDB(b)
	for _, r := range ranges {
		b.Run("range="+r.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				q, err := db.Querier(r.mint, r.maxt)
				require.NoError(b, err)
				ns, err := q.LabelNames(ctx)
				require.NoError(b, err)
				require.NoError(b, q.Close())
				n = len(ns)
			}
			b.ReportMetric(float64(n), "names")
		})
	}
}
