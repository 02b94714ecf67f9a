package main

import (
	"fmt"
	"slices"
	"strings"
)

// phaseNames are the phases of the default set ("all"), in the order they
// run within a run of a configuration.
var phaseNames = []string{"scrape", "hist", "late", "blocks6h", "restart", "scale", "promql"}

// latePhaseNames are the late-sample variants of blocks6h, restart and
// scale (phases_blocks_late.go). They run only when named: at default
// sizes they would add to the default set about 18 minutes on a shared
// 2-core machine (blocks6h-late and restart-late take some 100 s per
// store and run, 5 runs), and scale-late at 1,000,000 series more than
// the 11 minutes a run that scale takes. Each runs right after the phase
// it is a variant of.
var latePhaseNames = []string{"blocks6h-late", "restart-late", "scale-late"}

// phaseSet is a set of phase names.
type phaseSet map[string]bool

// parsePhases parses a comma-separated list of phase names; "all" (or an
// empty list) stands for the default set, phaseNames, and may be combined
// with other names ("all,blocks6h-late").
func parsePhases(list string) (phaseSet, error) {
	ps := phaseSet{}
	if list == "" {
		list = "all"
	}
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "all":
			for _, m := range phaseNames {
				ps[m] = true
			}
		case isPhase(n):
			ps[n] = true
		default:
			return nil, fmt.Errorf("bench: unknown phase %q (phases: %s; not in all: %s)", n, strings.Join(phaseNames, ","), strings.Join(latePhaseNames, ","))
		}
	}
	return ps, nil
}

func isPhase(n string) bool {
	return slices.Contains(phaseNames, n) || slices.Contains(latePhaseNames, n)
}

// blocks reports whether the 6 h ingest runs: for its own figures, or for
// the restart and PromQL phases, which work on its data.
func (ps phaseSet) blocks() bool { return ps["blocks6h"] || ps["restart"] || ps["promql"] }

// blocksLate reports whether the 6 h ingest with late samples runs: for
// its own figures, or for restart-late, which works on its data.
func (ps phaseSet) blocksLate() bool { return ps["blocks6h-late"] || ps["restart-late"] }

// late reports whether any late-sample variant of blocks6h, restart or
// scale is selected.
func (ps phaseSet) late() bool { return ps.blocksLate() || ps["scale-late"] }
