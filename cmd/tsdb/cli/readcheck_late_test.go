package cli

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// view builds what a query would return if the commits in plans were
// applied, all but the samples drop leaves out: obs[i] holds series i's
// samples (time, commit number) in time order.
func view(n int, checkStart int64, plans []commitPlan, drop func(k, series, round int) bool) [][]tv {
	obs := make([][]tv, n)
	add := func(k, i, r int) {
		if drop == nil || !drop(k, i, r) {
			obs[i] = append(obs[i], tv{checkStart + int64(r)*scrapeInterval, float64(k)})
		}
	}
	for _, p := range plans {
		for i := range n {
			if p.holds(int32(i), p.round) {
				add(p.round, i, p.round)
			}
		}
		for _, l := range p.late {
			add(p.round, int(l.series), int(l.round))
		}
	}
	for i := range obs {
		slices.SortFunc(obs[i], func(a, b tv) int { return int(a.t - b.t) })
	}
	return obs
}

// TestCommitJudge checks the late-mode verdicts on synthetic queries: the
// commits' in-order and late samples must be seen together.
func TestCommitJudge(t *testing.T) {
	const (
		n          = 20
		seed       = 3
		checkStart = int64(5_000_000)
	)
	writer := newLateSchedule(0.3, n, seed, lateStreamCheck)
	var plans []commitPlan
	for k := range 40 {
		plans = append(plans, writer.next(checkStart+int64(k)*scrapeInterval, nil))
	}
	judge := func() *commitJudge {
		return newCommitJudge(n, checkStart, newLateSchedule(0.3, n, seed, lateStreamCheck), nil)
	}
	// Commit 6 holds late samples and in-order ones.
	require.NotEmpty(t, plans[6].late)
	require.Less(t, len(plans[6].held), n)

	cases := []struct {
		name string
		obs  [][]tv
		want readOutcome
	}{
		{"nothing yet", view(n, checkStart, nil, nil), readOutcome{}},
		{"whole commits 0 to 6", view(n, checkStart, plans[:7], nil), readOutcome{}},
		{"commit 6 without its late samples", view(n, checkStart, plans[:7], func(k, _, r int) bool {
			return k == 6 && r < 6
		}), readOutcome{partial: true}},
		{"commit 6's late samples only", view(n, checkStart, plans[:7], func(k, _, r int) bool {
			return k == 6 && r == 6
		}), readOutcome{partial: true}},
		{"one late sample of commit 6 missing", view(n, checkStart, plans[:7], func(k, i, r int) bool {
			l := plans[6].late[0]
			return k == 6 && i == int(l.series) && r == int(l.round)
		}), readOutcome{partial: true}},
		{"commit 5 missing before 6", view(n, checkStart, plans[:7], func(k, _, _ int) bool {
			return k == 5
		}), readOutcome{partial: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, judge().judge(c.obs, len(plans)))
		})
	}

	t.Run("rejected late samples", func(t *testing.T) {
		l := plans[6].late[0]
		obs := view(n, checkStart, plans[:7], func(k, i, r int) bool {
			return k == 6 && i == int(l.series) && r == int(l.round)
		})
		rejects := &lateRejects{}
		rejects.add(6, l)
		j := newCommitJudge(n, checkStart, newLateSchedule(0.3, n, seed, lateStreamCheck), rejects)
		require.Equal(t, readOutcome{}, j.judge(obs, len(plans)), "a rejected sample is not expected")
		require.Equal(t, len(plans[6].late)-1, len(j.plan(6).late))
	})

	t.Run("wrong values", func(t *testing.T) {
		obs := view(n, checkStart, plans[:7], nil)
		l := plans[6].late[0]
		for j, s := range obs[l.series] {
			if s.t == checkStart+int64(l.round)*scrapeInterval {
				obs[l.series][j].v = float64(l.round) // as if written by its own scrape's commit
			}
		}
		obs[0] = append(obs[0], tv{checkStart + 7*scrapeInterval, 7}) // commit 7 has not begun
		o := judge().judge(obs, 7)
		require.Equal(t, int64(2), o.wrongValues)
		require.True(t, o.partial, "commit 6 lost a sample to the wrong value")
	})

	t.Run("a sequence of reads", func(t *testing.T) {
		j := judge()
		for k := range len(plans) {
			require.Equal(t, readOutcome{}, j.judge(view(n, checkStart, plans[:k+1], nil), len(plans)), "commits 0 to %d", k)
			require.Equal(t, max(k-maxLateDelay, 0), j.from())
			require.LessOrEqual(t, len(j.plans), maxLateDelay+1, "plans are forgotten")
		}
		o := j.judge(view(n, checkStart, plans[:30], nil), len(plans))
		require.Equal(t, readOutcome{backwards: true}, o, "newest commit 29 after 39")
		o = j.judge(view(n, checkStart, plans, func(k, _, r int) bool { return k == 39 && r < 39 }), len(plans))
		require.Equal(t, readOutcome{partial: true}, o, "commit 39 without its late samples")
	})
}

// TestLateCheckReader drives a late-mode reader by hand against a DB
// without isolation. The head need not take samples behind a series'
// newest for this: the late samples here are only 1 scrape late, of series
// whose own sample of that scrape was held, and are appended before the
// in-order ones.
func TestLateCheckReader(t *testing.T) {
	opts := tsdb.DefaultOptions()
	opts.IsolationDisabled = true
	opts.NoWAL = true
	db, err := tsdb.Open(t.TempDir(), nil, nil, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	ctx := context.Background()

	sets := make([]labels.Labels, 10)
	for i := range sets {
		sets[i] = labels.FromStrings(labels.MetricName, "m", "i", strconv.Itoa(i))
	}
	tg := newTargets(sets, 1)[0]
	const start = 1_000_000
	ts := func(r int) int64 { return start + int64(r)*scrapeInterval }
	// Commit 0 holds back series 3 and 7; commit 1 appends them.
	plans := []commitPlan{
		{round: 0, held: []int32{3, 7}},
		{round: 1, late: []lateSample{{series: 3, round: 0, due: 1, t: ts(0)}, {series: 7, round: 0, due: 1, t: ts(0)}}},
	}
	// commit appends samples of commit k: the late ones, then the
	// in-order ones of the series in [from, to).
	commit := func(k int, late bool, from, to int) {
		t.Helper()
		app := db.Appender(ctx)
		if late {
			for _, l := range plans[k].late {
				_, err := app.Append(0, tg.series[l.series], l.t, float64(k))
				require.NoError(t, err)
			}
		}
		for i := from; i < to; i++ {
			if plans[k].holds(int32(i), k) {
				_, err := app.Append(0, tg.series[i], ts(k), float64(k))
				require.NoError(t, err)
			}
		}
		require.NoError(t, app.Commit())
	}
	var begun atomic.Int64
	rd := newLateCheckReader(db, tg, start, nil, nil, &begun)
	rd.judge.plans = plans // instead of replaying a schedule
	read := func() readOutcome {
		t.Helper()
		o, err := rd.read(ctx)
		require.NoError(t, err)
		return o
	}

	require.Equal(t, readOutcome{}, read(), "nothing written yet")
	begun.Store(1)
	commit(0, false, 0, 10)
	require.Equal(t, readOutcome{}, read(), "whole commit 0")
	begun.Store(2)
	commit(1, true, 0, 0)
	require.Equal(t, readOutcome{partial: true}, read(), "commit 1's late samples only")
	commit(1, false, 0, 10)
	require.Equal(t, readOutcome{}, read(), "whole commit 1")
	require.Equal(t, 1, rd.judge.seen)
}
