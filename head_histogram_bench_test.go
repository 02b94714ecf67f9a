package tsdb

import (
	"fmt"
	"math"
	"testing"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	"github.com/isotsdb/tsdb/labels"
)

// benchHistogramSeries is the histogram workload of the benchmarks: n
// series of schema-3 counter histograms with about 20 populated buckets,
// whose counts grow every scrape; hs[r%len(hs)][i] is series i's sample in
// round r (the sequences are generated once, not in the timed loop).
func benchHistogramSeries(n, rounds int) ([]labels.Labels, [][]*histogram.Histogram) {
	lsets := make([]labels.Labels, n)
	hs := make([][]*histogram.Histogram, rounds)
	for r := range hs {
		hs[r] = make([]*histogram.Histogram, n)
	}
	for i := range lsets {
		lsets[i] = labels.FromStrings("__name__", "bench_seconds", "instance", fmt.Sprintf("host-%d:9100", i/100), "i", fmt.Sprint(i))
		g := histogramtest.NewGen(uint64(i), false, false)
		g.ResetPct, g.SchemaPct, g.StalePct, g.HintPct, g.NewBucketPct = 0, 0, 0, 0, 1
		for r := range rounds {
			_, hs[r][i] = g.Next()
		}
	}
	return lsets, hs
}

// benchHistogramScrapes appends n histogram samples to db as scrapes of
// 2,000 series, one commit per target of 100 series, 15 s apart.
func benchHistogramScrapes(b *testing.B, db *DB, lsets []labels.Labels, hs [][]*histogram.Histogram, n int) int {
	refs := make([]SeriesRef, len(lsets))
	samples := 0
	for round := 0; samples < n; round++ {
		ts := int64(round) * 15000
		for start := 0; start < len(lsets) && samples < n; start += 100 {
			app := db.Appender(ctx)
			for i := start; i < min(start+100, len(lsets)); i++ {
				ref, err := app.AppendHistogram(refs[i], lsets[i], ts, hs[round%len(hs)][i], nil)
				if err != nil {
					b.Fatal(err)
				}
				refs[i] = ref
				samples++
			}
			if err := app.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	return samples
}

// BenchmarkAppendHistograms commits scrapes of 2,000 native histogram
// series, with and without isolation.
func BenchmarkAppendHistograms(b *testing.B) {
	lsets, hs := benchHistogramSeries(2000, 240)
	for _, iso := range []bool{true, false} {
		b.Run(fmt.Sprintf("isolation=%v", iso), func(b *testing.B) {
			db, _ := openTestDB(b, benchOptions(iso))
			b.ReportAllocs()
			b.ResetTimer()
			n := benchHistogramScrapes(b, db, lsets, hs, b.N)
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkQueryHeadHistograms reads 1 h of 2,000 histogram series from
// the head, reusing one histogram for every sample.
func BenchmarkQueryHeadHistograms(b *testing.B) {
	lsets, hs := benchHistogramSeries(2000, 240)
	for _, iso := range []bool{true, false} {
		b.Run(fmt.Sprintf("isolation=%v", iso), func(b *testing.B) {
			db, _ := openTestDB(b, benchOptions(iso))
			benchHistogramScrapes(b, db, lsets, hs, 2000*240)
			m := labels.MustNewMatcher(labels.MatchEqual, "__name__", "bench_seconds")
			var h *histogram.Histogram
			var it chunks.Iterator
			b.ReportAllocs()
			b.ResetTimer()
			samples := 0
			for range b.N {
				q, err := db.Querier(math.MinInt64, math.MaxInt64)
				if err != nil {
					b.Fatal(err)
				}
				ss := q.Select(ctx, m)
				for ss.Next() {
					it = ss.At().Iterator(it)
					for it.Next() == chunks.ValHistogram {
						_, h = it.AtHistogram(h)
						samples++
					}
				}
				if err := ss.Err(); err != nil {
					b.Fatal(err)
				}
				q.Close()
			}
			b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
