package main

import (
	"bytes"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// issue17Figures returns figures of isotsdb and Prometheus for the
// blocks6h, restart, scale and promql sections in which every target
// holds by 10%: Prometheus's value of each row is 100, isotsdb's 100 times
// the bound, 10% to the safe side. The PromQL queries are five at 0.7 and
// one at 0.95.
func issue17Figures(t *testing.T) (iso, prom figures, targeted []row) {
	t.Helper()
	iso, prom = figures{}, figures{}
	for _, sec := range []section{blocksSection(), restartSection(), scaleSection(nil, nil)} {
		for _, r := range sec.rows {
			prom[r.figure], iso[r.figure] = 100, 100
			if r.target == nil {
				continue
			}
			f := 1.1
			if r.target.max {
				f = 0.9
			}
			iso[r.figure] = 100 * r.target.bound * f
			targeted = append(targeted, r)
		}
	}
	for i := range 5 {
		k := fmt.Sprintf("promql.%02d q%d", i, i)
		iso[k], prom[k] = 70, 100
	}
	iso["promql.05 slow"], prom["promql.05 slow"] = 95, 100
	iso["promql.seconds"], prom["promql.seconds"] = 10, 10
	require.Len(t, targeted, 14, "the targeted rows of blocks6h, restart and scale")
	return iso, prom, targeted
}

// reportOf runs report over one run of each store with isolation on.
func reportOf(iso, prom figures) (string, bool) {
	var out bytes.Buffer
	ok := report(&out, map[config][]figures{
		{isotsdbStore, true}:    {iso},
		{prometheusStore, true}: {prom},
	}, nil)
	return out.String(), ok
}

// requireMissedOnly checks that the report failed and that its only row
// marked MISSED starts with label.
func requireMissedOnly(t *testing.T, out string, ok bool, label string) {
	t.Helper()
	require.False(t, ok, "%s", out)
	missed := missedLines(out)
	require.Len(t, missed, 1, "%s", out)
	require.True(t, strings.HasPrefix(missed[0], label), "%q missed, want %q", missed[0], label)
}

// missedLines returns the report's lines marked MISSED.
func missedLines(out string) []string {
	var lines []string
	for l := range strings.Lines(out) {
		if strings.HasSuffix(strings.TrimRight(l, "\n"), "MISSED") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return lines
}

// TestReportVerdict checks that the exit status follows the rows: with
// every target of issue 17's phases held the report holds, and moving any
// one figure to the wrong side of its bound, or leaving it out, misses
// exactly that row.
func TestReportVerdict(t *testing.T) {
	iso, prom, targeted := issue17Figures(t)
	out, ok := reportOf(iso, prom)
	require.True(t, ok, "%s", out)
	require.Empty(t, missedLines(out))

	for _, r := range targeted {
		for _, how := range []string{"over", "missing", "missing in prometheus"} {
			t.Run(r.figure+"/"+how, func(t *testing.T) {
				bad, badProm := maps.Clone(iso), maps.Clone(prom)
				switch how {
				case "missing":
					delete(bad, r.figure)
				case "missing in prometheus":
					delete(badProm, r.figure)
				default:
					f := 0.9
					if r.target.max {
						f = 1.1
					}
					bad[r.figure] = 100 * r.target.bound * f
				}
				out, ok := reportOf(bad, badProm)
				requireMissedOnly(t, out, ok, r.label)
			})
		}
	}

	t.Run("promql worst", func(t *testing.T) {
		bad := maps.Clone(iso)
		bad["promql.05 slow"] = 105 // geometric mean 0.75 still holds
		out, ok := reportOf(bad, prom)
		requireMissedOnly(t, out, ok, "worst ratio: slow")
	})
	t.Run("promql query missing", func(t *testing.T) {
		bad := maps.Clone(iso)
		delete(bad, "promql.02 q2")
		out, ok := reportOf(bad, prom)
		requireMissedOnly(t, out, ok, "geometric mean of the ratios")
	})
	t.Run("promql geometric mean", func(t *testing.T) {
		bad := maps.Clone(iso)
		for i := range 5 {
			bad[fmt.Sprintf("promql.%02d q%d", i, i)] = 85 // every query ≤ 1.0, the mean 0.86
		}
		out, ok := reportOf(bad, prom)
		requireMissedOnly(t, out, ok, "geometric mean of the ratios")
	})
}
