package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
)

// The read-while-write check.
//
// Each writer owns one target and commits whole scrapes of it back to back:
// scrape k has time checkStart + k*scrapeInterval and value k in every
// series. Readers each query one of those targets over and over, from the
// newest time they have seen onwards, and look at the newest sample of
// every series:
//
//   - a partial read is a query in which the target's series disagree on
//     their newest sample (or some have none in the range): it saw part of
//     a commit;
//   - a backwards read is a query whose newest sample is older than the
//     previous query's (or missing where the previous one had one);
//   - a wrong value is a sample whose value is not the one its time was
//     written with.
//
// With isolation every query sees whole commits, so the first two counts
// are 0. Without it a query that reads a target while a commit of that
// target is half applied sees a partial read; writers that never pause and
// readers that never pause make that frequent. Wrong values mean broken
// storage whatever the isolation setting.
//
// With --late-frac the commits also carry late samples, and readers judge
// whole commits instead of newest samples: see readcheck_late.go.

// readCheckResult is the outcome of the read-while-write check.
type readCheckResult struct {
	duration        time.Duration
	writers         int // one target each
	readers         int
	seriesPerTarget int
	commits         int64
	reads           int64
	partial         int64
	backwards       int64
	wrongValues     int64
	lateFrac        float64 // cfg.lateFrac: 0 is the in-order check
	lateSamples     int64   // late samples written (late mode)
	lateRejected    int64   // late samples the head rejected (late mode)
}

// failure describes what went wrong in the check, or returns "" if
// nothing did. Wrong values are always a failure; partial and backwards
// reads only when isolation is on.
func (r readCheckResult) failure(isolation bool) string {
	switch {
	case r.wrongValues > 0:
		return fmt.Sprintf("read-while-write check: %d samples with wrong values", r.wrongValues)
	case isolation && r.partial+r.backwards > 0:
		return fmt.Sprintf("isolation violated: %d partial and %d backwards reads", r.partial, r.backwards)
	}
	return ""
}

// noSample stands for "no sample in the queried range" in newest-time
// comparisons; it is older than every real time.
const noSample = math.MinInt64

// readCheck runs the check for cfg.checkDuration on the first cfg.writers
// targets, writing from time checkStart on.
func readCheck(ctx context.Context, db *tsdb.DB, targets []*target, checkStart int64, cfg benchWriteConfig) (readCheckResult, error) {
	checked := targets[:min(cfg.writers, len(targets))]
	res := readCheckResult{
		duration:        cfg.checkDuration,
		writers:         len(checked),
		readers:         cfg.readers,
		seriesPerTarget: len(checked[0].series),
		lateFrac:        cfg.lateFrac,
	}
	// Late mode: every target's writer follows a schedule of its own,
	// which its readers replay, and records the late samples the head
	// rejects; begun counts the commits begun, of every target.
	var (
		scheds                           []*lateSchedule
		rejects                          []*lateRejects
		begun, lateSamples, lateRejected atomic.Int64
	)
	newSched := func(t *target) *lateSchedule {
		return newLateSchedule(cfg.lateFrac, len(t.series), cfg.seed, lateStreamCheck+uint64(t.index))
	}
	if cfg.lateFrac > 0 {
		for _, t := range checked {
			scheds = append(scheds, newSched(t))
			rejects = append(rejects, &lateRejects{})
		}
	}
	var commits, reads, partial, backwards, wrong atomic.Int64
	deadline := time.Now().Add(cfg.checkDuration)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		// All writers commit scrape k before any starts scrape k+1: the
		// head accepts samples only within an hour (240 scrapes) of its
		// newest, so no writer may run ahead of the others.
		for k := int64(0); time.Now().Before(deadline); k++ {
			begun.Store(k + 1)
			wg, wctx := errgroup.WithContext(gctx)
			for i, t := range checked {
				ts := checkStart + k*scrapeInterval
				if scheds == nil {
					wg.Go(func() error {
						return t.scrapeConstant(wctx, db, ts, float64(k))
					})
					continue
				}
				wg.Go(func() error {
					c, err := t.commitLateConstant(wctx, db, scheds[i], rejects[i], ts, float64(k))
					lateSamples.Add(int64(c.written))
					lateRejected.Add(int64(c.rejected))
					return err
				})
			}
			if err := wg.Wait(); err != nil {
				return err
			}
			commits.Add(int64(len(checked)))
		}
		return nil
	})
	for r := range cfg.readers {
		ti := r % len(checked)
		t := checked[ti]
		sel := []*labels.Matcher{{Type: labels.MatchEqual, Name: "instance", Value: t.instance}}
		var rd interface {
			read(context.Context) (readOutcome, error)
		} = &checkReader{db: db, sel: sel, want: len(t.series), checkStart: checkStart, last: noSample, seen: noSample}
		if scheds != nil {
			rd = newLateCheckReader(db, t, checkStart, newSched(t), rejects[ti], &begun)
		}
		g.Go(func() error {
			for time.Now().Before(deadline) {
				if err := gctx.Err(); err != nil {
					return err
				}
				o, err := rd.read(gctx)
				if err != nil {
					return fmt.Errorf("read %s: %w", t.instance, err)
				}
				reads.Add(1)
				partial.Add(b2i(o.partial))
				backwards.Add(b2i(o.backwards))
				wrong.Add(o.wrongValues)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return res, fmt.Errorf("read-while-write check: %w", err)
	}
	res.commits, res.reads = commits.Load(), reads.Load()
	res.partial, res.backwards, res.wrongValues = partial.Load(), backwards.Load(), wrong.Load()
	res.lateSamples, res.lateRejected = lateSamples.Load(), lateRejected.Load()
	return res, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// checkReader is one reader goroutine's state.
type checkReader struct {
	db         *tsdb.DB
	sel        []*labels.Matcher
	want       int   // series in the target
	checkStart int64 // time of the check's first scrape
	last       int64 // newest time the previous query saw, or noSample
	seen       int64 // newest time any query saw, or noSample
	it         chunks.Iterator
}

// readOutcome classifies one query.
type readOutcome struct {
	partial, backwards bool
	wrongValues        int64
}

// read runs one query of the target, from the newest time seen so far (or
// the check's start) on: older samples cannot change the verdict, and
// skipping them keeps every read short however long the check runs.
func (c *checkReader) read(ctx context.Context) (o readOutcome, err error) {
	q, err := c.db.Querier(max(c.seen, c.checkStart), math.MaxInt64)
	if err != nil {
		return o, err
	}
	defer func() { err = errors.Join(err, q.Close()) }()
	ss := q.Select(ctx, c.sel...)
	n := 0
	newest := int64(noSample)
	for ss.Next() {
		c.it = ss.At().Iterator(c.it)
		st, sv, ok := int64(noSample), 0.0, false
		for vt := c.it.Next(); vt != chunks.ValNone; vt = c.it.Next() {
			st, sv, ok = c.it.AtT(), math.NaN(), true // a histogram is a wrong value
			if vt == chunks.ValFloat {
				st, sv = c.it.At()
			}
		}
		if err := c.it.Err(); err != nil {
			return o, err
		}
		if !ok {
			st = noSample
		} else if k := st - c.checkStart; k%scrapeInterval != 0 || sv != float64(k/scrapeInterval) {
			o.wrongValues++
		}
		if n == 0 {
			newest = st
		} else if st != newest {
			o.partial = true
			newest = max(newest, st)
		}
		n++
	}
	if err := ss.Err(); err != nil {
		return o, err
	}
	if n > c.want {
		return o, fmt.Errorf("query returned %d series, the target has %d", n, c.want)
	}
	// Series without samples in the range may be left out of the result:
	// fewer series than the target has, but some, is a partial read too.
	if n > 0 && n < c.want {
		o.partial = true
	}
	if n == 0 {
		newest = noSample
	}
	o.backwards = c.last != noSample && newest < c.last
	c.last = newest
	c.seen = max(c.seen, newest)
	return o, nil
}
