package tsdb

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
)

// loadSeries reads up to n label sets from testdata/20kseries.json and
// adds job and instance labels that spread them over targets of 500.
func loadSeries(tb testing.TB, n int) []labels.Labels {
	tb.Helper()
	f, err := os.Open("testdata/20kseries.json")
	require.NoError(tb, err)
	defer f.Close()
	var out []labels.Labels
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && len(out) < n {
		var m map[string]string
		require.NoError(tb, json.Unmarshal(sc.Bytes(), &m))
		m["job"] = "bench"
		m["instance"] = fmt.Sprintf("host-%d:9100", len(out)/500)
		out = append(out, labels.FromMap(m))
	}
	require.NoError(tb, sc.Err())
	return out
}

// benchScrapes appends b.N samples to db as scrapes: one commit per target
// of 500 series, 15 s apart, and reports samples/s.
func benchScrapes(b *testing.B, db *DB, lsets []labels.Labels) {
	refs := make([]SeriesRef, len(lsets))
	b.ReportAllocs()
	b.ResetTimer()
	samples := 0
	for round := 0; samples < b.N; round++ {
		ts := int64(round) * 15000
		for start := 0; start < len(lsets) && samples < b.N; start += 500 {
			app := db.Appender(ctx)
			for i := start; i < min(start+500, len(lsets)); i++ {
				ref, err := app.Append(refs[i], lsets[i], ts, scrapeValue(i, round))
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
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

func benchOptions(isolation bool) *Options {
	o := DefaultOptions()
	o.IsolationDisabled = !isolation
	return o
}

// BenchmarkAppendScrape commits one transaction per target of 500 series
// per 15 s scrape, as a Prometheus server does.
func BenchmarkAppendScrape(b *testing.B) {
	lsets := loadSeries(b, 20000)
	for _, iso := range []bool{true, false} {
		b.Run(fmt.Sprintf("isolation=%v", iso), func(b *testing.B) {
			db, _ := openTestDB(b, benchOptions(iso))
			benchScrapes(b, db, lsets)
		})
	}
}

// BenchmarkAppendSmallConcurrent has every goroutine commit transactions
// of 1 to 10 samples at once: the worst case for isolation bookkeeping.
func BenchmarkAppendSmallConcurrent(b *testing.B) {
	for _, iso := range []bool{true, false} {
		b.Run(fmt.Sprintf("isolation=%v", iso), func(b *testing.B) {
			db, _ := openTestDB(b, benchOptions(iso))
			var worker atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				w := worker.Add(1)
				lsets := make([]labels.Labels, 10)
				refs := make([]SeriesRef, 10)
				for i := range lsets {
					lsets[i] = labels.FromStrings(labels.MetricName, "small", "w", fmt.Sprint(w), "i", fmt.Sprint(i))
				}
				ts := int64(0)
				for n := 0; pb.Next(); n++ {
					ts++
					app := db.Appender(ctx)
					for i := 0; i <= n%10; i++ {
						ref, err := app.Append(refs[i], lsets[i], ts, float64(ts))
						if err != nil {
							b.Error(err)
							return
						}
						refs[i] = ref
					}
					if err := app.Commit(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkQueryHead selects one metric's series and reads all samples.
func BenchmarkQueryHead(b *testing.B) {
	lsets := loadSeries(b, 20000)
	for _, iso := range []bool{true, false} {
		b.Run(fmt.Sprintf("isolation=%v", iso), func(b *testing.B) {
			db, _ := openTestDB(b, benchOptions(iso))
			refs := make([]SeriesRef, len(lsets))
			for round := 0; round < 240; round++ {
				app := db.Appender(ctx)
				for i, l := range lsets {
					ref, err := app.Append(refs[i], l, int64(round)*15000, float64(round))
					require.NoError(b, err)
					refs[i] = ref
				}
				require.NoError(b, app.Commit())
			}
			benchReadHosts(b, db)
		})
	}
}

// benchReadHosts reads every sample of three targets' series b.N times,
// each through a new Querier, reports samples/s and returns the number of
// samples read.
func benchReadHosts(b *testing.B, db *DB) int {
	m := labels.MustNewMatcher(labels.MatchRegexp, "instance", "host-(1|2|3):9100")
	b.ReportAllocs()
	b.ResetTimer()
	samples := 0
	for n := 0; n < b.N; n++ {
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(b, err)
		ss := q.Select(ctx, m)
		var it chunks.Iterator
		for ss.Next() {
			it = ss.At().Iterator(it)
			for it.Next() != chunks.ValNone {
				samples++
			}
		}
		require.NoError(b, ss.Err())
		require.NoError(b, q.Close())
	}
	b.StopTimer()
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
	return samples
}

// BenchmarkQuerierCreate measures taking a read snapshot with many
// Appenders open (and holding buffered samples): it must not depend on
// their number.
func BenchmarkQuerierCreate(b *testing.B) {
	for _, open := range []int{0, 100, 10000} {
		b.Run(fmt.Sprintf("openAppenders=%d", open), func(b *testing.B) {
			db, _ := openTestDB(b, nil)
			apps := make([]Appender, open)
			for i := range apps {
				apps[i] = db.Appender(ctx)
				_, err := apps[i].Append(0, seriesLabels(i%100), 1, 1)
				require.NoError(b, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				q, err := db.Querier(0, 100)
				if err != nil {
					b.Fatal(err)
				}
				q.Close()
			}
			b.StopTimer()
			for _, a := range apps {
				require.NoError(b, a.Rollback())
			}
			runtime.KeepAlive(apps)
		})
	}
}
