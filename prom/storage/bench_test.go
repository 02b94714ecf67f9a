package promstorage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	ourlabels "github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

const benchSeries = 1000

func benchLabels() []labels.Labels {
	out := make([]labels.Labels, benchSeries)
	for i := range out {
		out[i] = labels.FromStrings("__name__", "http_requests_total", "job", "api", "instance", fmt.Sprintf("host-%d:9090", i%50), "path", fmt.Sprintf("/v1/%d", i))
	}
	return out
}

// BenchmarkAppend measures a scrape-like commit of benchSeries samples
// through the adapter (with refs cached, as the scrape loop does) and, for
// comparison, straight into isotsdb.
func BenchmarkAppend(b *testing.B) {
	lsets := benchLabels()
	b.Run("adapter", func(b *testing.B) {
		s := newStorage(b)
		refs := make([]storage.SeriesRef, len(lsets))
		b.ReportAllocs()
		ts := int64(0)
		for b.Loop() {
			ts += 15000
			app := s.Appender(context.Background())
			for i, ls := range lsets {
				ref, err := app.Append(refs[i], ls, ts, float64(ts))
				if err != nil {
					b.Fatal(err)
				}
				refs[i] = ref
			}
			if err := app.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lsets)), "ns/sample")
	})
	b.Run("isotsdb", func(b *testing.B) {
		s := newStorage(b)
		ours := make([]ourlabels.Labels, len(lsets))
		for i, ls := range lsets {
			ours[i] = toOurs(ls)
		}
		refs := make([]tsdb.SeriesRef, len(lsets))
		b.ReportAllocs()
		ts := int64(0)
		for b.Loop() {
			ts += 15000
			app := s.DB().Appender(context.Background())
			for i, ls := range ours {
				ref, err := app.Append(refs[i], ls, ts, float64(ts))
				if err != nil {
					b.Fatal(err)
				}
				refs[i] = ref
			}
			if err := app.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lsets)), "ns/sample")
	})
}

// loadBench fills a storage with benchSeries series of 2h of 15s samples.
func loadBench(b *testing.B) *promstorage.Storage {
	s := newStorage(b)
	fill(b, s)
	return s
}

// fill writes 2 h of 15-second scrapes of the benchSeries into s.
func fill(b *testing.B, s *promstorage.Storage) {
	lsets := benchLabels()
	refs := make([]storage.SeriesRef, len(lsets))
	for ts := int64(0); ts <= (2 * time.Hour).Milliseconds(); ts += 15000 {
		app := s.Appender(context.Background())
		for i, ls := range lsets {
			ref, err := app.Append(refs[i], ls, ts, float64(ts))
			require.NoError(b, err)
			refs[i] = ref
		}
		require.NoError(b, app.Commit())
	}
}

// BenchmarkSelect reads every sample of the last hour of all series
// through the adapter.
func BenchmarkSelect(b *testing.B) {
	s := loadBench(b)
	m := labels.MustNewMatcher(labels.MatchEqual, "__name__", "http_requests_total")
	start, end := time.Hour.Milliseconds(), (2 * time.Hour).Milliseconds()
	b.ReportAllocs()
	var it chunkenc.Iterator
	samples := 0
	for b.Loop() {
		q, err := s.Querier(start, end)
		if err != nil {
			b.Fatal(err)
		}
		ss := q.Select(context.Background(), true, &storage.SelectHints{Start: start, End: end}, m)
		for ss.Next() {
			it = ss.At().Iterator(it)
			for it.Next() != chunkenc.ValNone {
				samples++
			}
		}
		if err := ss.Err(); err != nil {
			b.Fatal(err)
		}
		q.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
}

// BenchmarkIterate reads every sample of all series over 2 h the way
// Prometheus's engine does (storage.BufferedSeriesIterator: At, AtST,
// Next and AtT for every sample), from the head alone or, with 30-minute
// blocks cut, mostly from blocks through the merge with the head.
func BenchmarkIterate(b *testing.B) {
	for _, layout := range []string{"head", "blocks"} {
		b.Run("layout="+layout, func(b *testing.B) {
			s := newStorage(b)
			if layout == "blocks" {
				s = newStorageBlocks(b, 30*time.Minute)
			}
			fill(b, s)
			if layout == "blocks" {
				require.NoError(b, s.DB().Compact(context.Background()))
				require.NotEmpty(b, s.DB().Blocks())
			}
			m := labels.MustNewMatcher(labels.MatchEqual, "__name__", "http_requests_total")
			end := (2 * time.Hour).Milliseconds()
			b.ReportAllocs()
			var it chunkenc.Iterator
			samples, sum := 0, 0.0
			for b.Loop() {
				q, err := s.Querier(0, end)
				require.NoError(b, err)
				ss := q.Select(context.Background(), true, &storage.SelectHints{Start: 0, End: end}, m)
				for ss.Next() {
					it = ss.At().Iterator(it)
					for vt := it.Next(); vt == chunkenc.ValFloat; vt = it.Next() {
						_, v := it.At()
						sum += v + float64(it.AtST()) + float64(it.AtT())
						samples++
					}
				}
				require.NoError(b, ss.Err())
				require.NoError(b, q.Close())
			}
			require.NotZero(b, sum)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
		})
	}
}

// BenchmarkPromQLRate evaluates a typical dashboard range query.
func BenchmarkPromQLRate(b *testing.B) {
	s := loadBench(b)
	engine := promqltest.NewTestEngine(b, false, 0, 50_000_000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		q, err := engine.NewRangeQuery(ctx, s, nil, `sum by (instance) (rate(http_requests_total[5m]))`,
			time.UnixMilli(time.Hour.Milliseconds()), time.UnixMilli((2 * time.Hour).Milliseconds()), time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		res := q.Exec(ctx)
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		q.Close()
	}
}
