package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// The PromQL phase: Prometheus's PromQL engine (the pinned version) over
// the data of the blocks6h phase of both stores, isotsdb through the
// repository's adapter (prom/storage), Prometheus's TSDB as the
// storage.Queryable it is. Each query runs on both stores first to
// compare the results (a difference fails the run, naming the query),
// then p.promqlReps times or more (see params.promqlBudget) on each
// store, alternating, for the median
// latencies (query creation, execution and Close). The figures are
// promql.NN <name> (NN orders them in the table), the median latency in
// ns, filed with each store's figures.

// promqlMaxReps caps the executions per store of a query that the promql
// phase repeats to fill params.promqlBudget.
const promqlMaxReps = 41

// promqlQuery is one query of the phase: an instant query at the newest
// sample if span is 0, else a range query over the newest span with a
// step of promqlStep.
type promqlQuery struct {
	name string
	expr string
	span time.Duration
}

// promqlStep is the step of the range queries.
const promqlStep = time.Minute

// promqlFigure is the figure name of query i.
func promqlFigure(i int, q promqlQuery) string { return fmt.Sprintf("promql.%02d %s", i, q.name) }

// promqlQueries returns the phase's queries for corpus c: instant counts
// over every series, then, over the newest hour and the newest 6 hours (or
// the rounds written, if shorter), rates, sums, topk and *_over_time of the
// read phase's top metric name and of its metric of about 100 series, and
// a count of every series at every step.
func promqlQueries(c *corpus, rounds int) []promqlQuery {
	qs := queries(c)
	top, mid := qs[0].matchers[0].value, qs[1].matchers[0].value
	out := []promqlQuery{
		{name: "count(everything)", expr: `count({job="bench"})`},
		{name: "count by (__name__)", expr: `count by (__name__) ({job="bench"})`},
		{name: "count(wide regex)", expr: `count({__name__=~"k.*|v.*"})`},
	}
	long := min(6*time.Hour, time.Duration(int64(rounds)*scrapeEvery)*time.Millisecond)
	for _, span := range []time.Duration{time.Hour, long} {
		sfx := fmt.Sprintf(" %s", shortDuration(span))
		out = append(out,
			promqlQuery{name: "rate(top)" + sfx, expr: fmt.Sprintf(`rate(%s[5m])`, top), span: span},
			promqlQuery{name: "sum by (instance) rate(top)" + sfx, expr: fmt.Sprintf(`sum by (instance) (rate(%s[5m]))`, top), span: span},
			promqlQuery{name: "topk(5) sum rate(top)" + sfx, expr: fmt.Sprintf(`topk(5, sum by (instance) (rate(%s[5m])))`, top), span: span},
			promqlQuery{name: "max_over_time(top)" + sfx, expr: fmt.Sprintf(`max_over_time(%s[10m])`, top), span: span},
			promqlQuery{name: "avg_over_time(~100)" + sfx, expr: fmt.Sprintf(`avg_over_time(%s[10m])`, mid), span: span},
			// Not count_over_time of every series: it drops the metric
			// name, and the corpus has series that differ only in it.
			promqlQuery{name: "sum count_over_time(top)" + sfx, expr: fmt.Sprintf(`sum(count_over_time(%s[5m]))`, top), span: span},
			promqlQuery{name: "count(everything)" + sfx, expr: `count({job="bench"})`, span: span},
		)
	}
	return out
}

// shortDuration prints d as 1h, 6h or 90m.
func shortDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dm", int(d/time.Minute))
}

// runPromQL runs the phase on the kept blocks6h data of both stores
// (runs[k] is store kind k's) and returns each kind's figures.
func runPromQL(c *corpus, runs [2]blocksRun, p params, log func(string)) ([2]figures, error) {
	var out [2]figures
	var stores [2]store
	var qables [2]storage.Queryable
	for k := range stores {
		s, err := openStore(storeKind(k), storeConfig{dir: runs[k].dir, isolation: true, series: c.series, blockRange: realBlockRange})
		if err != nil {
			return out, fmt.Errorf("bench: promql: %w", err)
		}
		defer s.close()
		stores[k], qables[k] = s, s.queryable()
		out[k] = figures{}
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: math.MaxInt32, Timeout: 10 * time.Minute})
	end := time.UnixMilli(runs[0].maxt)
	qs := promqlQueries(c, p.blocksRounds)
	// exec runs q on store k; the result is valid until done is called
	// (Close returns its memory to the engine's pools).
	exec := func(k int, q promqlQuery) (v parser.Value, d time.Duration, done func(), err error) {
		ctx := context.Background()
		start := time.Now()
		var pq promql.Query
		if q.span == 0 {
			pq, err = engine.NewInstantQuery(ctx, qables[k], nil, q.expr, end)
		} else {
			pq, err = engine.NewRangeQuery(ctx, qables[k], nil, q.expr, end.Add(-q.span), end, promqlStep)
		}
		if err != nil {
			return nil, 0, nil, fmt.Errorf("bench: promql: %s on %s: %w", q.name, storeKind(k), err)
		}
		res := pq.Exec(ctx)
		if res.Err != nil {
			pq.Close()
			return nil, 0, nil, fmt.Errorf("bench: promql: %s on %s: %w", q.name, storeKind(k), res.Err)
		}
		d = time.Since(start)
		return res.Value, d, pq.Close, nil
	}
	for _, q := range qs {
		a, _, doneA, err := exec(0, q)
		if err != nil {
			return out, err
		}
		b, _, doneB, err := exec(1, q)
		if err != nil {
			doneA()
			return out, err
		}
		err = sameResult(a, b)
		doneA()
		doneB()
		if err != nil {
			return out, fmt.Errorf("bench: promql: %s (%s): isotsdb and prometheus differ: %w", q.name, q.expr, err)
		}
	}
	lat := make([][2][]time.Duration, len(qs))
	for i, q := range qs {
		// At least promqlReps executions per store, more for a fast
		// query (until promqlBudget has gone on it, both stores
		// together, up to promqlMaxReps): a millisecond query's median
		// over five is mostly noise.
		// The garbage of the ingest and of earlier queries is collected
		// first, so that neither store's executions pay for it.
		runtime.GC()
		var spent time.Duration
		for rep := 0; rep < p.promqlReps || spent < p.promqlBudget && rep < promqlMaxReps; rep++ {
			for j := range 2 {
				k := (j + rep + i) % 2
				start := time.Now()
				_, _, done, err := exec(k, q)
				if err != nil {
					return out, err
				}
				done()
				d := time.Since(start)
				lat[i][k] = append(lat[i][k], d)
				spent += d
			}
		}
	}
	for i, q := range qs {
		for k := range out {
			out[k][promqlFigure(i, q)] = float64(percentile(lat[i][k], 0.5).Nanoseconds())
		}
	}
	log(fmt.Sprintf("promql: %d queries, results equal in both stores, %d–%d executions each", len(qs), p.promqlReps, max(p.promqlReps, promqlMaxReps)))
	for k := range stores {
		if err := stores[k].close(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// sameResult compares two query results: the same series with the same
// samples, floats equal up to a relative 1e-9 (a sum adds its terms in
// the order the store returns the series, which may differ).
func sameResult(a, b parser.Value) error {
	if a.Type() != b.Type() {
		return fmt.Errorf("types %s and %s", a.Type(), b.Type())
	}
	switch a := a.(type) {
	case promql.Vector:
		b := b.(promql.Vector)
		if len(a) != len(b) {
			return fmt.Errorf("%d and %d samples", len(a), len(b))
		}
		sortVector(a)
		sortVector(b)
		for i := range a {
			if !labels.Equal(a[i].Metric, b[i].Metric) {
				return fmt.Errorf("sample %d: series %s and %s", i, a[i].Metric, b[i].Metric)
			}
			if a[i].T != b[i].T || !closeEnough(a[i].F, b[i].F) || (a[i].H == nil) != (b[i].H == nil) {
				return fmt.Errorf("%s: %v@%d and %v@%d", a[i].Metric, a[i].F, a[i].T, b[i].F, b[i].T)
			}
		}
	case promql.Matrix:
		b := b.(promql.Matrix)
		if len(a) != len(b) {
			return fmt.Errorf("%d and %d series", len(a), len(b))
		}
		sortMatrix(a)
		sortMatrix(b)
		for i := range a {
			if !labels.Equal(a[i].Metric, b[i].Metric) {
				return fmt.Errorf("series %d: %s and %s", i, a[i].Metric, b[i].Metric)
			}
			fa, fb := a[i].Floats, b[i].Floats
			if len(fa) != len(fb) || len(a[i].Histograms) != len(b[i].Histograms) {
				return fmt.Errorf("%s: %d and %d points", a[i].Metric, len(fa), len(fb))
			}
			for j := range fa {
				if fa[j].T != fb[j].T || !closeEnough(fa[j].F, fb[j].F) {
					return fmt.Errorf("%s: %v@%d and %v@%d", a[i].Metric, fa[j].F, fa[j].T, fb[j].F, fb[j].T)
				}
			}
		}
	case promql.Scalar:
		b := b.(promql.Scalar)
		if a.T != b.T || !closeEnough(a.V, b.V) {
			return fmt.Errorf("scalars %v and %v", a.V, b.V)
		}
	default:
		return fmt.Errorf("result type %s not compared", a.Type())
	}
	return nil
}

func closeEnough(x, y float64) bool {
	if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
		return true
	}
	return math.Abs(x-y) <= 1e-9*max(math.Abs(x), math.Abs(y))
}

func sortVector(v promql.Vector) {
	slices.SortFunc(v, func(x, y promql.Sample) int { return labels.Compare(x.Metric, y.Metric) })
}

func sortMatrix(m promql.Matrix) {
	slices.SortFunc(m, func(x, y promql.Series) int {
		return cmp.Or(labels.Compare(x.Metric, y.Metric), cmp.Compare(len(x.Floats), len(y.Floats)))
	})
}
