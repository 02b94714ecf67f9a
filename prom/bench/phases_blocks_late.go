package main

import (
	"fmt"
)

// The late variants of the blocks6h, restart and scale phases (issue 15):
// blocks6h-late, restart-late and scale-late. Each is its phase with the
// late phase's schedule (lateworkload.go: p.lateFrac of the samples, 10%
// by default, appended 1–10 minutes late, in the commit of a later scrape
// of their target) written by ingestCutting, on stores with the
// out-of-order window lateWindow (30 min), so that both stores take late
// samples while they cut blocks: into their out-of-order heads, their
// WBLs and, where the window reaches back past the last block cut, into
// ranges already in a block, which the next compaction writes as an
// overlapping block and merges with the one there. With 2 h blocks
// (blocks6h-late) the head keeps at least an hour after a cut, more than
// the lateness, so that happens only in Prometheus, whose out-of-order
// head compacts to blocks of its own whatever their range; with the short
// blocks of a short scale-late run (5 min blocks for 15 min of data) it
// happens in both.
//
// Figures are those of the phase, prefixed b6late., restartlate. and
// scalelate. instead of b6., restart. and scale., plus the late samples
// appended (late) and those the store rejected (rejected, target 0). Each
// store must read back exactly the samples it took, each with its
// timestamp and value (a digest, latecheck.go): after the ingest, after a
// clean restart and, unless samples were lost (counted, target 0), after
// a crash. The read phases' sample counts must also be equal in both
// stores (checkEqualReads).

// lateRun is what a late variant writes: the schedule, and the digest of
// every sample of its rounds (computed once, outside every measurement).
type lateRun struct {
	ls   *lateSchedule
	want digest
}

// newLateRun builds the late workload of rounds rounds of corpus c with
// late fraction frac.
func newLateRun(c *corpus, rounds int, frac float64) *lateRun {
	return &lateRun{ls: newLateSchedule(len(c.series), rounds, frac), want: workloadDigest(c, rounds)}
}

// lateFigures records in f (names prefixed fig) what the late ingest of
// phase counted: the late samples of the schedule and those the store
// rejected (logged with the first rejection). It returns the samples
// the store holds: those appended less those rejected.
func lateFigures(f figures, fig string, cfg config, phase string, late *lateRun, cs cutStats, log func(string)) int {
	f[fig+"late"] = float64(late.ls.late)
	f[fig+"rejected"] = float64(cs.late.rejected)
	if cs.late.firstErr != nil {
		log(fmt.Sprintf("%s: %s: %d of %d late samples rejected, the first: %v", cfg, phase, cs.late.rejected, late.ls.late, cs.late.firstErr))
	}
	return cs.late.appended - cs.late.rejected
}

// equalReads are the figures of the late variants that must be equal in
// both stores, the samples their read phases read, each with the figure
// of the late samples rejected in that variant.
var equalReads = []struct{ read, rejected string }{
	{"b6late.read.all.samples", "b6late.rejected"},
	{"b6late.read.hour.samples", "b6late.rejected"},
	{"scalelate.read.samples", "scalelate.rejected"},
}

// checkEqualReads compares the figures equalReads of both stores' run r
// (counted from 0) in out, where both have them and neither rejected a
// late sample (a rejection is a missed target of its own).
func checkEqualReads(out map[config][]figures, r int) error {
	iso, prom := out[config{isotsdbStore, true}], out[config{prometheusStore, true}]
	if len(iso) <= r || len(prom) <= r {
		return nil
	}
	a, b := iso[r], prom[r]
	for _, e := range equalReads {
		va, oka := a[e.read]
		vb, okb := b[e.read]
		if !oka || !okb || va == vb || a[e.rejected] > 0 || b[e.rejected] > 0 {
			continue
		}
		return fmt.Errorf("bench: run %d: %s: isotsdb read %.0f samples, Prometheus %.0f", r+1, e.read, va, vb)
	}
	return nil
}
