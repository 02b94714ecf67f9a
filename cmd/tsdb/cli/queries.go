package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
)

// queryRuns is how many times each query runs; the report gives the
// median latency, which one slow run (a GC, a page fault) does not move.
const queryRuns = 5

// namedQuery is a selector to time and what it stands for.
type namedQuery struct {
	what     string // e.g. "metric name"
	selector string // as parsed, for the report
	matchers []*labels.Matcher
}

// queryResult is what one query returned and how long it took.
type queryResult struct {
	q       namedQuery
	series  int
	samples int64
	latency time.Duration // median of queryRuns runs
}

// defaultQueries returns the queries the report always has: the metric
// with the most series, one target, a regexp over about half of the
// metric names, and every series.
func defaultQueries(targets []*target) ([]namedQuery, error) {
	name, _ := topMetricName(targets)
	eq := func(n, v string) *labels.Matcher { return &labels.Matcher{Type: labels.MatchEqual, Name: n, Value: v} }
	wide, err := labels.NewMatcher(labels.MatchRegexp, labels.MetricName, "[a-m].*")
	if err != nil {
		return nil, err
	}
	return []namedQuery{
		newNamedQuery("metric name", eq(labels.MetricName, name)),
		newNamedQuery("instance", eq("instance", targets[0].instance)),
		newNamedQuery("wide regexp", wide),
		newNamedQuery("all series", eq("job", benchJob)),
	}, nil
}

func newNamedQuery(what string, ms ...*labels.Matcher) namedQuery {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return namedQuery{what: what, selector: "{" + strings.Join(parts, ", ") + "}", matchers: ms}
}

// runQueries times each query over [mint, maxt], queryRuns times.
func runQueries(ctx context.Context, db *tsdb.DB, queries []namedQuery, mint, maxt int64) ([]queryResult, error) {
	var out []queryResult
	for _, q := range queries {
		r := queryResult{q: q}
		lat := make([]time.Duration, queryRuns)
		for i := range lat {
			t0 := time.Now()
			series, samples, err := selectAll(ctx, db, mint, maxt, q.matchers)
			lat[i] = time.Since(t0)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.selector, err)
			}
			if i > 0 && (series != r.series || samples != r.samples) {
				return nil, fmt.Errorf("query %s: run %d returned %d series and %d samples, run 1 %d and %d",
					q.selector, i+1, series, samples, r.series, r.samples)
			}
			r.series, r.samples = series, samples
		}
		slices.Sort(lat)
		r.latency = lat[len(lat)/2]
		out = append(out, r)
	}
	return out, nil
}

// selectAll runs one query and reads every sample it returns.
func selectAll(ctx context.Context, db *tsdb.DB, mint, maxt int64, ms []*labels.Matcher) (series int, samples int64, err error) {
	q, err := db.Querier(mint, maxt)
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, q.Close()) }()
	ss := q.Select(ctx, ms...)
	var it chunks.Iterator
	for ss.Next() {
		series++
		it = ss.At().Iterator(it)
		for it.Next() != chunks.ValNone {
			samples++
		}
		if err := it.Err(); err != nil {
			return 0, 0, err
		}
	}
	return series, samples, ss.Err()
}

// parseQueries parses the --query selectors.
func parseQueries(qs []string) ([]namedQuery, error) {
	out := make([]namedQuery, 0, len(qs))
	for _, q := range qs {
		ms, err := labels.ParseSelector(q)
		if err != nil {
			return nil, fmt.Errorf("--query %q: %w", q, err)
		}
		out = append(out, namedQuery{what: "--query", selector: q, matchers: ms})
	}
	return out, nil
}
