package promstorage_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// An isotsdb database wrapped by New is a Prometheus storage.Storage: write
// to it with Prometheus's Appender and query it with the PromQL engine.
// Each query reads one isolated snapshot of the database.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "isotsdb-promql-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	// One registry for the metrics of the database and of the engine.
	reg := prometheus.NewRegistry()
	db, err := tsdb.Open(dir, nil, reg, nil)
	if err != nil {
		panic(err)
	}
	s := promstorage.New(db)
	defer s.Close() // closes db too
	ctx := context.Background()

	// Five scrapes, 15 s apart, of two counters: instance a serves one
	// request per second, instance b two. One scrape is one commit.
	a := labels.FromStrings("__name__", "http_requests_total", "job", "api", "instance", "a")
	b := labels.FromStrings("__name__", "http_requests_total", "job", "api", "instance", "b")
	for i := range int64(5) {
		t := i * 15_000
		app := s.Appender(ctx)
		if _, err := app.Append(0, a, t, float64(i*15)); err != nil {
			panic(err)
		}
		if _, err := app.Append(0, b, t, float64(i*30)); err != nil {
			panic(err)
		}
		if err := app.Commit(); err != nil {
			panic(err)
		}
	}

	engine := promql.NewEngine(promql.EngineOpts{Reg: reg, MaxSamples: 1_000_000, Timeout: time.Minute})
	for _, expr := range []string{
		`rate(http_requests_total[1m])`,
		`sum by (job) (rate(http_requests_total[1m]))`,
	} {
		q, err := engine.NewInstantQuery(ctx, s, nil, expr, time.UnixMilli(60_000))
		if err != nil {
			panic(err)
		}
		vec, err := q.Exec(ctx).Vector()
		if err != nil {
			panic(err)
		}
		slices.SortFunc(vec, func(x, y promql.Sample) int { return labels.Compare(x.Metric, y.Metric) })
		for _, smpl := range vec {
			fmt.Printf("%s %s %.2f\n", expr, smpl.Metric, smpl.F)
		}
		q.Close()
	}
	// Output:
	// rate(http_requests_total[1m]) {instance="a", job="api"} 1.00
	// rate(http_requests_total[1m]) {instance="b", job="api"} 2.00
	// sum by (job) (rate(http_requests_total[1m])) {job="api"} 3.00
}
