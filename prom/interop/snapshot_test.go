package interop

import (
	"log/slog"
	"math"
	"path/filepath"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

const directionSnapshot = "Prometheus reads isotsdb snapshot"

// testSnapshot has isotsdb write a data dir with blocks, a head and
// deletions in both, snapshot it with and without the head while open,
// and checks that Prometheus accepts every block of each snapshot and
// reads from it what the snapshot must hold: everything, or everything
// before the head.
func testSnapshot(t *testing.T, mx *matrix) {
	const (
		base = int64(1_700_000_000_000)
		step = int64(60_000)
	)
	dir := t.TempDir()
	snaps := map[bool]string{
		true:  filepath.Join(t.TempDir(), "with-head"),
		false: filepath.Join(t.TempDir(), "without-head"),
	}
	w := isotsdbWorkload{
		nSeries: 200, base: base, step: step,
		steps: 120, moreSteps: 10, // 2h, then 10 minutes in the head only
		opts: isotsdbOptions(false),
	}
	lastT := base + int64(w.steps+w.moreSteps)*step
	w.deletes = []deletion{
		{base + 20*60_000, base + 70*60_000, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, "[a-m].*")}},
		{lastT - 6*60_000, lastT - 3*60_000, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, "[n-z].*")}},
	}
	// The end of the DB's blocks when each snapshot started: the snapshot
	// must hold at least those.
	blocksEnd := map[bool]int64{}
	w.beforeClose = func(db *tsdb.DB) {
		for withHead, snap := range snaps {
			blocksEnd[withHead] = lastBlockEnd(db.Blocks())
			require.NoError(t, isotsdbSnapshot(db, snap, withHead), "Snapshot(withHead=%v)", withHead)
		}
	}
	var (
		sets []labels.Labels
		mod  *model
	)
	if !mx.check(t, directionSnapshot, "-", "isotsdb writes (2h, 200 series, deletes) and snapshots", func(t *testing.T) {
		sets, mod = writeIsotsdb(t, dir, w)
	}) {
		return
	}
	sels := selectorsFor(sets)
	for _, withHead := range []bool{true, false} {
		variant := "withHead=false"
		if withHead {
			variant = "withHead=true"
		}
		t.Run(variant, func(t *testing.T) {
			checkSnapshot(t, mx, variant, snaps[withHead], withHead, blocksEnd[withHead], w.opts, mod, sels)
		})
	}
}

// checkSnapshot checks one snapshot of testSnapshot.
func checkSnapshot(t *testing.T, mx *matrix, variant, snap string, withHead bool, blocksEnd int64, opts *tsdb.Options, mod *model, sels []selector) {
	logger, logs := newLogCapture(slog.LevelWarn)
	ours, err := tsdb.OpenReadOnly(snap, logger, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, ours.Close()) }()
	end := lastBlockEnd(ours.Blocks())
	require.GreaterOrEqual(t, end, blocksEnd, "the snapshot lacks blocks the DB had")
	if withHead {
		_, maxt := mod.minMax()
		require.Greater(t, end, maxt, "the snapshot's blocks end before the last sample")
	}
	// Without the head, the snapshot holds what the blocks held.
	want := func(mint, maxt int64, ms []*labels.Matcher) []series {
		return mod.selectRange(mint, min(maxt, end-1), ms)
	}
	mx.check(t, directionSnapshot, variant, "blocks: promtool analyze walk", func(t *testing.T) {
		reps := analyzeDir(t, snap)
		require.Len(t, reps, len(ours.Blocks()))
		for _, r := range reps {
			requireSame(t, "block "+r.meta.ULID.String(), "model", want(r.meta.MinTime, r.meta.MaxTime-1, nil), "Prometheus index+chunks", r.series)
		}
	})
	mx.checkEach(t, directionSnapshot, variant, "all: query", func(t *testing.T, c *cell) {
		pdb, err := promtsdb.OpenDBReadOnly(snap, "", logger)
		require.NoError(t, err)
		defer func() { require.NoError(t, pdb.Close()) }()
		// A snapshot has no WAL, and Prometheus's read-only querier
		// fails on a WAL-less dir (its own snapshots too) unless maxt
		// lies before the end of the last block.
		q, err := pdb.Querier(math.MinInt64, end-1)
		require.NoError(t, err)
		defer func() { require.NoError(t, q.Close()) }()
		for _, sel := range sels {
			c.run(t, sel.name, func(t *testing.T) {
				exp := want(math.MinInt64, end-1, sel.ms)
				require.NotEmpty(t, exp, "%s selects nothing: the check would be vacuous", sel.name)
				got, _ := dropEmpty(readIsotsdb(t, ours, math.MinInt64, math.MaxInt64, sel.ms).series)
				requireSame(t, sel.name, "model", exp, "isotsdb", got)
				prom, _ := dropEmpty(readPrometheus(t, q, sel.ms).series)
				requireSame(t, sel.name, "isotsdb", got, "Prometheus", prom)
			})
		}
		logs.requireQuiet(t, "isotsdb or Prometheus")
	})
}
