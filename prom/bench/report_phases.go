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

// The late variants' sections (phases_blocks_late.go), with issue 15's
// targets: ingest CPU ≤ 1.0×, reads ≥ 1.0×, a compaction's peak heap
// ≤ 1.0×, Open ≤ 1.0× clean and after a crash, no late sample rejected and
// none lost; heap per series and the rest are reported without a target.

func blocksLateSection() section {
	return section{"6 h of scrapes with late samples (1–10 min late, window 30 min), 2 h blocks cut as they go (isolation on)", []row{
		{label: "ingest CPU per sample (compactions included)", figure: "b6late.cpu", unit: "ns", target: atMost(1.0)},
		{label: "ingest samples/s (wall)", figure: "b6late.rate", unit: "/s"},
		{label: "late samples appended", figure: "b6late.late", unit: "n"},
		{label: "late samples rejected", figure: "b6late.rejected", unit: "n", abs: atMost(0)},
		{label: "head compactions measured", figure: "b6late.compactions", unit: "n"},
		{label: "CPU of compactions (+ trigger rounds)", figure: "b6late.compact.cpu", unit: "s"},
		{label: "peak heap in a compaction over live before", figure: "b6late.compact.peak", unit: "MiB", target: atMost(1.0)},
		{label: "peak heap in a compaction over pre-open", figure: "b6late.compact.peakabs", unit: "MiB"},
		{label: "heap per series at the end, after GC", figure: "b6late.heap", unit: "B"},
		{label: "read samples/s, whole 6 h", figure: "b6late.read.all", unit: "/s", target: atLeast(1.0)},
		{label: "read samples/s, newest hour", figure: "b6late.read.hour", unit: "/s", target: atLeast(1.0)},
		{label: "samples in blocks", figure: "b6late.disk.samples", unit: "n"},
		{label: "bytes on disk per sample (blocks)", figure: "b6late.disk.bytes", unit: "B"},
		{label: "bytes of the data dir per sample written", figure: "b6late.dir.bytes", unit: "B"},
		{label: "phase wall (ingest, reads, checks, restart)", figure: "b6late.seconds", unit: "s"},
	}}
}

func restartLateSection() section {
	return section{"restart after the 6 h run with late samples (Open timed alone; WAL and WBL replayed)", []row{
		{label: "Close wall", figure: "restartlate.close.wall", unit: "s"},
		{label: "clean restart: Open wall", figure: "restartlate.open.wall", unit: "s", target: atMost(1.0)},
		{label: "clean restart: Open CPU", figure: "restartlate.open.cpu", unit: "s"},
		{label: "clean restart: live heap after Open per series", figure: "restartlate.open.heap", unit: "B"},
		{label: "after kill -9 (a copy): Open wall", figure: "restartlate.crash.wall", unit: "s", target: atMost(1.0)},
		{label: "after kill -9: Open CPU", figure: "restartlate.crash.cpu", unit: "s"},
		{label: "after kill -9: live heap after Open per series", figure: "restartlate.crash.heap", unit: "B"},
		{label: "after kill -9: samples lost", figure: "restartlate.crash.lost", unit: "n", abs: atMost(0)},
	}}
}

// scaleLateSection lists the scale-late phase's rows; the per-query rows
// follow the figures present.
func scaleLateSection(iso, prom []figures) section {
	rows := []row{
		{label: "rounds of the scrape written", figure: "scalelate.rounds", unit: "n"},
		{label: "stopped early (1: yes, see the log)", figure: "scalelate.stopped", unit: "n"},
		{label: "ingest CPU per sample (compactions included)", figure: "scalelate.cpu", unit: "ns", target: atMost(1.0)},
		{label: "ingest samples/s (wall)", figure: "scalelate.rate", unit: "/s"},
		{label: "late samples appended", figure: "scalelate.late", unit: "n"},
		{label: "late samples rejected", figure: "scalelate.rejected", unit: "n", abs: atMost(0)},
		{label: "heap per series after GC", figure: "scalelate.heap", unit: "B"},
		{label: "RSS growth per series (end of ingest)", figure: "scalelate.rss", unit: "B"},
		{label: "peak RSS growth per series", figure: "scalelate.rss.peak", unit: "B"},
		{label: "head compactions measured", figure: "scalelate.compactions", unit: "n"},
		{label: "peak heap in a compaction over live before", figure: "scalelate.compact.peak", unit: "MiB", target: atMost(1.0)},
		{label: "read samples/s (all queries)", figure: "scalelate.read", unit: "/s", target: atLeast(1.0)},
	}
	rows = append(rows, p50Rows(iso, prom, "scalelate.p50.")...)
	rows = append(rows, row{label: "phase wall", figure: "scalelate.seconds", unit: "s"})
	return section{"scale with late samples (1–10 min late, window 30 min; replicated corpus, isolation on)", rows}
}

// p50Rows returns a row for each figure of iso or prom named prefix
// followed by a query name, in the order of the names.
func p50Rows(iso, prom []figures, prefix string) []row {
	var names []string
	for _, fs := range [][]figures{iso, prom} {
		for _, f := range fs {
			for k := range f {
				if n, ok := strings.CutPrefix(k, prefix); ok && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	slices.Sort(names)
	var rows []row
	for _, n := range names {
		rows = append(rows, row{label: "p50 " + n, figure: prefix + n, unit: "ns"})
	}
	return rows
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
		{label: "of the RSS growth, mapped file pages", figure: "scale.rss.file", unit: "B"},
		{label: "head compactions measured", figure: "scale.compactions", unit: "n"},
		{label: "peak heap in a compaction over live before", figure: "scale.compact.peak", unit: "MiB", target: atMost(1.0)},
		{label: "read samples/s (all queries)", figure: "scale.read", unit: "/s", target: atLeast(1.25)},
	}
	rows = append(rows, p50Rows(iso, prom, "scale.p50.")...)
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
	fmt.Fprintf(w, "  %-46s %14s %14s %9.3f  %-8s %s\n", "geometric mean of the ratios", "", "", geo, gt, verdict(gt.holdsMeasured(geo), ok))
	fmt.Fprintf(w, "  %-46s %14s %14s %9.3f  %-8s %s\n", "worst ratio: "+worstName, "", "", worst, wt, verdict(wt.holdsMeasured(worst), ok))
	printRow(w, row{label: "phase wall (both stores)", figure: "promql.seconds", unit: "s"}, median(iso, "promql.seconds"), median(prom, "promql.seconds"), ok)
}
