package main

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/stretchr/testify/require"
)

// The go test -bench wrappers run single phases of the workload against
// each store, for profiling (-cpuprofile, -memprofile) one phase at a time.
// The comparison table itself comes from the program (go run ./bench).

var (
	corpusOnce sync.Once
	corpusData *corpus
	corpusErr  error
)

func benchCorpus(b *testing.B) *corpus {
	corpusOnce.Do(func() { corpusData, corpusErr = loadCorpus("../../testdata/20kseries.json", 0) })
	require.NoError(b, corpusErr)
	return corpusData
}

func eachConfig(b *testing.B, fn func(b *testing.B, cfg config)) {
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		for _, iso := range []bool{true, false} {
			cfg := config{k, iso}
			b.Run(fmt.Sprintf("store=%s/isolation=%v", k, iso), func(b *testing.B) { fn(b, cfg) })
		}
	}
}

func benchStore(b *testing.B, cfg config, series [][]string) store {
	s, err := openStore(cfg.kind, storeConfig{dir: b.TempDir(), isolation: cfg.isolation, series: series})
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, s.close()) })
	return s
}

// BenchmarkIngest measures one scrape round of every target (20,000
// samples in 40 commits, 2 writers) per iteration.
func BenchmarkIngest(b *testing.B) {
	c := benchCorpus(b)
	eachConfig(b, func(b *testing.B, cfg config) {
		s := benchStore(b, cfg, c.series)
		refs := make([]uint64, len(c.series))
		b.ReportAllocs()
		r := 0
		for b.Loop() {
			_, err := ingest(s, c, refs, r, r+1)
			require.NoError(b, err)
			r++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(r*len(c.series)), "ns/sample")
	})
}

// BenchmarkQuery measures each query of the read phase over 240 rounds.
func BenchmarkQuery(b *testing.B) {
	c := benchCorpus(b)
	forEachIngested(b, c, func(b *testing.B, s store) {
		for _, q := range queries(c) {
			b.Run("query="+q.name, func(b *testing.B) {
				b.ReportAllocs()
				samples := 0
				for b.Loop() {
					_, n, err := s.query(q, baseTime, maxTime(240, c.targets()))
					require.NoError(b, err)
					samples += n
				}
				b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
			})
		}
	})
}

// BenchmarkStress measures one commit of 1–10 samples by each of 1,024
// concurrent appenders per iteration.
func BenchmarkStress(b *testing.B) {
	c := benchCorpus(b)
	eachConfig(b, func(b *testing.B, cfg config) {
		s := benchStore(b, cfg, c.series[:1024*stressSeries])
		b.ReportAllocs()
		i, samples := 0, 0
		for b.Loop() {
			n, err := stress(s, 1024, i, 1)
			require.NoError(b, err)
			samples += n
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
	})
}

// BenchmarkQueryStart measures opening and closing a querier while 10,000
// appenders hold uncommitted samples.
func BenchmarkQueryStart(b *testing.B) {
	c := benchCorpus(b)
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		b.Run("store="+k.String(), func(b *testing.B) {
			s := benchStore(b, config{k, true}, c.series)
			_, err := ingest(s, c, make([]uint64, len(c.series)), 0, 4)
			require.NoError(b, err)
			apps := make([]appender, openAppends)
			for i := range apps {
				apps[i] = s.appender()
				_, err := apps[i].append(0, i%len(c.series), maxTime(5, c.targets()), 1)
				require.NoError(b, err)
			}
			b.Cleanup(func() {
				for _, a := range apps {
					_ = a.rollback()
				}
			})
			b.ReportAllocs()
			for b.Loop() {
				require.NoError(b, s.startQuery(baseTime, maxTime(4, c.targets())))
			}
		})
	}
}

// BenchmarkStressCold measures the stress workload's first commits on a
// fresh store, where every appender creates its series.
func BenchmarkStressCold(b *testing.B) {
	c := benchCorpus(b)
	eachConfig(b, func(b *testing.B, cfg config) {
		samples := 0
		for b.Loop() {
			b.StopTimer()
			s, err := openStore(cfg.kind, storeConfig{dir: b.TempDir(), isolation: cfg.isolation, series: c.series[:1024*stressSeries]})
			require.NoError(b, err)
			b.StartTimer()
			n, err := stress(s, 1024, 0, 5)
			require.NoError(b, err)
			samples += n
			b.StopTimer()
			require.NoError(b, s.close())
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
	})
}

// labelRanges are the time ranges of the label benchmarks after 240 rounds
// (one hour): all of it, and its last 15 minutes.
func labelRanges(c *corpus) []struct {
	name       string
	mint, maxt int64
} {
	maxt := maxTime(240, c.targets())
	return []struct {
		name       string
		mint, maxt int64
	}{
		{"all", baseTime, maxt},
		{"last15m", maxt - 15*60*1000, maxt},
	}
}

// forEachIngested runs fn on each store after 240 rounds of ingest of c,
// every commit completed.
func forEachIngested(b *testing.B, c *corpus, fn func(b *testing.B, s store)) {
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		b.Run("store="+k.String(), func(b *testing.B) {
			s := benchStore(b, config{k, true}, c.series)
			_, err := ingest(s, c, make([]uint64, len(c.series)), 0, 240)
			require.NoError(b, err)
			fn(b, s)
		})
	}
}

// BenchmarkPromQLReopened is BenchmarkPromQL over a store closed and
// opened again after the ingest, as prom/bench's promql phase reads it:
// the head's full chunks are then read from their files.
func BenchmarkPromQLReopened(b *testing.B) {
	c := benchCorpus(b)
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: math.MaxInt32, Timeout: 10 * time.Minute})
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		b.Run("store="+k.String(), func(b *testing.B) {
			cfg := storeConfig{dir: b.TempDir(), isolation: true, series: c.series, blockRange: realBlockRange}
			s, err := openStore(k, cfg)
			require.NoError(b, err)
			_, err = ingest(s, c, make([]uint64, len(c.series)), 0, 240)
			require.NoError(b, err)
			require.NoError(b, s.close())
			s, err = openStore(k, cfg)
			require.NoError(b, err)
			b.Cleanup(func() { require.NoError(b, s.close()) })
			end := time.UnixMilli(maxTime(240, c.targets()))
			benchQueries(b, engine, s, promqlQueries(c, 240), end)
		})
	}
}

// benchLabels runs fn against each store holding the same head: 20,000
// series, 240 rounds, every commit completed.
func benchLabels(b *testing.B, fn func(b *testing.B, s store, mint, maxt int64) int) {
	c := benchCorpus(b)
	forEachIngested(b, c, func(b *testing.B, s store) {
		for _, r := range labelRanges(c) {
			b.Run("range="+r.name, func(b *testing.B) {
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					n = fn(b, s, r.mint, r.maxt)
				}
				b.ReportMetric(float64(n), "results")
			})
		}
	})
}

// BenchmarkLabelValues measures LabelValues without matchers, for the
// label with the most values (pwtdcjrs, 792) and for __name__ (463), each
// on a fresh querier.
func BenchmarkLabelValues(b *testing.B) {
	for _, name := range []string{"pwtdcjrs", "__name__"} {
		b.Run("name="+name, func(b *testing.B) {
			benchLabels(b, func(b *testing.B, s store, mint, maxt int64) int {
				vs, err := s.labelValues(name, mint, maxt)
				require.NoError(b, err)
				return len(vs)
			})
		})
	}
}

// BenchmarkLabelNames measures LabelNames without matchers on a fresh
// querier.
func BenchmarkLabelNames(b *testing.B) {
	benchLabels(b, func(b *testing.B, s store, mint, maxt int64) int {
		ns, err := s.labelNames(mint, maxt)
		require.NoError(b, err)
		return len(ns)
	})
}

// BenchmarkIngestHistograms measures one scrape round of the histogram
// workload (2,000 histogram series in 40 commits, 2 writers, no floats) per
// iteration; each round's histograms are generated with the timer stopped.
func BenchmarkIngestHistograms(b *testing.B) {
	c := benchCorpus(b)
	hw := newHistWorkload(2000, c.targets())
	eachConfig(b, func(b *testing.B, cfg config) {
		s, err := openStore(cfg.kind, storeConfig{dir: b.TempDir(), isolation: cfg.isolation, hseries: hw.series})
		require.NoError(b, err)
		b.Cleanup(func() { require.NoError(b, s.close()) })
		hrefs := make([]uint64, len(hw.series))
		b.ReportAllocs()
		r := 0
		for b.Loop() {
			b.StopTimer()
			row := hw.batch(r, r+1)[0]
			b.StartTimer()
			_, err := scrapeRounds(hw.targets, r, r+1, func(k, r int) (int, error) {
				return scrapeMixed(s, c, hw, nil, hrefs, row, k, r)
			})
			require.NoError(b, err)
			r++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(r*len(hw.series)), "ns/sample")
	})
}

// BenchmarkQueryHistograms measures reading every histogram sample of 240
// rounds of the histogram workload from the head.
func BenchmarkQueryHistograms(b *testing.B) {
	c := benchCorpus(b)
	hw := newHistWorkload(2000, c.targets())
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		b.Run("store="+k.String(), func(b *testing.B) {
			s, err := openStore(k, storeConfig{dir: b.TempDir(), isolation: true, hseries: hw.series})
			require.NoError(b, err)
			b.Cleanup(func() { require.NoError(b, s.close()) })
			_, _, _, err = ingestHist(s, c, hw, nil, make([]uint64, len(hw.series)), 0, 240)
			require.NoError(b, err)
			b.ReportAllocs()
			samples := 0
			for b.Loop() {
				_, n, err := s.queryHistograms(histQuery, baseTime, maxTime(240, hw.targets))
				require.NoError(b, err)
				samples += n
			}
			b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkIngestLate measures one round of the late workload (20,000
// series, 10% of each round's samples held back and appended 1–10 minutes
// later; out-of-order window 30 min; isolation on) per iteration. After
// the schedule's last round (240 rounds and the late samples due after
// them) the next iteration starts over on a fresh store, opened with the
// timer stopped. It reports ns per sample appended and the late samples
// rejected per round.
func BenchmarkIngestLate(b *testing.B) {
	c := benchCorpus(b)
	ls := newLateSchedule(len(c.series), 240, 0.1)
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		b.Run("store="+k.String(), func(b *testing.B) {
			var s store
			var refs []uint64
			defer func() { // before the cleanup that removes its dir
				if s != nil {
					require.NoError(b, s.close())
				}
			}()
			b.ReportAllocs()
			r, rounds, samples, rejected := ls.totalRounds(), 0, 0, 0
			for b.Loop() {
				if r == ls.totalRounds() {
					b.StopTimer()
					if s != nil {
						require.NoError(b, s.close())
					}
					var err error
					s, err = openStore(k, storeConfig{dir: b.TempDir(), isolation: true, series: c.series, lateWindow: lateWindow})
					require.NoError(b, err)
					refs, r = make([]uint64, len(c.series)), 0
					b.StartTimer()
				}
				li, err := ingestLate(s, c, ls, refs, r, r+1)
				require.NoError(b, err)
				samples += li.appended
				rejected += li.rejected
				r++
				rounds++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
			b.ReportMetric(float64(rejected)/float64(rounds), "rejected/round")
		})
	}
}

// BenchmarkPromQL measures the promql phase's queries through Prometheus's
// engine over a 1 h head (240 rounds), each store as the phase opens it.
func BenchmarkPromQL(b *testing.B) {
	c := benchCorpus(b)
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: math.MaxInt32, Timeout: 10 * time.Minute})
	forEachIngested(b, c, func(b *testing.B, s store) {
		benchQueries(b, engine, s, promqlQueries(c, 240), time.UnixMilli(maxTime(240, c.targets())))
	})
}

// benchQueries runs each of qs through engine over s as a sub-benchmark:
// an instant query at end, or a range query over the span before it.
func benchQueries(b *testing.B, engine *promql.Engine, s store, qs []promqlQuery, end time.Time) {
	for _, q := range qs {
		b.Run("query="+q.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				var pq promql.Query
				var err error
				if q.span == 0 {
					pq, err = engine.NewInstantQuery(ctx, s.queryable(), nil, q.expr, end)
				} else {
					pq, err = engine.NewRangeQuery(ctx, s.queryable(), nil, q.expr, end.Add(-q.span), end, promqlStep)
				}
				require.NoError(b, err)
				res := pq.Exec(ctx)
				require.NoError(b, res.Err)
				pq.Close()
			}
		})
	}
}
