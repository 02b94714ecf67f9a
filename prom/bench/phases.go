package main

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// maxLag is how many scrape rounds (of 15 s) a writer of ingest may run
// ahead of the slowest one. Both stores reject a sample older than half a
// block range (30 min, 120 rounds) before the newest sample of the head,
// as Prometheus's head does; real scrapes are paced by the clock and never
// drift apart, but the writers here run flat out, and a writer descheduled
// for a moment on a loaded machine used to fall more than 120 rounds
// behind the other, whose samples then made its own out of bounds. 40
// rounds (10 min of data) leaves room for the targets' offsets and costs
// nothing while the writers keep pace.
const maxLag = 40

// pacer keeps the writers of one ingest call within maxLag rounds of each
// other. done[w] counts the rounds writer w completed; a writer that
// returns counts as done with every round, so that an error never blocks
// the others. All fields are guarded by mu.
type pacer struct {
	mu   sync.Mutex
	cond sync.Cond
	done []int
}

// pacerWaitHook, if set (by tests), is called when writer w is about to
// wait for the others before starting round r (counted from ingest's
// from).
var pacerWaitHook func(w, r int)

func newPacer(n int) *pacer {
	p := &pacer{done: make([]int, n)}
	p.cond.L = &p.mu
	return p
}

// start waits until writer w may start round r: every writer has
// completed at least r-maxLag rounds.
func (p *pacer) start(w, r int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for slices.Min(p.done) < r-maxLag {
		if pacerWaitHook != nil {
			pacerWaitHook(w, r)
		}
		p.cond.Wait()
	}
}

// finish records that writer w completed n rounds.
func (p *pacer) finish(w, n int) {
	p.mu.Lock()
	p.done[w] = n
	p.mu.Unlock()
	p.cond.Broadcast()
}

// ingest writes rounds [from, to) of every target with `writers`
// goroutines, one commit per target per round, none more than maxLag
// rounds ahead of another; refs caches series refs (writers touch
// disjoint indexes). It returns the number of samples.
func ingest(s store, c *corpus, refs []uint64, from, to int) (int, error) {
	return scrapeRounds(c.targets(), from, to, func(k, r int) (int, error) {
		lo, hi := c.target(k)
		t := scrapeTime(k, r)
		app := s.appender()
		for i := lo; i < hi; i++ {
			ref, err := app.append(refs[i], i, t, c.value(i, r))
			if err != nil {
				_ = app.rollback()
				return 0, fmt.Errorf("bench: append series %d round %d: %w", i, r, err)
			}
			refs[i] = ref
		}
		if err := app.commit(); err != nil {
			return 0, fmt.Errorf("bench: commit target %d round %d: %w", k, r, err)
		}
		return hi - lo, nil
	})
}

// scrapeRounds runs scrape(k, r) for rounds [from, to) of targets targets
// with `writers` goroutines, writer w taking targets w, w+writers, ...,
// none more than maxLag rounds ahead of another. scrape writes target k's
// round r in one commit and returns its number of samples; scrapeRounds
// returns their sum.
func scrapeRounds(targets, from, to int, scrape func(k, r int) (int, error)) (int, error) {
	var g errgroup.Group
	var samples atomic.Int64
	pace := newPacer(writers)
	for w := range writers {
		g.Go(func() error {
			defer pace.finish(w, math.MaxInt)
			n := 0
			for r := from; r < to; r++ {
				pace.start(w, r-from)
				for k := w; k < targets; k += writers {
					m, err := scrape(k, r)
					if err != nil {
						return err
					}
					n += m
				}
				pace.finish(w, r-from+1)
			}
			samples.Add(int64(n))
			return nil
		})
	}
	err := g.Wait()
	return int(samples.Load()), err
}

// queryStats is what a set of query executions measured.
type queryStats struct {
	latencies map[string][]time.Duration // by query name
	all       []time.Duration
	samples   int
	wall      time.Duration
}

func newQueryStats() *queryStats {
	return &queryStats{latencies: map[string][]time.Duration{}}
}

// run executes q once and records it.
func (qs *queryStats) run(s store, q *query, mint, maxt int64) error {
	start := time.Now()
	series, n, err := s.query(q, mint, maxt)
	d := time.Since(start)
	if err != nil {
		return fmt.Errorf("bench: query %s: %w", q.name, err)
	}
	if series == 0 {
		return fmt.Errorf("bench: query %s matched no series", q.name)
	}
	qs.latencies[q.name] = append(qs.latencies[q.name], d)
	qs.all = append(qs.all, d)
	qs.samples += n
	qs.wall += d
	return nil
}

// readPhase runs reps rounds over [mint, maxt], each running every query
// q.weight times, interleaved.
func readPhase(s store, qs []*query, reps int, mint, maxt int64) (*queryStats, error) {
	st := newQueryStats()
	for range reps {
		for _, q := range qs {
			for range max(q.weight, 1) {
				if err := st.run(s, q, mint, maxt); err != nil {
					return nil, err
				}
			}
		}
	}
	return st, nil
}

// readWhileWrite ingests rounds [from, to) while one reader runs the
// queries in turn over [mint, the newest round) until the writers finish.
func readWhileWrite(s store, c *corpus, refs []uint64, qs []*query, from, to int, mint int64) (ingested int, u usage, st *queryStats, err error) {
	st = newQueryStats()
	done := make(chan struct{})
	var rerr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if rerr = st.run(s, qs[i%len(qs)], mint, maxTime(to, c.targets())); rerr != nil {
				return
			}
		}
	}()
	m := startMeter()
	ingested, err = ingest(s, c, refs, from, to)
	u = m.stop()
	close(done)
	wg.Wait()
	if err == nil {
		err = rerr
	}
	return ingested, u, st, err
}

// diskPerSample returns the bytes of all blocks on disk and the samples in
// them.
func diskPerSample(s store) (bytes, samples uint64, err error) {
	for _, b := range s.blocks() {
		samples += b.samples
		err = filepath.WalkDir(b.dir, func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			bytes += uint64(fi.Size())
			return nil
		})
		if err != nil {
			return 0, 0, fmt.Errorf("bench: block size: %w", err)
		}
	}
	return bytes, samples, nil
}

// stress runs the isolation stress workload: stressAppenders goroutines,
// each with its own stressSeries series, each committing `commits`
// transactions of 1–10 samples (commit indexes [first, first+commits)
// set the timestamps). It returns the number of samples.
func stress(s store, appenders, first, commits int) (int, error) {
	var g errgroup.Group
	var samples atomic.Int64
	start := make(chan struct{})
	for a := range appenders {
		g.Go(func() error {
			<-start
			refs := make([]uint64, stressSeries)
			n := 0
			for c := first; c < first+commits; c++ {
				k := 1 + int(mix(uint64(a), uint64(c))%stressSeries)
				t := baseTime + int64(c)*1000
				app := s.appender()
				for j := range k {
					ref, err := app.append(refs[j], a*stressSeries+j, t, float64(c))
					if err != nil {
						_ = app.rollback()
						return fmt.Errorf("bench: stress append: %w", err)
					}
					refs[j] = ref
				}
				if err := app.commit(); err != nil {
					return fmt.Errorf("bench: stress commit: %w", err)
				}
				n += k
			}
			samples.Add(int64(n))
			return nil
		})
	}
	close(start)
	err := g.Wait()
	return int(samples.Load()), err
}

// queryStart opens openAppends appenders, each with one sample buffered
// (a write in flight), and returns the median time to open and close a
// querier over [mint, maxt] while they are open, measured in batches.
func queryStart(s store, c *corpus, t, mint, maxt int64, batches, perBatch int) (time.Duration, error) {
	apps := make([]appender, openAppends)
	for i := range apps {
		apps[i] = s.appender()
		if _, err := apps[i].append(0, i%len(c.series), t, 1); err != nil {
			return 0, fmt.Errorf("bench: open appender: %w", err)
		}
	}
	defer func() {
		for _, a := range apps {
			_ = a.rollback()
		}
	}()
	ds := make([]time.Duration, 0, batches)
	for range batches {
		start := time.Now()
		for range perBatch {
			if err := s.startQuery(mint, maxt); err != nil {
				return 0, err
			}
		}
		ds = append(ds, time.Since(start)/time.Duration(perBatch))
	}
	return percentile(ds, 0.5), nil
}
