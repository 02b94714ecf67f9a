package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// Workload shape.
const (
	// seriesPerTarget is the size of one scrape target, and so of one
	// commit: a typical node_exporter exposes several hundred series.
	seriesPerTarget = 500
	// scrapeInterval is the sample-time distance between two scrapes of
	// a target, Prometheus's most common setting.
	scrapeInterval int64 = 15_000
	// benchJob is the job label of every benchmark series.
	benchJob = "bench"
	// maxLabelSetLine bounds one line of the series file.
	maxLabelSetLine = 1 << 20
)

// seriesKind is how a series' value evolves from one scrape to the next.
type seriesKind uint8

const (
	kindConstant seriesKind = iota // never changes: info metrics, limits
	kindCounter                    // grows at a per-series rate, rarely resets
	kindGauge                      // random walk
)

// Mix of kinds, as cumulative shares of the series.
const (
	constantShare = 0.2
	counterShare  = 0.6 // 0.2 to 0.6: counters; the rest: gauges
	// counterResetOdds: a counter resets to 0 once in this many scrapes on
	// average (a process restart every few days at 15 s).
	counterResetOdds = 20_000
)

// valueGen produces one series' values. It is advanced only by the
// goroutine that scrapes its target.
type valueGen struct {
	kind    seriesKind
	integer bool    // values are whole numbers (most counters and many gauges)
	v       float64 // current value
	step    float64 // counter: mean increase per scrape; gauge: walk's std dev
}

func newValueGen(rng *rand.Rand) valueGen {
	r := rng.Float64()
	switch {
	case r < constantShare:
		v := 1.0
		if rng.IntN(2) == 0 {
			v = float64(rng.IntN(1 << 20))
		}
		return valueGen{kind: kindConstant, integer: true, v: v}
	case r < counterShare:
		// Rates spread log-uniformly from 0.01 to 1000 events per second.
		rate := math.Pow(10, -2+5*rng.Float64())
		g := valueGen{kind: kindCounter, integer: rng.IntN(4) != 0, step: rate * 15}
		g.v = math.Floor(rng.Float64() * 1e6)
		return g
	default:
		base := math.Pow(10, 6*rng.Float64())
		return valueGen{kind: kindGauge, integer: rng.IntN(2) == 0, v: base, step: base / 100}
	}
}

// next advances the value by one scrape and returns it.
func (g *valueGen) next(rng *rand.Rand) float64 {
	switch g.kind {
	case kindCounter:
		if rng.IntN(counterResetOdds) == 0 {
			g.v = 0
			break
		}
		inc := g.step * (0.5 + rng.Float64())
		if g.integer {
			inc = math.Round(inc)
		}
		g.v += inc
	case kindGauge:
		g.v += rng.NormFloat64() * g.step
		if g.integer {
			g.v = math.Round(g.v)
		}
	}
	return g.v
}

// target is one scrape target: seriesPerTarget series (fewer for the last
// one) committed together. A target is scraped by one goroutine at a time;
// the hand-over between goroutines (errgroup.Wait per round) orders the
// accesses, so its fields need no lock.
type target struct {
	index    int // position in newTargets' result
	instance string
	offset   int64 // ms after the round's start at which it is scraped
	series   []labels.Labels
	refs     []tsdb.SeriesRef
	gens     []valueGen
	rng      *rand.Rand // drives gens; seeded per target

	// Late mode (enableLate); late is nil otherwise.
	late *lateSchedule
	vals []float64 // the values of the scrape being committed
}

// loadLabelSets reads n label sets, one JSON object per line, from the file
// at path or, if path is "", from the built-in corpus (openSeries).
// Duplicate lines are skipped. When the source has fewer than n distinct
// sets it is used again from the top: the instance label that newTargets
// adds keeps the repeats distinct, as long as the source holds at least one
// target's worth of sets.
func loadLabelSets(path string, n int) (_ []labels.Labels, err error) {
	r, name, err := openSeries(path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	return readLabelSets(r, name, n)
}

// readLabelSets does the work of loadLabelSets on r; name is what error
// messages call r.
func readLabelSets(r io.Reader, name string, n int) ([]labels.Labels, error) {
	var sets []labels.Labels
	seen := map[string]struct{}{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLabelSetLine)
	for line := 1; sc.Scan() && len(sets) < n; line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var ls labels.Labels
		if err := json.Unmarshal(sc.Bytes(), &ls); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		if ls.IsEmpty() {
			return nil, fmt.Errorf("%s line %d: empty label set", name, line)
		}
		key := ls.String()
		if _, dup := seen[key]; dup {
			continue
		}
		seen[key] = struct{}{}
		sets = append(sets, ls)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("%s holds no label sets", name)
	}
	if len(sets) < n && len(sets) < seriesPerTarget {
		return nil, fmt.Errorf("%s holds %d distinct label sets; %d series need at least %d to repeat it", name, len(sets), n, seriesPerTarget)
	}
	distinct := len(sets)
	for i := distinct; i < n; i++ {
		sets = append(sets, sets[i%distinct])
	}
	return sets, nil
}

// newTargets groups sets into targets of seriesPerTarget consecutive sets,
// setting the job and instance labels of each, and seeds every target's
// value generators from seed.
func newTargets(sets []labels.Labels, seed uint64) []*target {
	var targets []*target
	b := labels.NewBuilder(labels.EmptyLabels())
	for start := 0; start < len(sets); start += seriesPerTarget {
		idx := len(targets)
		t := &target{
			index:    idx,
			instance: fmt.Sprintf("host-%d:9100", idx),
			// Spread scrapes over the interval like Prometheus does, but
			// deterministically.
			offset: int64(idx) * 7919 % scrapeInterval,
			rng:    rand.New(rand.NewPCG(seed, uint64(idx))),
		}
		end := min(start+seriesPerTarget, len(sets))
		for _, ls := range sets[start:end] {
			b.Reset(ls)
			b.Set("job", benchJob).Set("instance", t.instance)
			t.series = append(t.series, b.Labels())
			t.gens = append(t.gens, newValueGen(t.rng))
		}
		t.refs = make([]tsdb.SeriesRef, len(t.series))
		targets = append(targets, t)
	}
	return targets
}

// scrape commits one sample per series of t at time ts in one transaction,
// each from the series' value generator.
func (t *target) scrape(ctx context.Context, db *tsdb.DB, ts int64) error {
	return t.commit(ctx, db, ts, func(i int) float64 { return t.gens[i].next(t.rng) })
}

// scrapeConstant commits value v at time ts for every series of t: the
// read-while-write check's scrapes, which a reader can verify.
func (t *target) scrapeConstant(ctx context.Context, db *tsdb.DB, ts int64, v float64) error {
	return t.commit(ctx, db, ts, func(int) float64 { return v })
}

// commit appends value(i) at ts for every series i of t and commits.
func (t *target) commit(ctx context.Context, db *tsdb.DB, ts int64, value func(i int) float64) error {
	app := db.Appender(ctx)
	for i, ls := range t.series {
		ref, err := app.Append(t.refs[i], ls, ts, value(i))
		if err != nil {
			return errors.Join(fmt.Errorf("append to %s: %w", t.instance, err), app.Rollback())
		}
		t.refs[i] = ref
	}
	if err := app.Commit(); err != nil {
		return fmt.Errorf("commit %s: %w", t.instance, err)
	}
	return nil
}

// topMetricName returns the metric name with the most series in targets
// (the smallest such name on a tie), and its series count.
func topMetricName(targets []*target) (string, int) {
	counts := map[string]int{}
	for _, t := range targets {
		for _, ls := range t.series {
			counts[ls.Get(labels.MetricName)]++
		}
	}
	best, n := "", 0
	for name, c := range counts {
		if c > n || c == n && name < best {
			best, n = name, c
		}
	}
	return best, n
}
