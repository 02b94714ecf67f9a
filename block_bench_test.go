package tsdb

import (
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// BenchmarkQueryBlocks reads every sample of 2,000 series written as 6 h
// of 15 s scrapes into 2 h blocks cut as they go (three blocks and the
// head, each series in all four), over the whole range: the blocks6h
// read of prom/bench, smaller.
func BenchmarkQueryBlocks(b *testing.B) {
	lsets := loadSeries(b, 2000)
	o := DefaultOptions()
	o.FS = vfs.OS()
	o.MinBlockDuration = 2 * time.Hour
	o.MaxBlockDuration = o.MinBlockDuration
	db, err := Open(b.TempDir(), nil, nil, o)
	require.NoError(b, err)
	defer db.Close()
	refs := make([]SeriesRef, len(lsets))
	const rounds = 6 * 3600 / 15
	for round := 0; round < rounds; round++ {
		app := db.Appender(ctx)
		for i, l := range lsets {
			ref, err := app.Append(refs[i], l, int64(round)*15000, scrapeValue(i, round))
			require.NoError(b, err)
			refs[i] = ref
		}
		require.NoError(b, app.Commit())
		if round%240 == 0 {
			require.NoError(b, db.Compact(ctx))
		}
	}
	require.NoError(b, db.Compact(ctx))
	require.GreaterOrEqual(b, len(db.Blocks()), 2)
	m := labels.MustNewMatcher(labels.MatchEqual, "job", "bench")
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	samples, sum := 0, 0.0
	var it chunks.Iterator
	for n := 0; n < b.N; n++ {
		q, err := db.Querier(math.MinInt64, math.MaxInt64)
		require.NoError(b, err)
		ss := q.Select(ctx, m)
		for ss.Next() {
			it = ss.At().Iterator(it)
			for it.Next() == chunks.ValFloat {
				_, v := it.At()
				sum += v
				samples++
			}
			if err := it.Err(); err != nil {
				b.Fatal(err)
			}
		}
		require.NoError(b, ss.Err())
		require.NoError(b, q.Close())
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(samples), "cpu-ns/sample")
	require.Equal(b, len(lsets)*rounds*b.N, samples)
	benchSink += sum
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

// cpuTime returns the process's CPU time (user and system): on a shared
// machine a steadier measure of work than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSink keeps the benchmarks' reads from being optimised away.
var benchSink float64
