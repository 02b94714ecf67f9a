package cli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	tsdb "github.com/isotsdb/tsdb"
)

// BenchmarkScrape commits one scrape of a 500-series target per op, with
// the WAL on, as the write benchmark does.
func BenchmarkScrape(b *testing.B) {
	for _, iso := range []bool{true, false} {
		name := "isolation=on"
		if !iso {
			name = "isolation=off"
		}
		b.Run(name, func(b *testing.B) {
			sets, err := loadLabelSets(seriesFile, seriesPerTarget)
			require.NoError(b, err)
			tg := newTargets(sets, 1)[0]
			opts := tsdb.DefaultOptions()
			opts.IsolationDisabled = !iso
			db, err := tsdb.Open(b.TempDir(), nil, nil, opts)
			require.NoError(b, err)
			defer func() { require.NoError(b, db.Close()) }()
			ctx := context.Background()
			b.ReportAllocs()
			ts := int64(0)
			for b.Loop() {
				ts += scrapeInterval
				if err := tg.scrape(ctx, db, ts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(tg.series))/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkValueGen measures generating one sample value.
func BenchmarkValueGen(b *testing.B) {
	sets, err := loadLabelSets(seriesFile, seriesPerTarget)
	require.NoError(b, err)
	tg := newTargets(sets, 1)[0]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tg.gens[i].next(tg.rng)
		if i++; i == len(tg.gens) {
			i = 0
		}
	}
}
