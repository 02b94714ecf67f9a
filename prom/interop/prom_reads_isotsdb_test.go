package interop

import (
	"log/slog"
	"math"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

const directionPromReadsUs = "Prometheus reads isotsdb"

// testPrometheusReadsIsotsdb writes a data dir with isotsdb and checks that
// Prometheus's read-only DB accepts every block and returns, for every
// selector and time range, exactly what isotsdb's querier returns and what
// was written.
func testPrometheusReadsIsotsdb(t *testing.T, mx *matrix, snappy bool) {
	variant := "wal=none"
	if snappy {
		variant = "wal=snappy"
	}
	dir := t.TempDir()
	const (
		base = int64(1_700_000_000_000) // not aligned to blocks: the first one is partial
		step = int64(60_000)
	)
	w := isotsdbWorkload{
		nSeries: 500, base: base, step: step,
		steps: 180, moreSteps: 8, // 3h, then 8 minutes in the WAL only
		opts: isotsdbOptions(snappy),
	}
	lastT := base + int64(w.steps+w.moreSteps)*step
	w.deletes = []deletion{
		// Across block boundaries, in compacted blocks.
		{base + 40*60_000, base + 85*60_000, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, "[a-f].*")}},
		// In the head only: a Tombstones record in the WAL.
		{lastT - 5*60_000, lastT - 2*60_000, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, "[g-p].*")}},
		// From blocks into the head.
		{base + 150*60_000, lastT - 4*60_000, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, "[q-z].*")}},
	}
	var (
		sets []labels.Labels
		mod  *model
	)
	if !mx.check(t, directionPromReadsUs, variant, "isotsdb writes (3h, 500 series, deletes)", func(t *testing.T) {
		sets, mod = writeIsotsdb(t, dir, w)
	}) {
		return
	}
	sels := selectorsFor(sets)

	logger, logs := newLogCapture(slog.LevelWarn)
	ours, err := tsdb.OpenReadOnly(dir, logger, w.opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, ours.Close()) }()
	blocks := ours.Blocks()
	requireLayout(t, dir, blocks)
	headStart := lastBlockEnd(blocks)
	ranges := []timeRange{
		{"blocks", math.MinInt64, headStart - 1},
		{"WAL+checkpoint", headStart, math.MaxInt64},
		{"blocks→WAL", base + 50*60_000, headStart + 2*60_000},
		{"all", math.MinInt64, math.MaxInt64},
	}

	mx.check(t, directionPromReadsUs, variant, "blocks: promtool analyze walk", func(t *testing.T) {
		reps := analyzeDir(t, dir)
		require.Len(t, reps, len(blocks))
		tombstoned := 0
		for _, r := range reps {
			want := mod.selectRange(r.meta.MinTime, r.meta.MaxTime-1, nil)
			requireSame(t, "block "+r.meta.ULID.String(), "model", want, "Prometheus index+chunks", r.series)
			tombstoned += r.tombstoned
			t.Logf("block %s [%d, %d) level %d: %d series, %d chunks, %d samples, %d label names, %d label pairs, %d series with tombstones",
				r.meta.ULID, r.meta.MinTime, r.meta.MaxTime, r.meta.Compaction.Level, len(r.series), r.chunks, r.samples, r.labelNames, r.labelPairs, r.tombstoned)
		}
		// The first deletion lies in blocks: unless a compaction has
		// already applied it, some block must carry tombstones.
		t.Logf("%d series with tombstones in blocks", tombstoned)
	})

	for _, r := range ranges {
		mx.checkEach(t, directionPromReadsUs, variant, r.name+": query", func(t *testing.T, c *cell) {
			pdb, err := promtsdb.OpenDBReadOnly(dir, "", logger)
			require.NoError(t, err)
			defer func() { require.NoError(t, pdb.Close()) }()
			q, err := pdb.Querier(r.mint, r.maxt)
			require.NoError(t, err)
			defer func() { require.NoError(t, q.Close()) }()
			for _, sel := range sels {
				c.run(t, sel.name, func(t *testing.T) {
					what := r.name + " " + sel.name
					want := mod.selectRange(r.mint, r.maxt, sel.ms)
					require.NotEmpty(t, want, "%s selects nothing: the check would be vacuous", what)
					got, emptyOurs := dropEmpty(readIsotsdb(t, ours, r.mint, r.maxt, sel.ms).series)
					requireSame(t, what, "model", want, "isotsdb", got)
					prom := readPrometheus(t, q, sel.ms)
					require.Zero(t, prom.hists, what)
					promSeries, emptyProm := dropEmpty(prom.series)
					requireSame(t, what, "isotsdb", got, "Prometheus", promSeries)
					if emptyOurs+emptyProm > 0 {
						t.Logf("%s: empty series (all samples in range deleted): isotsdb %d, Prometheus %d", what, emptyOurs, emptyProm)
					}
				})
			}
			logs.requireQuiet(t, "isotsdb or Prometheus")
		})
	}
}
