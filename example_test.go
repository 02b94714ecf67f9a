package tsdb_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
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
		for it.Next() == chunks.ValFloat { // the head holds only floats
			t, v := it.At()
			fmt.Println(ss.At().Labels(), t, v)
		}
	}
	// Output:
	// before commit: 0 series
	// {__name__="node_load1", instance="a:9100", job="node"} 1000 0.25
	// {__name__="up", instance="a:9100", job="node"} 1000 1
}

// exampleDB opens a DB with the default options in a new temporary
// directory; done closes it and removes the directory.
func exampleDB() (db *tsdb.DB, dir string, done func()) {
	dir, err := os.MkdirTemp("", "isotsdb-example")
	if err != nil {
		panic(err)
	}
	db, err = tsdb.Open(dir, nil, nil, nil)
	if err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	return db, dir, func() {
		db.Close()
		os.RemoveAll(dir)
	}
}

// printSeries prints every sample, a line each, of the series that a new
// Querier of db over all time selects with ms.
func printSeries(ctx context.Context, db *tsdb.DB, ms ...*labels.Matcher) {
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		panic(err)
	}
	defer q.Close()
	ss := q.Select(ctx, ms...)
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() == chunks.ValFloat { // the head holds only floats
			t, v := it.At()
			fmt.Println(ss.At().Labels(), t, v)
		}
		if err := it.Err(); err != nil {
			panic(err)
		}
	}
	if err := ss.Err(); err != nil {
		panic(err)
	}
}

// commitSamples appends one sample of ls per timestamp, value i+1 for the
// i-th, and commits them as one transaction.
func commitSamples(ctx context.Context, db *tsdb.DB, ls labels.Labels, ts ...int64) {
	app := db.Appender(ctx)
	var ref tsdb.SeriesRef
	for i, t := range ts {
		var err error
		if ref, err = app.Append(ref, ls, t, float64(i+1)); err != nil {
			panic(err)
		}
	}
	if err := app.Commit(); err != nil {
		panic(err)
	}
}

// OpenReadOnly looks at a data directory that another DB (here in the same
// process; usually another process) has open and is writing to: it takes
// no lock, writes nothing and sees what the WAL and blocks held when it
// opened.
func ExampleOpenReadOnly() {
	writer, dir, done := exampleDB()
	defer done()
	ctx := context.Background()
	up := labels.FromStrings("__name__", "up", "job", "node")
	commitSamples(ctx, writer, up, 1000, 2000)

	reader, err := tsdb.OpenReadOnly(dir, nil, nil)
	if err != nil {
		panic(err)
	}
	defer reader.Close()
	printSeries(ctx, reader, labels.MustNewMatcher(labels.MatchEqual, "job", "node"))

	_, err = reader.Appender(ctx).Append(0, up, 3000, 3)
	fmt.Println("append:", errors.Is(err, tsdb.ErrReadOnly))
	// Output:
	// {__name__="up", job="node"} 1000 1
	// {__name__="up", job="node"} 2000 2
	// append: true
}

// Snapshot copies the DB, head included, into a directory that opens as a
// DB of its own, here read-only. The head's samples become a block there.
func ExampleDB_Snapshot() {
	db, dir, done := exampleDB()
	defer done()
	ctx := context.Background()
	commitSamples(ctx, db, labels.FromStrings("__name__", "up", "job", "node"), 1000, 2000)

	// Below the data directory, snapshots/ is the one place a snapshot may go.
	snap := filepath.Join(dir, "snapshots", "first")
	if err := db.Snapshot(snap, true); err != nil {
		panic(err)
	}

	copied, err := tsdb.OpenReadOnly(snap, nil, nil)
	if err != nil {
		panic(err)
	}
	defer copied.Close()
	for _, b := range copied.Blocks() {
		fmt.Printf("block [%d, %d): %d series, %d samples\n", b.MinTime, b.MaxTime, b.Stats.NumSeries, b.Stats.NumSamples)
	}
	printSeries(ctx, copied, labels.MustNewMatcher(labels.MatchEqual, "job", "node"))
	// Output:
	// block [1000, 2001): 1 series, 2 samples
	// {__name__="up", job="node"} 1000 1
	// {__name__="up", job="node"} 2000 2
}

// Delete removes the samples of a time range from the series its matchers
// select; Queriers created afterwards do not see them. CleanTombstones
// would later rewrite the blocks without them.
func ExampleDB_Delete() {
	db, _, done := exampleDB()
	defer done()
	ctx := context.Background()
	commitSamples(ctx, db, labels.FromStrings("__name__", "up", "job", "node", "instance", "a"), 1000, 2000, 3000)
	commitSamples(ctx, db, labels.FromStrings("__name__", "up", "job", "node", "instance", "b"), 1000, 2000, 3000)

	// Instance a's samples in [1500, 2500], that is the one at 2000.
	err := db.Delete(ctx, 1500, 2500,
		labels.MustNewMatcher(labels.MatchEqual, "__name__", "up"),
		labels.MustNewMatcher(labels.MatchEqual, "instance", "a"))
	if err != nil {
		panic(err)
	}
	printSeries(ctx, db, labels.MustNewMatcher(labels.MatchEqual, "job", "node"))
	// Output:
	// {__name__="up", instance="a", job="node"} 1000 1
	// {__name__="up", instance="a", job="node"} 3000 3
	// {__name__="up", instance="b", job="node"} 1000 1
	// {__name__="up", instance="b", job="node"} 2000 2
	// {__name__="up", instance="b", job="node"} 3000 3
}

// After a restart, a scrape loop has forgotten which series its targets
// exposed; the head has not. HeadSeries lists them with their newest
// sample, so the first scrape after the restart can end, with a stale
// marker, each series it no longer returns, and PromQL stops showing
// them at once instead of five minutes later.
func ExampleDB_HeadSeries() {
	dir, err := os.MkdirTemp("", "isotsdb-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	node := func(name string) labels.Labels { return labels.FromStrings("__name__", name, "job", "node") }

	db, err := tsdb.Open(dir, nil, nil, nil)
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"up", "temp_celsius", "fan_rpm"} {
		commitSamples(ctx, db, node(name), 1000)
	}
	db.Close()

	// The restart: the WAL brings the series back.
	db, err = tsdb.Open(dir, nil, nil, nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()

	// The first scrape after it: the fan is gone.
	const now = 16000
	scraped := []struct {
		ls labels.Labels
		v  float64
	}{{node("up"), 1}, {node("temp_celsius"), 21.5}}
	app := db.Appender(ctx)
	seen := map[string]bool{}
	for _, s := range scraped {
		if _, err := app.Append(0, s.ls, now, s.v); err != nil {
			panic(err)
		}
		seen[s.ls.String()] = true
	}
	// One stale marker, in the same transaction, for each series that
	// the scrape did not return and that is not marked stale already.
	var appendErr error
	err = db.HeadSeries(ctx, func(s tsdb.HeadSeriesInfo) bool {
		if seen[s.Labels.String()] || s.Stale || s.T >= now {
			return true
		}
		_, appendErr = app.Append(s.Ref, s.Labels, now, value.StaleMarker())
		return appendErr == nil
	})
	if err != nil || appendErr != nil {
		panic(errors.Join(err, appendErr))
	}
	if err := app.Commit(); err != nil {
		panic(err)
	}

	err = db.HeadSeries(ctx, func(s tsdb.HeadSeriesInfo) bool {
		fmt.Println(s.Labels, s.T, s.V, s.Stale)
		return true
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// {__name__="up", job="node"} 16000 1 false
	// {__name__="temp_celsius", job="node"} 16000 21.5 false
	// {__name__="fan_rpm", job="node"} 16000 NaN true
}
