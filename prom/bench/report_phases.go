package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// The table's sections of the blocks6h, restart, scale and PromQL phases.

func blocksSection() section {
	return section{"6 h of scrapes, 2 h blocks cut as they go (isolation on)", []row{
		{label: "ingest CPU per sample (compactions included)", figure: "b6.cpu", unit: "ns", target: atMost(1.0)},
		{label: "ingest samples/s (wall)", figure: "b6.rate", unit: "/s"},
		{label: "head compactions measured", figure: "b6.compactions", unit: "n"},
		{label: "CPU of compactions (+ trigger rounds)", figure: "b6.compact.cpu", unit: "s"},
		{label: "peak heap in a compaction over live before", figure: "b6.compact.peak", unit: "MiB", target: atMost(1.0)},
		{label: "peak heap in a compaction over pre-open", figure: "b6.compact.peakabs", unit: "MiB"},
		{label: "heap per series at the end, after GC", figure: "b6.heap", unit: "B", target: atMost(0.8)},
		{label: "read samples/s, whole 6 h", figure: "b6.read.all", unit: "/s", target: atLeast(1.25)},
		{label: "read samples/s, newest hour", figure: "b6.read.hour", unit: "/s", target: atLeast(1.25)},
		{label: "samples in blocks", figure: "b6.disk.samples", unit: "n"},
		{label: "bytes on disk per sample (blocks)", figure: "b6.disk.bytes", unit: "B", target: atMost(1.0)},
		{label: "bytes of the data dir per sample written", figure: "b6.dir.bytes", unit: "B"},
		{label: "phase wall (ingest, reads, restart)", figure: "b6.seconds", unit: "s"},
	}}
}

func restartSection() section {
	return section{"restart after the 6 h run (Open timed alone)", []row{
		{label: "Close wall", figure: "restart.close.wall", unit: "s"},
		{label: "clean restart: Open wall", figure: "restart.open.wall", unit: "s", target: atMost(0.5)},
		{label: "clean restart: Open CPU", figure: "restart.open.cpu", unit: "s"},
		{label: "clean restart: live heap after Open per series", figure: "restart.open.heap", unit: "B", target: atMost(1.0)},
		{label: "after kill -9 (a copy): Open wall", figure: "restart.crash.wall", unit: "s", target: atMost(1.0)},
		{label: "after kill -9: Open CPU", figure: "restart.crash.cpu", unit: "s"},
		{label: "after kill -9: live heap after Open per series", figure: "restart.crash.heap", unit: "B"},
		{label: "after kill -9: samples lost", figure: "restart.crash.lost", unit: "n"},
	}}
}

// scaleSection lists the scale phase's rows; the per-query rows follow
// the figures present.
func scaleSection(iso, prom []figures) section {
	rows := []row{
		{label: "rounds written", figure: "scale.rounds", unit: "n"},
		{label: "stopped early (1: yes, see the log)", figure: "scale.stopped", unit: "n"},
		{label: "ingest CPU per sample (compactions included)", figure: "scale.cpu", unit: "ns", target: atMost(1.0)},
		{label: "ingest samples/s (wall)", figure: "scale.rate", unit: "/s"},
		{label: "heap per series after GC", figure: "scale.heap", unit: "B", target: atMost(0.8)},
		{label: "RSS growth per series (end of ingest)", figure: "scale.rss", unit: "B", target: atMost(1.0)},
		{label: "peak RSS growth per series", figure: "scale.rss.peak", unit: "B"},
		{label: "head compactions measured", figure: "scale.compactions", unit: "n"},
		{label: "peak heap in a compaction over live before", figure: "scale.compact.peak", unit: "MiB", target: atMost(1.0)},
		{label: "read samples/s (all queries)", figure: "scale.read", unit: "/s", target: atLeast(1.25)},
	}
	var names []string
	for _, fs := range [][]figures{iso, prom} {
		for _, f := range fs {
			for k := range f {
				if n, ok := strings.CutPrefix(k, "scale.p50."); ok && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		rows = append(rows, row{label: "p50 " + n, figure: "scale.p50." + n, unit: "ns"})
	}
	rows = append(rows, row{label: "phase wall", figure: "scale.seconds", unit: "s"})
	return section{"scale (replicated corpus, isolation on; RSS: see the README)", rows}
}

// promqlReport prints the PromQL phase: each query's median latencies and
// ratio, the geometric mean of the ratios (target ≤ 0.8) and the worst
// ratio (target ≤ 1.0), and records in ok whether those hold.
func promqlReport(w io.Writer, iso, prom []figures, ok *bool) {
	var names []string
	for _, fs := range [][]figures{iso, prom} {
		for _, f := range fs {
			for k := range f {
				if strings.HasPrefix(k, "promql.") && k != "promql.seconds" && !slices.Contains(names, k) {
					names = append(names, k)
				}
			}
		}
	}
	slices.Sort(names)
	fmt.Fprintf(w, "PromQL engine over the 6 h data (median latency; results equal in both stores)\n")
	logSum, worst, worstName := 0.0, 0.0, ""
	for _, k := range names {
		a, b := median(iso, k), median(prom, k)
		r := a / b
		logSum += math.Log(r)
		label := k[len("promql.NN "):]
		if r > worst || worstName == "" {
			worst, worstName = r, label
		}
		printRow(w, row{label: label, figure: k, unit: "ns"}, a, b, ok)
	}
	geo := math.Exp(logSum / float64(len(names)))
	gt, wt := atMost(0.8), atMost(1.0)
	fmt.Fprintf(w, "  %-46s %14s %14s %9.3f  %-8s %s\n", "geometric mean of the ratios", "", "", geo, gt, verdict(gt.holds(geo), ok))
	fmt.Fprintf(w, "  %-46s %14s %14s %9.3f  %-8s %s\n", "worst ratio: "+worstName, "", "", worst, wt, verdict(wt.holds(worst), ok))
	printRow(w, row{label: "phase wall (both stores)", figure: "promql.seconds", unit: "s"}, median(iso, "promql.seconds"), median(prom, "promql.seconds"), ok)
}
