package main

import (
	"fmt"
	"strings"
)

// phaseNames are the phases -phases selects from, in the order they run
// within a run of a configuration.
var phaseNames = []string{"scrape", "hist", "late", "blocks6h", "restart", "scale", "promql"}

// phaseSet is a set of phase names.
type phaseSet map[string]bool

// parsePhases parses a comma-separated list of phase names ("all" or ""
// for every phase).
func parsePhases(list string) (phaseSet, error) {
	ps := phaseSet{}
	if list == "" || list == "all" {
		for _, n := range phaseNames {
			ps[n] = true
		}
		return ps, nil
	}
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		if !isPhase(n) {
			return nil, fmt.Errorf("bench: unknown phase %q (phases: %s)", n, strings.Join(phaseNames, ","))
		}
		ps[n] = true
	}
	return ps, nil
}

func isPhase(n string) bool {
	for _, m := range phaseNames {
		if m == n {
			return true
		}
	}
	return false
}

// blocks reports whether the 6 h ingest runs: for its own figures, or for
// the restart and PromQL phases, which work on its data.
func (ps phaseSet) blocks() bool { return ps["blocks6h"] || ps["restart"] || ps["promql"] }
