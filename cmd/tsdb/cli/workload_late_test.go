package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLateWorkload runs the late workload's plans without a DB: every
// sample is appended exactly once, with the value its scrape drew, late by
// 1 to maxLateDelay scrapes, a late-frac share of them late; and the same
// seed gives the same plans.
func TestLateWorkload(t *testing.T) {
	const (
		seed   = 5
		frac   = 0.2
		rounds = 200
		start  = int64(1_000_000)
	)
	sets, err := loadLabelSets(seriesFile, 800)
	require.NoError(t, err)
	late, twin, other, ref := newTargets(sets, seed), newTargets(sets, seed), newTargets(sets, seed), newTargets(sets, seed)
	for i := range late {
		late[i].enableLate(frac, seed)
		twin[i].enableLate(frac, seed)
		other[i].enableLate(frac, seed+1)
	}
	tsOf := func(tg *target, r int) int64 { return start + int64(r)*scrapeInterval + tg.offset }

	type key struct{ series, round int }
	differ := false
	for ti, tg := range late {
		n := len(tg.series)
		// want[r][i] is the value ref, which holds nothing back, drew for
		// series i at scrape r: late mode must not change values.
		want := make([][]float64, rounds)
		for r := range want {
			want[r] = make([]float64, n)
			for i := range n {
				want[r][i] = ref[ti].gens[i].next(ref[ti].rng)
			}
		}
		appended := map[key]int{}
		got := func(i, r int, v float64) {
			t.Helper()
			appended[key{i, r}]++
			require.Equal(t, want[r][i], v, "series %d scrape %d", i, r)
		}
		held := 0
		for r := range rounds {
			ts := tsOf(tg, r)
			p := tg.planLateScrape(ts)
			pt := twin[ti].planLateScrape(ts)
			po := other[ti].planLateScrape(ts)
			require.Equal(t, p, pt, "same seed, same plan (scrape %d)", r)
			differ = differ || len(p.held) != len(po.held) || len(p.late) != len(po.late)
			require.Equal(t, r, p.round)
			require.IsIncreasing(t, p.held)
			held += len(p.held)
			h := 0
			for i := range n {
				if h < len(p.held) && int(p.held[h]) == i {
					h++
					require.False(t, p.holds(int32(i), r))
					continue
				}
				require.True(t, p.holds(int32(i), r))
				got(i, r, tg.vals[i])
			}
			if r > 0 {
				require.NotEmpty(t, p.late, "scrape %d's commit has no late sample", r)
			}
			for _, l := range p.late {
				d := r - int(l.round)
				require.GreaterOrEqual(t, d, 1)
				require.LessOrEqual(t, d, maxLateDelay)
				require.Equal(t, r, int(l.due))
				require.Equal(t, tsOf(tg, int(l.round)), l.t)
				require.True(t, p.holds(l.series, int(l.round)))
				got(int(l.series), int(l.round), l.v)
			}
		}
		// The samples still held go in one last commit, after the last
		// scrape: still 1 to maxLateDelay scrapes late.
		rest := tg.late.drain()
		require.NotEmpty(t, rest)
		require.Empty(t, tg.late.drain())
		for _, l := range rest {
			require.GreaterOrEqual(t, int(l.due), rounds)
			d := rounds - int(l.round)
			require.GreaterOrEqual(t, d, 1)
			require.LessOrEqual(t, d, maxLateDelay)
			got(int(l.series), int(l.round), l.v)
		}

		require.Len(t, appended, rounds*n, "every sample appended")
		for k, c := range appended {
			require.Equal(t, 1, c, "series %d scrape %d appended %d times", k.series, k.round, c)
		}
		require.InDelta(t, frac, float64(held)/float64(rounds*n), 0.01, "share of late samples")
	}
	require.True(t, differ, "another seed must give other plans")
}

// TestLateScheduleNoValues checks the schedule of the read-while-write
// check: no values, and a fraction of 0 holds nothing back.
func TestLateScheduleNoValues(t *testing.T) {
	s := newLateSchedule(0, 10, 1, lateStreamCheck)
	for r := range 50 {
		p := s.next(int64(r), nil)
		require.Empty(t, p.held)
		require.Empty(t, p.late)
		require.Equal(t, 10, p.samplesFrom(0, 10))
	}
	s = newLateSchedule(0.5, 10, 1, lateStreamCheck)
	for r := range 50 {
		p := s.next(int64(r), nil)
		for _, l := range p.late {
			require.Zero(t, l.v)
		}
		require.Equal(t, 10-len(p.held)+len(p.late), p.samplesFrom(0, 10))
	}
}

func TestOutOfOrderWindow(t *testing.T) {
	for _, c := range []struct {
		cfg  benchWriteConfig
		want time.Duration
	}{
		{benchWriteConfig{}, 0},
		{benchWriteConfig{lateFrac: 0.1}, defaultOOOWindow},
		{benchWriteConfig{lateFrac: 0.1, oooWindow: time.Minute, oooWindowSet: true}, time.Minute},
		{benchWriteConfig{lateFrac: 0.1, oooWindowSet: true}, 0},
		{benchWriteConfig{oooWindow: time.Hour, oooWindowSet: true}, time.Hour},
	} {
		require.Equal(t, c.want, c.cfg.outOfOrderWindow(), "%+v", c.cfg)
	}
}
