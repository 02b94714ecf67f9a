package scrape_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/prom/scrape"
)

const benchSeries = 1000

// BenchmarkScrape ingests scrapes of 1,000 series after the first: the
// steady state of a scrape loop (every series in the ref cache). One
// iteration is one scrape, one commit.
func BenchmarkScrape(b *testing.B) {
	b.Run("exposition", func(b *testing.B) {
		var sb strings.Builder
		for f := range benchSeries / 10 {
			fmt.Fprintf(&sb, "# HELP metric_%d A gauge.\n# TYPE metric_%d gauge\n", f, f)
			for i := range 10 {
				fmt.Fprintf(&sb, "metric_%d{path=\"/api/v1/%d\",code=\"200\"} %d\n", f, i, f*i)
			}
		}
		body := []byte(sb.String())
		benchScrape(b, func(s *scrape.Scraper, t time.Time) (scrape.Result, error) {
			return s.ScrapeExposition(context.Background(), body, textType, t)
		}, len(body))
	})
	b.Run("gatherer", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		for f := range benchSeries / 10 {
			g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: fmt.Sprintf("metric_%d", f), Help: "A gauge."}, []string{"path", "code"})
			for i := range 10 {
				g.WithLabelValues(fmt.Sprintf("/api/v1/%d", i), "200").Set(float64(f * i))
			}
			reg.MustRegister(g)
		}
		benchScrape(b, func(s *scrape.Scraper, t time.Time) (scrape.Result, error) {
			return s.ScrapeGatherer(context.Background(), reg, t)
		}, 0)
	})
}

func benchScrape(b *testing.B, do func(*scrape.Scraper, time.Time) (scrape.Result, error), bytes int) {
	db := openDB(b, b.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	t0 := time.Now()
	if _, err := do(s, t0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	if bytes > 0 {
		b.SetBytes(int64(bytes))
	}
	n := 0
	for b.Loop() {
		n++
		res, err := do(s, t0.Add(time.Duration(n)*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		if res.Samples != benchSeries {
			b.Fatalf("%d samples", res.Samples)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*benchSeries), "ns/sample")
}
