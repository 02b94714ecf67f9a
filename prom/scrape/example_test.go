package scrape_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/prom/scrape"
	"github.com/isotsdb/tsdb/value"
)

// Example scrapes a client_golang registry twice, one commit per scrape;
// a series that vanished in between ends with a stale marker.
func Example() {
	dir, err := os.MkdirTemp("", "scrape-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := tsdb.Open(dir, nil, nil, nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()

	reg := prometheus.NewRegistry()
	jobs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jobs_total", Help: "Jobs done."}, []string{"queue"})
	reg.MustRegister(jobs)
	jobs.WithLabelValues("fast").Add(3)
	jobs.WithLabelValues("slow").Add(1)

	s := scrape.New(db, scrape.Options{Labels: labels.FromStrings("job", "worker", "instance", "localhost:8080")})
	ctx := context.Background()
	t0 := time.UnixMilli(1_700_000_000_000)
	res, err := s.ScrapeGatherer(ctx, reg, t0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("scrape 1: %d samples, %d series added\n", res.Samples, res.SeriesAdded)

	jobs.WithLabelValues("fast").Add(2)
	jobs.DeleteLabelValues("slow")
	res, err = s.ScrapeGatherer(ctx, reg, t0.Add(15*time.Second))
	if err != nil {
		panic(err)
	}
	fmt.Printf("scrape 2: %d samples, %d stale markers\n", res.Samples, res.Stale)

	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		panic(err)
	}
	defer q.Close()
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, "__name__", "jobs_total"))
	for ss.Next() {
		fmt.Print(ss.At().Labels().Get("queue"), ":")
		it := ss.At().Iterator(nil)
		for it.Next() != chunks.ValNone {
			t, v := it.At()
			if value.IsStaleNaN(v) {
				fmt.Printf(" %d=stale", t-t0.UnixMilli())
			} else {
				fmt.Printf(" %d=%g", t-t0.UnixMilli(), v)
			}
		}
		fmt.Println()
	}
	// Output:
	// scrape 1: 2 samples, 2 series added
	// scrape 2: 1 samples, 1 stale markers
	// fast: 0=3 15000=5
	// slow: 0=1 15000=stale
}
