package main

import (
	"slices"
	"sort"
	"time"
)

// The late workload: the float scrape with a fraction of the samples
// arriving late. In every round, each series' sample is held back with
// probability frac (decided by a hash of the seed, the series and the
// round, so every store and every run gets the same schedule) and
// appended lateMinRounds to lateMaxRounds rounds later (1–10 minutes at a
// 15 s scrape interval), with its own timestamp and value, in the commit
// of its target's scrape of that round. Samples still held back after the
// last round are appended in the rounds they are due in, in commits of
// late samples alone.
const (
	lateMinRounds = 4  // 1 minute of 15 s rounds
	lateMaxRounds = 40 // 10 minutes
	// lateWindow is the out-of-order window of both stores in the late
	// phase: the 10 minutes of lateness, plus the up to maxLag rounds (10
	// minutes) the writers may drift apart, plus room. It is also at most
	// half the block range, as far back as either head accepts a sample.
	lateWindow = 30 * time.Minute
	// lateSeed seeds the schedule.
	lateSeed = 0x1a7e5a3b1e5
)

// lateSample is a held-back sample: series i's sample of round r.
type lateSample struct {
	series, round int32
}

// lateSchedule says, for rounds [0, rounds) of a corpus of n series, which
// samples are held back and when each is appended. It is built before the
// phase, outside the measurement. Read-only after newLateSchedule, so
// writers may share it.
type lateSchedule struct {
	rounds int            // rounds of the scrape
	held   [][]int32      // by round: the series whose sample is held back, ascending
	due    [][]lateSample // by round (up to rounds+lateMaxRounds-1): samples appended then, ascending by series, then round
	late   int            // samples held back in all
}

// lateDelay returns the rounds series i's sample of round r is held back,
// 0 if it is on time, for late fraction frac.
func lateDelay(frac float64, i, r int) int {
	h := mix(uint64(i)^lateSeed, uint64(r)+0x51ed)
	if float64(h%1_000_000) >= frac*1_000_000 {
		return 0
	}
	return lateMinRounds + int((h>>32)%(lateMaxRounds-lateMinRounds+1))
}

// newLateSchedule builds the schedule of rounds rounds of n series with
// late fraction frac.
func newLateSchedule(n, rounds int, frac float64) *lateSchedule {
	ls := &lateSchedule{
		rounds: rounds,
		held:   make([][]int32, rounds),
		due:    make([][]lateSample, rounds+lateMaxRounds),
	}
	for r := range rounds {
		for i := range n {
			if d := lateDelay(frac, i, r); d > 0 {
				ls.held[r] = append(ls.held[r], int32(i))
				ls.due[r+d] = append(ls.due[r+d], lateSample{int32(i), int32(r)})
				ls.late++
			}
		}
	}
	for _, d := range ls.due {
		slices.SortFunc(d, func(a, b lateSample) int {
			if a.series != b.series {
				return int(a.series - b.series)
			}
			return int(a.round - b.round)
		})
	}
	// Trailing rounds with nothing due are not written.
	for len(ls.due) > rounds && len(ls.due[len(ls.due)-1]) == 0 {
		ls.due = ls.due[:len(ls.due)-1]
	}
	return ls
}

// totalRounds is the number of rounds the phase writes: the scrape's and
// those of late samples due after it.
func (ls *lateSchedule) totalRounds() int { return len(ls.due) }

// heldIn returns the series of [lo, hi) held back in round r (none for
// rounds after the scrape).
func (ls *lateSchedule) heldIn(r, lo, hi int) []int32 {
	if r >= ls.rounds {
		return nil
	}
	return between(ls.held[r], lo, hi, func(i int32) int32 { return i })
}

// dueIn returns the late samples of series [lo, hi) appended in round r.
func (ls *lateSchedule) dueIn(r, lo, hi int) []lateSample {
	return between(ls.due[r], lo, hi, func(s lateSample) int32 { return s.series })
}

// between returns the elements of xs (ascending by series) whose series is
// in [lo, hi).
func between[T any](xs []T, lo, hi int, series func(T) int32) []T {
	a := sort.Search(len(xs), func(j int) bool { return int(series(xs[j])) >= lo })
	b := sort.Search(len(xs), func(j int) bool { return int(series(xs[j])) >= hi })
	return xs[a:b]
}
