package main

import (
	"fmt"
)

// Ingest that cuts blocks as it goes. Both stores compact their head in
// the background as soon as a commit leaves it spanning more than 1.5
// block ranges (the trigger is checked at every commit, in each store's
// own Commit), as a Prometheus server's head does. The writers run flat
// out, so that moment is a round of the scrape, the same in both stores,
// and it is known in advance (compactionRounds). ingestCutting stops the
// writers before such a round, takes the live heap, then writes the round
// (whose commits start the compaction) and calls compact(), which waits
// for the compaction in flight, while a heapWatch samples the heap: the
// peak over the live heap before is the compaction's own heap, plus the
// one round written meanwhile, in both stores alike. compact() is also
// called every few rounds (cutEvery), as a server's compaction loop
// would, to cut anything a trigger did not.

// With a late schedule (the late variants, phases_blocks_late.go), each
// stretch of rounds is written by ingestLate instead of ingest: the same
// rounds, with the schedule's share of samples held back and appended 1–10
// minutes later, then the rounds of late samples alone after the last
// scrape. The trigger rounds stay those of the on-time samples: a late
// sample never moves a head's newest time. Late samples thus fall in the
// stores' out-of-order heads (and WBLs) and, where the window reaches
// back past the last block cut, in ranges already in a block, which the
// next compaction writes as an overlapping block and merges.

// cutEvery is how many rounds (of 15 s) ingestCutting writes between
// calls to compact(): 30 min of data.
const cutEvery = 120

// compactionRounds returns the rounds of [0, rounds) of targets targets
// in which the head of a store with block range br (ms) becomes
// compactable: some commit of the round leaves it spanning more than
// br*1.5, counted from its oldest sample (round 0's, baseTime) or, after
// a compaction, from the end of the last block cut. Blocks are aligned to
// multiples of br.
func compactionRounds(rounds, targets int, br int64) []int {
	var out []int
	headMin := baseTime
	for r := range rounds {
		newest := maxTime(r+1, targets) // round r's newest sample
		if newest-headMin <= br/2*3 {
			continue
		}
		out = append(out, r)
		for newest-headMin > br/2*3 {
			headMin = floorTo(headMin, br) + br
		}
	}
	return out
}

// floorTo rounds t down to a multiple of d.
func floorTo(t, d int64) int64 { return t - ((t%d)+d)%d }

// cutStats is what ingestCutting measured.
type cutStats struct {
	samples     int   // samples written
	rounds      int   // rounds written (all of them, late samples' own rounds included, unless guard stopped it)
	ingest      usage // the whole ingest, compactions included (the live heap readings excluded)
	compact     usage // the trigger rounds and compact() calls
	compactions int   // compactions measured: a trigger round after which a block had been cut
	peakOver    uint64
	peakAbs     uint64     // the largest heap seen during a measured compaction
	late        lateIngest // with a late schedule: what ingestLate counted
}

// ingestCutting writes rounds [0, rounds) to s, a fresh store with block
// range br (ms), cutting blocks as described above; with a late schedule
// ls (of rounds rounds), the late workload, its rounds of late samples
// alone included, else the on-time scrape. guard, if not nil, is called
// before every stretch of rounds with the next round; its error stops the
// ingest (the figures so far are returned with it).
func ingestCutting(s store, c *corpus, refs []uint64, rounds int, br int64, ls *lateSchedule, guard func(next int) error) (cutStats, error) {
	var st cutStats
	triggers := compactionRounds(rounds, c.targets(), br)
	write := func(from, to int) (int, error) {
		if ls == nil {
			return ingest(s, c, refs, from, to)
		}
		li, err := ingestLate(s, c, ls, refs, from, to)
		st.late.addUp(li)
		return li.appended, err
	}
	total := rounds
	if ls != nil {
		total = ls.totalRounds()
	}
	// Each ingest call ends with both writers done, so writers drift
	// apart by at most one call's rounds; the pacer's maxLag (10 min) is
	// too much for blocks shorter than 40 min, whose appendable window,
	// half a block range before the newest sample, it would overrun.
	stretch := max(1, min(cutEvery, int(br/2/scrapeEvery/2)))
	add := func(u *usage, v usage) {
		u.wall += v.wall
		u.cpu += v.cpu
		u.mallocs += v.mallocs
	}
	for r := 0; r < total; {
		if guard != nil {
			if err := guard(r); err != nil {
				return st, err
			}
		}
		stop := min(total, (r/cutEvery+1)*cutEvery, r+stretch)
		for len(triggers) > 0 && triggers[0] < r {
			triggers = triggers[1:]
		}
		if len(triggers) > 0 && triggers[0] < stop {
			stop = triggers[0]
		}
		if stop > r {
			m := startMeter()
			n, err := write(r, stop)
			add(&st.ingest, m.stop())
			st.samples += n
			if err != nil {
				return st, err
			}
			st.rounds = stop
			r = stop
		}
		if len(triggers) > 0 && triggers[0] == r {
			before := liveHeap()
			blocks := len(s.blocks())
			w := watchHeap()
			m := startMeter()
			n, err := write(r, r+1)
			if err == nil {
				err = s.compact()
			}
			u := m.stop()
			peak := w.stop()
			add(&st.ingest, u)
			add(&st.compact, u)
			st.samples += n
			if err != nil {
				return st, fmt.Errorf("bench: round %d and compaction: %w", r, err)
			}
			if len(s.blocks()) > blocks {
				st.compactions++
				st.peakAbs = max(st.peakAbs, peak)
				st.peakOver = max(st.peakOver, peak-min(peak, before))
			}
			r++
			st.rounds = r
		}
		if r%cutEvery == 0 || r == total {
			m := startMeter()
			err := s.compact()
			u := m.stop()
			add(&st.ingest, u)
			add(&st.compact, u)
			if err != nil {
				return st, fmt.Errorf("bench: compact after round %d: %w", r, err)
			}
		}
	}
	return st, nil
}
