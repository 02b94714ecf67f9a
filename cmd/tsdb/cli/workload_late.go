package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	tsdb "github.com/isotsdb/tsdb"
)

// Late samples: the workload of --late-frac.
//
// At every scrape a target in late mode holds back each series' sample
// with probability --late-frac, and appends it 1 to maxLateDelay scrapes
// later, in the commit of that later scrape, after the scrape's own
// samples: every commit mixes the in-order samples of its scrape with late
// samples of earlier scrapes, which lie behind their series' newest sample.
// The choice is drawn from a random stream of its own (lateSchedule), so
// the same seed gives the same schedule and the values do not change with
// the fraction. Samples still held when the benchmark ends are appended
// by one last commit per target, which holds only late samples.

const (
	// maxLateDelay is the most scrapes a late sample arrives after its own.
	maxLateDelay = 10
	// defaultOOOWindow is --ooo-window when --late-frac is set and the
	// window is not: 120 scrapes, far more than the maxLateDelay a late
	// sample can trail, so the head takes every late sample; and at most
	// half the default 2h block range, as Options.OutOfOrderTimeWindow
	// asks for a window that works fully.
	defaultOOOWindow = 30 * time.Minute
	// Late schedules' random streams, apart from the value generators'
	// (stream = target index) and from each other.
	lateStreamIngest = 1 << 62
	lateStreamCheck  = 1<<62 + 1<<61
)

// lateSample is a sample held back by a lateSchedule.
type lateSample struct {
	series int32   // index in the target's series
	round  int32   // scrape the sample belongs to
	due    int32   // scrape whose commit appends it
	t      int64   // time of the sample: its scrape's
	v      float64 // value of the sample, if the schedule was given values
}

// commitPlan is what the commit of one scrape holds in late mode: a
// sample at the scrape's time for every series but the held ones, and
// the late samples due.
type commitPlan struct {
	round int
	held  []int32      // series whose sample of this scrape is held back, ascending
	late  []lateSample // samples of earlier scrapes, by round, then series
}

// holds reports whether the commit appends series' sample of scrape round.
func (p *commitPlan) holds(series int32, round int) bool {
	if round == p.round {
		_, held := slices.BinarySearch(p.held, series)
		return !held
	}
	for _, l := range p.late {
		if l.series == series && int(l.round) == round {
			return true
		}
	}
	return false
}

// samplesFrom returns how many samples of the commit belong to scrapes
// from round from on, of a target of n series.
func (p *commitPlan) samplesFrom(from, n int) int {
	c := 0
	if p.round >= from {
		c = n - len(p.held)
	}
	for _, l := range p.late {
		if int(l.round) >= from {
			c++
		}
	}
	return c
}

// lateSchedule decides which samples of a target of n series arrive late,
// and when. It is deterministic: two schedules made with the same
// arguments plan the same commits. It is used by one goroutine at a time.
type lateSchedule struct {
	frac  float64
	n     int
	rng   *rand.Rand
	round int // the next scrape to plan
	// pending holds the held samples by due round modulo its length; a
	// delay of 1 to maxLateDelay never reaches the slot of the round
	// being planned.
	pending [maxLateDelay + 1][]lateSample
}

func newLateSchedule(frac float64, n int, seed, stream uint64) *lateSchedule {
	return &lateSchedule{frac: frac, n: n, rng: rand.New(rand.NewPCG(seed, stream))}
}

// next plans the commit of the next scrape, at time ts. vals are the
// scrape's values, one per series, kept with the samples held back; nil
// means 0. The plan's slices are the caller's.
func (s *lateSchedule) next(ts int64, vals []float64) commitPlan {
	r := s.round
	s.round++
	slot := &s.pending[r%len(s.pending)]
	p := commitPlan{round: r, late: *slot}
	*slot = nil
	for i := range s.n {
		if s.rng.Float64() >= s.frac {
			continue
		}
		d := 1 + s.rng.IntN(maxLateDelay)
		v := 0.0
		if vals != nil {
			v = vals[i]
		}
		q := &s.pending[(r+d)%len(s.pending)]
		*q = append(*q, lateSample{series: int32(i), round: int32(r), due: int32(r + d), t: ts, v: v})
		p.held = append(p.held, int32(i))
	}
	return p
}

// drain returns the samples still held, by due round, and forgets them.
func (s *lateSchedule) drain() []lateSample {
	var all []lateSample
	for i := range s.pending {
		all = append(all, s.pending[i]...)
		s.pending[i] = nil
	}
	slices.SortStableFunc(all, func(a, b lateSample) int {
		if a.due != b.due {
			return int(a.due - b.due)
		}
		if a.round != b.round {
			return int(a.round - b.round)
		}
		return int(a.series - b.series)
	})
	return all
}

// enableLate puts t in late mode: a fraction frac of its samples arrive
// late, on a schedule seeded from seed and t's index.
func (t *target) enableLate(frac float64, seed uint64) {
	t.late = newLateSchedule(frac, len(t.series), seed, lateStreamIngest+uint64(t.index))
	t.vals = make([]float64, len(t.series))
}

// planLateScrape draws the values of t's next scrape, at time ts, into
// t.vals and plans its commit. t must be in late mode.
func (t *target) planLateScrape(ts int64) commitPlan {
	for i := range t.gens {
		t.vals[i] = t.gens[i].next(t.rng)
	}
	return t.late.next(ts, t.vals)
}

// lateCounts counts a commit's late samples.
type lateCounts struct {
	written, rejected int
	// firstRejection is why the first rejected late sample was rejected.
	firstRejection error
}

// isLateRejection reports whether err rejects a late sample for its time:
// too old for the window, out of the head's range, or out of order (the
// head takes no late samples). These are counted, not fatal.
func isLateRejection(err error) bool {
	return errors.Is(err, tsdb.ErrTooOldSample) || errors.Is(err, tsdb.ErrOutOfOrderSample) ||
		errors.Is(err, tsdb.ErrOutOfBounds)
}

// commitPlanned appends p's samples of t and commits: first the in-order
// samples at time ts, series i with value inOrder(i), then the late
// samples, each with value late(l). A late sample the head rejects for
// its time is counted, and passed to onReject (if not nil) before the
// commit; any other error aborts the commit.
func (t *target) commitPlanned(ctx context.Context, db *tsdb.DB, p *commitPlan, ts int64,
	inOrder func(i int) float64, late func(l *lateSample) float64, onReject func(l *lateSample)) (c lateCounts, err error) {
	app := db.Appender(ctx)
	fail := func(err error) (lateCounts, error) {
		return c, errors.Join(fmt.Errorf("append to %s: %w", t.instance, err), app.Rollback())
	}
	h := 0 // next held series
	for i, ls := range t.series {
		if h < len(p.held) && int(p.held[h]) == i {
			h++
			continue
		}
		ref, err := app.Append(t.refs[i], ls, ts, inOrder(i))
		if err != nil {
			return fail(err)
		}
		t.refs[i] = ref
	}
	for j := range p.late {
		l := &p.late[j]
		ref, err := app.Append(t.refs[l.series], t.series[l.series], l.t, late(l))
		switch {
		case err == nil:
			t.refs[l.series] = ref
			c.written++
		case isLateRejection(err):
			c.rejected++
			if c.firstRejection == nil {
				c.firstRejection = err
			}
			if onReject != nil {
				onReject(l)
			}
		default:
			return fail(err)
		}
	}
	if err := app.Commit(); err != nil {
		return c, fmt.Errorf("commit %s: %w", t.instance, err)
	}
	return c, nil
}

// scrapeLate commits t's next scrape, at time ts, in late mode, and
// returns the number of samples written and the late counts.
func (t *target) scrapeLate(ctx context.Context, db *tsdb.DB, ts int64) (int, lateCounts, error) {
	p := t.planLateScrape(ts)
	c, err := t.commitPlanned(ctx, db, &p, ts,
		func(i int) float64 { return t.vals[i] },
		func(l *lateSample) float64 { return l.v }, nil)
	return len(t.series) - len(p.held) + c.written, c, err
}

// commitLateConstant commits the next scrape of sched, at time ts, with
// value v in every sample, in-order or late: the read-while-write check's
// commits in late mode. The late samples the head rejects are recorded in
// rejects before the commit, so that readers do not expect them.
func (t *target) commitLateConstant(ctx context.Context, db *tsdb.DB, sched *lateSchedule, rejects *lateRejects,
	ts int64, v float64) (lateCounts, error) {
	p := sched.next(ts, nil)
	return t.commitPlanned(ctx, db, &p, ts, func(int) float64 { return v }, func(*lateSample) float64 { return v },
		func(l *lateSample) { rejects.add(p.round, *l) })
}

// lateRejects records the late samples the head rejected, by commit, for
// the readers of the read-while-write check. It is safe for concurrent
// use.
type lateRejects struct {
	mu sync.Mutex // protects the fields below
	m  map[int][]lateSample
}

func (r *lateRejects) add(commit int, l lateSample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[int][]lateSample{}
	}
	r.m[commit] = append(r.m[commit], l)
}

// of returns the late samples of commit that the head rejected. All are
// known once the commit has begun to apply: they are added before it.
func (r *lateRejects) of(commit int) []lateSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.m[commit])
}

// without removes rejected from p's late samples.
func (p *commitPlan) without(rejected []lateSample) {
	p.late = slices.DeleteFunc(p.late, func(l lateSample) bool {
		return slices.ContainsFunc(rejected, func(r lateSample) bool { return r.series == l.series && r.round == l.round })
	})
}

// flushLate commits the late samples t still holds, if any, in one commit
// of late samples only.
func (t *target) flushLate(ctx context.Context, db *tsdb.DB) (lateCounts, error) {
	all := t.late.drain()
	if len(all) == 0 {
		return lateCounts{}, nil
	}
	// Every series is "held": the plan has no in-order sample.
	p := commitPlan{round: -1, late: all, held: make([]int32, len(t.series))}
	for i := range p.held {
		p.held[i] = int32(i)
	}
	return t.commitPlanned(ctx, db, &p, 0, nil, func(l *lateSample) float64 { return l.v }, nil)
}
