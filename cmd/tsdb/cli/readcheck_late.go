package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
)

// The read-while-write check in late mode.
//
// Commit k of a target holds the samples its lateSchedule plans for scrape
// k: one at time checkStart + k*scrapeInterval in every series not held
// back, and the late samples due, which lie 1 to maxLateDelay scrapes in
// the past, behind their series' newest sample. Every sample of commit k,
// in-order or late, has value k, so a sample names the commit that wrote
// it. A reader replays the writer's schedule (same seed, same plans), so
// it knows what every commit holds without asking the writer; only the
// late samples the head rejects (too old for the window, or no late
// samples taken at all) the writer records, before the commit, in
// lateRejects, and readers do not expect them. The report counts them.
//
// A query covers the scrapes from maxLateDelay before the newest commit any
// earlier query saw: that commit and all later ones lie wholly in the
// range (a late sample trails its commit by at most maxLateDelay scrapes),
// and of the commits before it, the samples in the range are checked. Let
// K be the newest commit the query saw a sample of. Then
//
//   - a partial read is a query in which a commit up to K, from the first
//     scrape queried on, is not whole: some of its samples in the queried
//     range are missing (part of a commit, or a gap before a later one);
//   - a backwards read is a query whose K is older than the previous
//     query's;
//   - a wrong value is a sample that no commit wrote there: a value that
//     is no commit number, or a commit that did not write that series at
//     that time.
//
// Writers commit back to back and readers never pause, as in the in-order
// check; a commit touches every series of its target, so without
// isolation a query running while a commit is applied sees part of it.

// tv is one sample of a query: time and value.
type tv struct {
	t int64
	v float64
}

// commitJudge judges queries of one target in late mode. It replays the
// target's schedule as far as the queries need, and forgets the plans of
// commits no query will look at again. It is used by one goroutine.
type commitJudge struct {
	n          int   // series in the target
	checkStart int64 // time of scrape 0
	sched      *lateSchedule
	rejects    *lateRejects // late samples the writer could not write; nil: none
	plans      []commitPlan // of commits base, base+1, ...; sched plans base+len(plans) next
	base       int
	last       int // newest commit the previous query saw; -1: none
	seen       int // newest commit any query saw; -1: none
	counts     []int
}

func newCommitJudge(n int, checkStart int64, sched *lateSchedule, rejects *lateRejects) *commitJudge {
	return &commitJudge{n: n, checkStart: checkStart, sched: sched, rejects: rejects, last: -1, seen: -1}
}

// from is the first scrape the next query must cover.
func (j *commitJudge) from() int { return max(j.seen-maxLateDelay, 0) }

// plan returns the plan of commit k, which must be at least j.base,
// without the late samples the head rejected. Commit k must have begun to
// apply: the rejections of commits not yet applied are not all known.
// The commits before one that applies have applied.
func (j *commitJudge) plan(k int) *commitPlan {
	for j.base+len(j.plans) <= k {
		r := j.base + len(j.plans)
		p := j.sched.next(j.checkStart+int64(r)*scrapeInterval, nil)
		if j.rejects != nil {
			p.without(j.rejects.of(r))
		}
		j.plans = append(j.plans, p)
	}
	return &j.plans[k-j.base]
}

// judge classifies a query of the scrapes from j.from() on: obs[i] holds
// the samples of series i, in time order. Commits from begun on had not
// started when the query ended, so they cannot be seen.
func (j *commitJudge) judge(obs [][]tv, begun int) readOutcome {
	var o readOutcome
	from, newest := j.from(), -1
	j.counts = j.counts[:0]
	for i, ss := range obs {
		for _, s := range ss {
			off := s.t - j.checkStart
			if off < int64(from)*scrapeInterval {
				continue // outside the queried range
			}
			r := int(off / scrapeInterval)
			k := int(s.v)
			if off%scrapeInterval != 0 || float64(k) != s.v || k < r || k-r > maxLateDelay || k >= begun ||
				!j.plan(k).holds(int32(i), r) {
				o.wrongValues++
				continue
			}
			for len(j.counts) <= k-from {
				j.counts = append(j.counts, 0)
			}
			j.counts[k-from]++
			newest = max(newest, k)
		}
	}
	for k := from; k <= newest; k++ {
		if j.counts[k-from] != j.plan(k).samplesFrom(from, j.n) {
			o.partial = true
			break
		}
	}
	o.backwards = newest < j.last
	j.last = newest
	j.seen = max(j.seen, newest)
	// Forget the plans before the next query's range. The schedule
	// plans commit base+len(plans) next, so only replayed plans go.
	if drop := min(j.from()-j.base, len(j.plans)); drop > 0 {
		j.plans = append(j.plans[:0], j.plans[drop:]...)
		j.base += drop
	}
	return o
}

// lateCheckReader is one reader goroutine's state in late mode.
type lateCheckReader struct {
	db     *tsdb.DB
	sel    []*labels.Matcher
	series []labels.Labels
	index  map[uint64]int // series' position by label hash
	begun  *atomic.Int64  // commits of the target begun so far
	judge  *commitJudge
	obs    [][]tv
	it     chunks.Iterator
}

// newLateCheckReader returns a reader of target t, whose commits follow
// schedule sched from time checkStart on, but for the late samples in
// rejects.
func newLateCheckReader(db *tsdb.DB, t *target, checkStart int64, sched *lateSchedule, rejects *lateRejects,
	begun *atomic.Int64) *lateCheckReader {
	c := &lateCheckReader{
		db:     db,
		sel:    []*labels.Matcher{{Type: labels.MatchEqual, Name: "instance", Value: t.instance}},
		series: t.series,
		index:  make(map[uint64]int, len(t.series)),
		begun:  begun,
		judge:  newCommitJudge(len(t.series), checkStart, sched, rejects),
		obs:    make([][]tv, len(t.series)),
	}
	for i, ls := range t.series {
		c.index[ls.Hash()] = i
	}
	return c
}

// read runs one query of the target and judges it.
func (c *lateCheckReader) read(ctx context.Context) (o readOutcome, err error) {
	for i := range c.obs {
		c.obs[i] = c.obs[i][:0]
	}
	q, err := c.db.Querier(c.judge.checkStart+int64(c.judge.from())*scrapeInterval, math.MaxInt64)
	if err != nil {
		return o, err
	}
	defer func() { err = errors.Join(err, q.Close()) }()
	ss := q.Select(ctx, c.sel...)
	for ss.Next() {
		s := ss.At()
		ls := s.Labels()
		i, ok := c.index[ls.Hash()]
		if !ok || !labels.Equal(ls, c.series[i]) {
			return o, fmt.Errorf("query returned series %s, which the target does not have", ls)
		}
		c.it = s.Iterator(c.it)
		for vt := c.it.Next(); vt != chunks.ValNone; vt = c.it.Next() {
			if vt != chunks.ValFloat {
				c.obs[i] = append(c.obs[i], tv{c.it.AtT(), math.NaN()}) // a histogram is a wrong value
				continue
			}
			t, v := c.it.At()
			c.obs[i] = append(c.obs[i], tv{t, v})
		}
		if err := c.it.Err(); err != nil {
			return o, err
		}
	}
	if err := ss.Err(); err != nil {
		return o, err
	}
	// Read after the query: every commit it could see had begun by now.
	return c.judge.judge(c.obs, int(c.begun.Load())), nil
}
