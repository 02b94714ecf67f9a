package main

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The late phase: the float scrape with p.lateFrac of the samples 1–10
// minutes late (see lateSchedule), on stores with the out-of-order window
// lateWindow, isolation on. It measures ingest CPU per sample (every
// sample appended, on time or late), then the read phase's queries over
// the full range, and checks that every sample written was read back,
// except those the store rejected, which are counted and reported, not
// fatal (isotsdb rejects late samples until its head accepts them). The
// cost of the window itself is measured paired, as the isolation cost is
// (see isocost.go): one store with the window and one without, in-order
// samples only.

// lateCheckQuery selects every float series, for the read-back check.
var lateCheckQuery = &query{name: "everything (late check)", matchers: []matcher{{name: "job", value: "bench"}}}

// lateIngest is what ingestLate counted.
type lateIngest struct {
	appended int    // samples appended, on time and late, rejected or not
	rejected int    // late samples the store rejected
	lost     digest // the rejected samples (see latecheck.go)
	firstErr error  // the first rejection, for the log
}

// addUp adds the counts of li to l; l's firstErr stays if it has one.
func (l *lateIngest) addUp(li lateIngest) {
	l.appended += li.appended
	l.rejected += li.rejected
	l.lost.samples += li.lost.samples
	l.lost.sum += li.lost.sum
	if l.firstErr == nil {
		l.firstErr = li.firstErr
	}
}

// ingestLate writes rounds [from, to) of the late workload of schedule ls
// (all of it: 0, ls.totalRounds()) to s: in round r,
// each target's commit holds its on-time samples of round r and the late
// samples due in r; rounds after the scrape's last hold late samples only
// (a target with nothing due commits nothing). refs caches series refs. A
// late sample the store rejects is counted; any other error ends the
// phase.
func ingestLate(s store, c *corpus, ls *lateSchedule, refs []uint64, from, to int) (lateIngest, error) {
	var rejected atomic.Int64
	var mu sync.Mutex
	var firstErr error // guarded by mu
	var lost digest    // guarded by mu
	n, err := scrapeRounds(c.targets(), from, to, func(k, r int) (int, error) {
		lo, hi := c.target(k)
		app := s.appender()
		n := 0
		if r < ls.rounds {
			t := scrapeTime(k, r)
			held := ls.heldIn(r, lo, hi)
			for i := lo; i < hi; i++ {
				if len(held) > 0 && int(held[0]) == i {
					held = held[1:]
					continue
				}
				ref, err := app.append(refs[i], i, t, c.value(i, r))
				if err != nil {
					_ = app.rollback()
					return 0, fmt.Errorf("bench: append series %d round %d: %w", i, r, err)
				}
				refs[i] = ref
				n++
			}
		}
		for _, d := range ls.dueIn(r, lo, hi) {
			i, r0 := int(d.series), int(d.round)
			n++
			t, v := scrapeTime(k, r0), c.value(i, r0)
			ref, err := app.append(refs[i], i, t, v)
			if err != nil {
				mu.Lock()
				if rejected.Add(1) == 1 {
					firstErr = fmt.Errorf("series %d round %d appended in round %d: %w", i, r0, r, err)
				}
				lost.add(i, t, v)
				mu.Unlock()
				continue
			}
			refs[i] = ref
		}
		if n == 0 {
			return 0, app.rollback()
		}
		if err := app.commit(); err != nil {
			return 0, fmt.Errorf("bench: commit target %d round %d: %w", k, r, err)
		}
		return n, nil
	})
	mu.Lock()
	defer mu.Unlock()
	return lateIngest{appended: n, rejected: int(rejected.Load()), lost: lost, firstErr: firstErr}, err
}

// runLate runs the late phase on a fresh store of configuration cfg and
// returns its figures: late.cpu, late.rate (per sample appended),
// late.read.rate, late.late (late samples appended) and late.rejected. It
// fails if the samples read back are not those written less those
// rejected.
func runLate(cfg config, c *corpus, qs []*query, ls *lateSchedule, p params, log func(string)) (figures, error) {
	dir, err := os.MkdirTemp(p.tmp, "late-"+cfg.kind.String()+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := openStore(cfg.kind, storeConfig{dir: dir, isolation: cfg.isolation, series: c.series, lateWindow: lateWindow})
	if err != nil {
		return nil, err
	}
	defer s.close()
	refs := make([]uint64, len(c.series))

	m := startMeter()
	li, err := ingestLate(s, c, ls, refs, 0, ls.totalRounds())
	u := m.stop()
	if err != nil {
		return nil, fmt.Errorf("bench: late phase: %w", err)
	}
	written := ls.rounds * len(c.series)
	if li.appended != written {
		return nil, fmt.Errorf("bench: late phase appended %d samples, the schedule has %d", li.appended, written)
	}
	if li.firstErr != nil {
		log(fmt.Sprintf("%s: late phase: %d of %d late samples rejected, the first: %v", cfg, li.rejected, ls.late, li.firstErr))
	}
	f := figures{
		"late.cpu":      float64(u.cpu.Nanoseconds()) / float64(li.appended),
		"late.rate":     float64(li.appended) / u.wall.Seconds(),
		"late.late":     float64(ls.late),
		"late.rejected": float64(li.rejected),
	}

	mint, maxt := baseTime, maxTime(ls.rounds, c.targets())
	st, err := readPhase(s, qs, p.readReps, mint, maxt)
	if err != nil {
		return nil, fmt.Errorf("bench: late phase: %w", err)
	}
	f["late.read.rate"] = float64(st.samples) / st.wall.Seconds()

	_, got, err := s.query(lateCheckQuery, mint, maxt)
	if err != nil {
		return nil, fmt.Errorf("bench: late phase: read back: %w", err)
	}
	if want := written - li.rejected; got != want {
		return nil, fmt.Errorf("bench: late phase: %s read back %d samples, want %d (%d written, %d rejected)", cfg, got, want, written, li.rejected)
	}
	return f, s.close()
}

// runLateCost measures the paired cost of the out-of-order window of
// store kind k on the in-order scrape: a store with the window lateWindow
// and one without, isolation on in both, written in alternating blocks of
// one scrape round, as runIsolationCost does. latecost.scrape is the
// median over pairs of cpu(window on)/cpu(window off).
func runLateCost(k storeKind, c *corpus, p params) (figures, error) {
	start := time.Now()
	on := storeConfig{isolation: true, series: c.series, lateWindow: lateWindow}
	off := storeConfig{isolation: true, series: c.series}
	var ratios []float64
	for _, onFirst := range []bool{true, false} {
		err := openPair(k, on, off, p.tmp, onFirst, func(on, off store) error {
			r, err := pairedScrape(on, off, c, p.rounds)
			ratios = append(ratios, r...)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("bench: paired out-of-order window cost of %s: %w", k, err)
		}
	}
	return figures{
		"latecost.scrape":  medianOf(ratios),
		"latecost.seconds": time.Since(start).Seconds(),
	}, nil
}
