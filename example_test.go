package tsdb_test

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// A scrape is committed as one transaction; a Querier sees it whole or not
// at all.
func Example() {
	dir, err := os.MkdirTemp("", "isotsdb-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	db, err := tsdb.Open(dir, nil, nil, nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()

	// One scrape of a target: two series, committed together.
	app := db.Appender(ctx)
	up := labels.FromStrings("__name__", "up", "job", "node", "instance", "a:9100")
	load := labels.FromStrings("__name__", "node_load1", "job", "node", "instance", "a:9100")
	if _, err := app.Append(0, up, 1000, 1); err != nil {
		panic(err)
	}
	if _, err := app.Append(0, load, 1000, 0.25); err != nil {
		panic(err)
	}

	before, _ := db.Querier(math.MinInt64, math.MaxInt64) // taken before Commit
	defer before.Close()
	if err := app.Commit(); err != nil {
		panic(err)
	}
	after, _ := db.Querier(math.MinInt64, math.MaxInt64)
	defer after.Close()

	job := labels.MustNewMatcher(labels.MatchEqual, "job", "node")
	ss := before.Select(ctx, job)
	n := 0
	for ss.Next() {
		n++
	}
	fmt.Printf("before commit: %d series\n", n)

	ss = after.Select(ctx, job)
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() {
			t, v := it.At()
			fmt.Println(ss.At().Labels(), t, v)
		}
	}
	// Output:
	// before commit: 0 series
	// {__name__="node_load1", instance="a:9100", job="node"} 1000 0.25
	// {__name__="up", instance="a:9100", job="node"} 1000 1
}
