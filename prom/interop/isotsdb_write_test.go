package interop

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	ourlabels "github.com/isotsdb/tsdb/labels"
)

// isotsdbWorkload is what writeIsotsdb writes: nSeries series from the
// label corpus, one commit per scrape step, with churn (a fifth of the
// series stop half way, a few start late).
type isotsdbWorkload struct {
	nSeries    int
	base, step int64
	steps      int // scrapes before the explicit Compact
	moreSteps  int // scrapes after it, in the head and WAL only
	opts       *tsdb.Options
	deletes    []deletion // applied after the last scrape, before Close
	// beforeClose, if set, runs after the deletes, with the DB still open.
	beforeClose func(db *tsdb.DB)
}

// deletion is a Delete request.
type deletion struct {
	mint, maxt int64
	ms         []*labels.Matcher
}

// isotsdbOptions are the options of the isotsdb writers: 30-minute blocks
// so that a few hours of data make several blocks and compact them, and
// small WAL segments so the WAL has several and a checkpoint.
func isotsdbOptions(snappy bool) *tsdb.Options {
	o := tsdb.DefaultOptions()
	o.MinBlockDuration = 30 * time.Minute
	o.WALSegmentSize = 256 << 10
	o.WALCompression = snappy
	return o
}

// active reports whether series i is scraped at step k of total.
func active(i, k, total int) bool {
	switch {
	case i%5 == 2: // churned away half way
		return k < total/2
	case i%11 == 3: // appears late
		return k >= total/3
	}
	return true
}

// writeIsotsdb writes w into dir with isotsdb and returns the label sets
// and the model of what a reader must find (deletions applied).
func writeIsotsdb(t *testing.T, dir string, w isotsdbWorkload) ([]labels.Labels, *model) {
	t.Helper()
	ctx := context.Background()
	sets := loadLabelSets(t, w.nSeries, 40, 0)
	ours := make([]ourlabels.Labels, len(sets))
	for i, ls := range sets {
		ours[i] = toOurLabels(ls)
	}
	db, err := tsdb.Open(dir, nil, nil, w.opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()

	m := newModel()
	refs := make([]tsdb.SeriesRef, len(sets))
	total := w.steps + w.moreSteps
	scrape := func(k int) {
		app := db.Appender(ctx)
		for i := range sets {
			if !active(i, k, total) {
				continue
			}
			ts, v := sampleTime(w.base, w.step, i, k), floatValue(i, k)
			ref, err := app.Append(refs[i], ours[i], ts, v)
			require.NoError(t, err, "append %s at %d", sets[i], ts)
			refs[i] = ref
			m.add(sets[i], ts, v)
		}
		require.NoError(t, app.Commit())
	}
	for k := range w.steps {
		scrape(k)
	}
	require.NoError(t, db.Compact(ctx))
	for k := w.steps; k < total; k++ {
		scrape(k)
	}
	for _, d := range w.deletes {
		require.NoError(t, isotsdbDelete(ctx, db, d.mint, d.maxt, toOurMatchers(t, d.ms)...))
		m.deleteRange(d.mint, d.maxt, d.ms)
	}
	if w.beforeClose != nil {
		w.beforeClose(db)
	}
	return sets, m
}

// requireLayout fails unless dir has what the interop checks are meant to
// cover: several blocks, one of them compacted from others, and a WAL
// with a checkpoint and segments after it.
func requireLayout(t *testing.T, dir string, blocks []tsdb.BlockMeta) {
	t.Helper()
	require.GreaterOrEqual(t, len(blocks), 3, "blocks")
	maxLevel := 0
	for _, b := range blocks {
		maxLevel = max(maxLevel, b.Compaction.Level)
	}
	require.GreaterOrEqual(t, maxLevel, 2, "no compacted block")
	cps, err := filepath.Glob(filepath.Join(dir, "wal", "checkpoint.*"))
	require.NoError(t, err)
	require.NotEmpty(t, cps, "no WAL checkpoint")
	segs, err := filepath.Glob(filepath.Join(dir, "wal", "[0-9]*"))
	require.NoError(t, err)
	require.NotEmpty(t, segs, "no WAL segments")
	for _, s := range segs {
		st, err := os.Stat(s)
		require.NoError(t, err)
		require.False(t, st.IsDir(), s)
	}
}

// lastBlockEnd returns the end (exclusive) of the newest block, the time
// from which the head (the WAL) holds the data.
func lastBlockEnd(blocks []tsdb.BlockMeta) int64 {
	end := int64(math.MinInt64)
	for _, b := range blocks {
		end = max(end, b.MaxTime)
	}
	return end
}
