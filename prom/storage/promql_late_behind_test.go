package promstorage_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"
)

// wideLate is the workload of TestPromQLOverLateDataBehindBlocks: a window
// of 3h with 2h blocks, six hours of scrapes, late samples 1 minute to 2.5
// hours late, too-old ones 3h01m to 4h before the head's newest sample,
// and both DBs compacted every 30 simulated minutes while they are fed.
// Each DB cuts a block when its head spans more than 3h (at lwBase+3h,
// then every 2h), so from then on the late samples more than about an hour
// late fall into block ranges already written: isotsdb keeps them in its
// head until its next head compaction writes them into blocks overlapping
// the ones there, Prometheus in its out-of-order head until its next
// compaction writes them into out-of-order blocks; both then merge the
// overlapping blocks. Range queries step 1m and 5m only: the 15s step
// over six hours would double the test's time for little more coverage
// (instant queries still read every sample through range vectors). Under
// the race detector, which makes the queries ten times slower, the test
// runs the range queries with a 5m step and the instant queries around
// the block boundaries and at the end only (wideLateRace).
var wideLate = lateParams{
	window: 3 * time.Hour, scrapes: 1441, minDelay: lwMinDelay, maxDelay: 600,
	tooOld: 181 * minute, tooOldSpan: 59 * minute, compactEvery: 120,
	steps: []time.Duration{time.Minute, 5 * time.Minute},
}

// wideLateRace is wideLate with the queries of a race-detector run.
var wideLateRace = func() lateParams {
	p := wideLate
	p.steps = []time.Duration{5 * time.Minute}
	p.instants = []int64{320, 801, 1280, 1440}
	return p
}()

// TestPromQLOverLateDataBehindBlocks is TestPromQLOverLateData with
// wideLate: late samples behind the head's range, in ranges both DBs have
// compacted already. Both DBs must accept and reject the same appends and
// answer the same queries in the same four states.
func TestPromQLOverLateDataBehindBlocks(t *testing.T) {
	p, minFloats, minHists := wideLate, 250_000, 40_000
	if raceEnabled {
		p, minFloats, minHists = wideLateRace, 45_000, 7_500
	}
	w := buildLateWorkload(p)
	require.Greater(t, w.tags[tagLate], len(w.series)*p.scrapes/12, "about a tenth of the samples must be late")
	for tag, n := range w.tags {
		require.Positive(t, n, "the workload has %s samples", tagNames[tag])
	}

	d := &lateDBs{t: t, ourDir: t.TempDir(), theirs: t.TempDir(), p: p}
	d.open()
	t.Cleanup(d.close)

	start := time.Now()
	res, st := d.feed(w)
	for class, n := range res {
		t.Logf("appends %s: %v", class, n)
	}
	t.Logf("feed (%s): %d compactions; late samples accepted behind the head's range: isotsdb %d, Prometheus %d; "+
		"blocks merged from overlapping ones: isotsdb %d, Prometheus %d; overlapping pairs of isotsdb blocks seen after a Compact: %d",
		time.Since(start).Round(time.Millisecond), st.compactions, st.behindOurs, st.behindProm, st.ourMerges, st.promMerges, st.ourOverlaps)
	want := feedResult{
		"accepted": {tagOnTime: w.tags[tagOnTime], tagLate: w.tags[tagLate], tagDuplicate: w.tags[tagDuplicate], tagOtherKind: w.tags[tagOtherKind]},
		"too old":  {tagTooOld: w.tags[tagTooOld]},
	}
	require.Equal(t, want, res)
	// The variant does what it is for: many late samples were accepted
	// behind the range of both heads, and both DBs wrote blocks that
	// overlapped others and merged them.
	require.Greater(t, st.behindOurs, w.tags[tagLate]/20, "late samples accepted behind isotsdb's head range")
	require.Greater(t, st.behindProm, w.tags[tagLate]/20, "late samples accepted behind Prometheus's in-order head")
	require.Positive(t, st.ourMerges, "isotsdb merged no overlapping blocks")
	require.Positive(t, st.promMerges, "Prometheus merged no overlapping blocks")

	engine := promqltest.NewTestEngine(t, false, 0, 50_000_000)
	phases := []struct {
		name   string
		before func()
	}{
		{"head", func() {}},
		{"head after restart", func() {
			d.close()
			d.open()
		}},
		{"compacted", func() {
			// The stream ends at lwBase+6h, the newest block at
			// lwBase+3h20m. A sample of a series no query selects at
			// lwBase+6h40m makes both heads compactable: both write the
			// range up to lwBase+5h20m, and the late samples behind it.
			trigger := labels.FromStrings("__name__", "compaction_trigger")
			at := lwBase + 6*time.Hour.Milliseconds() + 40*minute
			for _, app := range []storage.Appender{d.ours.Appender(context.Background()), d.prom.Appender(context.Background())} {
				_, err := app.Append(0, trigger, at, 1)
				require.NoError(t, err)
				require.NoError(t, app.Commit())
			}
			require.NoError(t, d.ours.DB().Compact(context.Background()))
			require.NoError(t, d.prom.Compact(context.Background()))
			require.Equal(t, lwBase+5*time.Hour.Milliseconds()+20*minute, blocksEnd(d.ours.DB().Blocks()))
			require.Equal(t, d.prom.Head().MinTime(), blocksEnd(d.ours.DB().Blocks()))
			require.GreaterOrEqual(t, d.ours.DB().Head().MinTime(), blocksEnd(d.ours.DB().Blocks()), "the head keeps nothing of the blocks' range")
		}},
		{"compacted, after restart", func() {
			d.close()
			d.open()
		}},
	}
	for _, ph := range phases {
		ph.before()
		start := time.Now()
		cmp := d.compareQueries(engine, ph.name)
		t.Logf("%s: %d queries, %d float and %d histogram points identical (%s)",
			ph.name, cmp.queries, cmp.floats, cmp.histograms, time.Since(start).Round(time.Millisecond))
		hints := checkHints(t, ph.name+", isotsdb", d.ours)
		promHints := checkHints(t, ph.name+", Prometheus", d.prom)
		t.Logf("%s: known counter-reset hints right: isotsdb %d, Prometheus %d", ph.name, hints, promHints)
		require.Positive(t, hints)
		require.Greater(t, cmp.floats, minFloats, "%s: too few float points compared", ph.name)
		require.Greater(t, cmp.histograms, minHists, "%s: too few histogram points compared", ph.name)
	}
}
