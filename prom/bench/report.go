package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// median returns the median of figure name over runs.
func median(fs []figures, name string) float64 {
	vs := make([]float64, 0, len(fs))
	for _, f := range fs {
		if v, ok := f[name]; ok {
			vs = append(vs, v)
		}
	}
	return medianOf(vs)
}

// medianOf returns the median of vs (0 if empty); it sorts vs.
func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// target is a bound on a ratio.
type target struct {
	max   bool // the ratio must be ≤ bound (else ≥)
	bound float64
}

func (t *target) String() string {
	if t == nil {
		return ""
	}
	if t.max {
		return fmt.Sprintf("≤ %.2f", t.bound)
	}
	return fmt.Sprintf("≥ %.2f", t.bound)
}

func (t *target) holds(r float64) bool {
	if t.max {
		return r <= t.bound
	}
	return r >= t.bound
}

// holdsMeasured is holds for a ratio or a cost, which are positive when
// measured: one that is 0 or infinite (the figure missing in one store's
// runs), NaN (in both) or negative (a growth that came out below zero, as
// the RSS growth of a tiny run can) misses its target whichever side the
// bound is on.
func (t *target) holdsMeasured(r float64) bool {
	return r > 0 && !math.IsInf(r, 0) && t.holds(r)
}

func atMost(b float64) *target  { return &target{max: true, bound: b} }
func atLeast(b float64) *target { return &target{bound: b} }

// row is one figure of the table.
type row struct {
	label  string
	figure string
	unit   string  // how values print: "ns", "B", "/s", "x", "s", "n"
	target *target // on the ratio isotsdb/Prometheus, nil if none
	abs    *target // on isotsdb's own value, nil if none
}

// section is a titled group of rows.
type section struct {
	name string
	rows []row
}

// report prints the comparison table and returns whether every target held.
func report(w io.Writer, res map[config][]figures, qs []*query) bool {
	ok := true
	iso, prom := res[config{isotsdbStore, true}], res[config{prometheusStore, true}]
	isoOff, promOff := res[config{isotsdbStore, false}], res[config{prometheusStore, false}]

	has := func(name string) bool { return median(iso, name) != 0 || median(prom, name) != 0 }
	var sections []section
	scrape := has("ingest.cpu")
	if scrape {
		sections = scrapeSections(qs)
	}
	hist := median(iso, "hist.cpu") > 0
	if hist {
		sections = append(sections, section{"native histograms (schema 3, ~20 buckets; a store of histograms alone)", []row{
			{label: "ingest CPU per histogram sample", figure: "hist.cpu", unit: "ns", target: atMost(1.0)},
			{label: "ingest histogram samples/s (wall)", figure: "hist.rate", unit: "/s"},
			{label: "heap per histogram series after GC", figure: "hist.heap", unit: "B"},
			{label: "allocations per histogram sample", figure: "hist.allocs", unit: "n"},
			{label: "read histogram samples/s (head, full range)", figure: "hist.read.rate", unit: "/s", target: atLeast(1.0)},
			{label: "read p50 (head, full range)", figure: "hist.read.p50", unit: "ns"},
			{label: "compaction phase CPU", figure: "hist.compact.cpu", unit: "s"},
			{label: "histogram samples in blocks", figure: "hist.disk.samples", unit: "n"},
			{label: "bytes on disk per histogram sample", figure: "hist.disk.bytes", unit: "B", target: atMost(1.0)},
			{label: "read histogram samples/s (block, full range)", figure: "hist.read.block.rate", unit: "/s"},
		}}, section{"mixed scrape (floats and histograms in one commit per target)", []row{
			{label: "ingest CPU per sample (float or histogram)", figure: "mixed.cpu", unit: "ns"},
			{label: "ingest samples/s (wall)", figure: "mixed.rate", unit: "/s"},
		}})
	}
	late := median(iso, "late.cpu") > 0
	if late {
		sections = append(sections, section{"late samples (1–10 min late, out-of-order window 30 min; isolation on)", []row{
			{label: "ingest CPU per sample (on time or late)", figure: "late.cpu", unit: "ns", target: atMost(1.0)},
			{label: "ingest samples/s (wall)", figure: "late.rate", unit: "/s"},
			{label: "read samples/s (full range, after ingest)", figure: "late.read.rate", unit: "/s", target: atLeast(1.0)},
			{label: "late samples appended", figure: "late.late", unit: "n"},
			{label: "late samples rejected", figure: "late.rejected", unit: "n", abs: atMost(0)},
		}})
	}
	fmt.Fprintf(w, "%-48s %14s %14s %9s  %-8s\n", "figure (medians)", "isotsdb", "prometheus", "ratio", "target")
	for _, sec := range sections {
		fmt.Fprintf(w, "%s\n", sec.name)
		for _, r := range sec.rows {
			printRow(w, r, median(iso, r.figure), median(prom, r.figure), &ok)
		}
	}
	if scrape || hist {
		isolationCost(w, iso, prom, isoOff, promOff, scrape, hist, &ok)
	}
	if late {
		fmt.Fprintf(w, "out-of-order window cost (window on, no late samples / window off; each store against itself)\n")
		r := row{label: "scrape CPU per sample, paired blocks", figure: "latecost.scrape", target: atMost(1.02)}
		a, b := median(iso, r.figure), median(prom, r.figure)
		fmt.Fprintf(w, "  %-46s %14.3f %14.3f %9s  %-8s %s\n", r.label, a, b, "", r.target, verdict(r.target.holdsMeasured(a), &ok))
	}

	var more []section
	if has("b6.cpu") {
		more = append(more, blocksSection())
	}
	if has("restart.open.wall") {
		more = append(more, restartSection())
	}
	if has("b6late.cpu") {
		more = append(more, blocksLateSection())
	}
	if has("restartlate.open.wall") {
		more = append(more, restartLateSection())
	}
	if has("scale.rounds") {
		more = append(more, scaleSection(iso, prom))
	}
	if has("scalelate.rounds") {
		more = append(more, scaleLateSection(iso, prom))
	}
	for _, sec := range more {
		fmt.Fprintf(w, "%s\n", sec.name)
		for _, r := range sec.rows {
			printRow(w, r, median(iso, r.figure), median(prom, r.figure), &ok)
		}
	}
	if has("promql.seconds") {
		promqlReport(w, iso, prom, &ok)
	}
	return ok
}

// isolationCost prints the isolation cost rows of the scrape and
// histogram phases that ran and records in ok whether their targets hold.
func isolationCost(w io.Writer, iso, prom, isoOff, promOff []figures, scrape, hist bool, ok *bool) {
	fmt.Fprintf(w, "isolation cost (on/off, each store against itself)\n")
	fmt.Fprintf(w, "  %-46s %14s %14s %9s  %-8s\n", "", "isotsdb", "prometheus", "", "target")
	var paired []row
	if scrape {
		paired = append(paired,
			row{label: "scrape CPU per sample, paired blocks", figure: "isocost.scrape", target: atMost(1.01)},
			row{label: "1,024 appenders CPU per sample, paired blocks", figure: "isocost.stress", target: atMost(1.05)})
	}
	if hist {
		paired = append(paired, row{label: "mixed scrape CPU per sample, paired blocks", figure: "isocost.hist", target: atMost(1.01)})
	}
	for _, r := range paired {
		a, b := median(iso, r.figure), median(prom, r.figure)
		fmt.Fprintf(w, "  %-46s %14.3f %14.3f %9s  %-8s %s\n", r.label, a, b, "", r.target, verdict(r.target.holdsMeasured(a), ok))
	}
	var whole []row
	if scrape {
		whole = append(whole,
			row{label: "scrape heap per series after GC", figure: "ingest.heap", target: atMost(1.02)},
			row{label: "scrape CPU per sample, whole runs", figure: "ingest.cpu"},
			row{label: "1,024 appenders CPU per sample, whole runs", figure: "stress.cpu"},
			row{label: "1,024 appenders wall per sample, whole runs", figure: "stress.wall"})
	}
	if hist {
		whole = append(whole, row{label: "histogram CPU per sample, whole runs", figure: "hist.cpu"})
	}
	for _, r := range whole {
		a := median(iso, r.figure) / median(isoOff, r.figure)
		b := median(prom, r.figure) / median(promOff, r.figure)
		mark, tgt := "", ""
		if r.target != nil {
			tgt = r.target.String()
			mark = verdict(r.target.holdsMeasured(a), ok)
		}
		fmt.Fprintf(w, "  %-46s %14.3f %14.3f %9s  %-8s %s\n", r.label, a, b, "", tgt, mark)
	}
}

// scrapeSections are the sections of the scrape phase.
func scrapeSections(qs []*query) []section {
	return []section{
		{"ingest (isolation on)", []row{
			{label: "CPU per sample", figure: "ingest.cpu", unit: "ns", target: atMost(1.0)},
			{label: "samples/s (wall)", figure: "ingest.rate", unit: "/s"},
			{label: "heap per series after GC", figure: "ingest.heap", unit: "B", target: atMost(0.8)},
			{label: "allocations per sample", figure: "ingest.allocs", unit: "n"},
		}},
		{"read (full range, after ingest)", readRows(qs)},
		{"read while writing", []row{
			{label: "ingest samples/s (wall)", figure: "rww.ingest", unit: "/s"},
			{label: "read samples/s", figure: "rww.read", unit: "/s"},
			{label: "query p50 (all queries)", figure: "rww.p50", unit: "ns"},
			{label: "query p99 (all queries)", figure: "rww.p99", unit: "ns"},
		}},
		{"head compaction", []row{
			{label: "phase wall (last rounds + compaction)", figure: "compact.wall", unit: "s"},
			{label: "phase CPU", figure: "compact.cpu", unit: "s"},
			{label: "samples in blocks", figure: "disk.samples", unit: "n"},
			{label: "bytes on disk per sample", figure: "disk.bytes", unit: "B", target: atMost(1.0)},
		}},
		{"isolation stress (1,024 appenders, 1–10 samples per commit)", []row{
			{label: "CPU per sample", figure: "stress.cpu", unit: "ns"},
			{label: "wall per sample", figure: "stress.wall", unit: "ns"},
		}},
		{"query start with 10,000 open appenders", []row{
			{label: "open + close a querier (median)", figure: "qstart", unit: "ns", abs: atMost(1000)},
		}},
	}
}

// printRow prints row r with isotsdb's value a and Prometheus's b and
// records in ok whether its target holds.
func printRow(w io.Writer, r row, a, b float64, ok *bool) {
	ratio := a / b
	ratioStr := fmt.Sprintf("%9.3f", ratio)
	if b == 0 { // a count both stores should keep at 0
		ratioStr = fmt.Sprintf("%9s", "-")
	}
	mark, tgt := "", ""
	if r.target != nil {
		tgt = r.target.String()
		mark = verdict(r.target.holdsMeasured(ratio), ok)
	}
	if r.abs != nil {
		switch tgt = r.abs.String(); r.unit {
		case "ns":
			tgt += " ns"
		case "n": // a count: no decimals
			tgt = strings.TrimSuffix(tgt, ".00")
		}
		mark = verdict(r.abs.holds(a), ok)
	}
	fmt.Fprintf(w, "  %-46s %14s %14s %s  %-8s %s\n", r.label, format(a, r.unit), format(b, r.unit), ratioStr, tgt, mark)
}

func readRows(qs []*query) []row {
	rows := []row{{label: "samples/s (all queries)", figure: "read.rate", unit: "/s", target: atLeast(1.25)}}
	for _, q := range qs {
		rows = append(rows,
			row{label: "p50 " + q.name, figure: "read.p50." + q.name, unit: "ns"},
			row{label: "p99 " + q.name, figure: "read.p99." + q.name, unit: "ns", target: atMost(1.0)})
	}
	return rows
}

func verdict(holds bool, ok *bool) string {
	if holds {
		return "ok"
	}
	*ok = false
	return "MISSED"
}

// format prints v in unit u.
func format(v float64, u string) string {
	switch u {
	case "ns":
		switch {
		case v >= 1e6:
			return fmt.Sprintf("%.2f ms", v/1e6)
		case v >= 1e4:
			return fmt.Sprintf("%.1f µs", v/1e3)
		default:
			return fmt.Sprintf("%.1f ns", v)
		}
	case "B":
		return fmt.Sprintf("%.2f B", v)
	case "MiB":
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case "/s":
		return fmt.Sprintf("%.2f M/s", v/1e6)
	case "s":
		return fmt.Sprintf("%.2f s", v)
	default:
		if v == float64(int64(v)) {
			return fmt.Sprintf("%d", int64(v))
		}
		return fmt.Sprintf("%.3f", v)
	}
}

// header describes the run.
func header(w io.Writer, c *corpus, p params, runs int, promVersion string) {
	sel := p.phases
	if sel == nil {
		sel, _ = parsePhases("")
	}
	fmt.Fprintf(w, "isotsdb vs Prometheus TSDB %s: %d series in %d targets of %d, %d writers, scrapes 15 s apart, WAL snappy,\n",
		promVersion, len(c.series), c.targets(), targetSize, writers)
	if sel["scrape"] {
		fmt.Fprintf(w, "scrape: %d rounds, 1h blocks,\n", p.rounds)
	}
	if p.histSeries > 0 && sel["hist"] {
		fmt.Fprintf(w, "plus %d native histogram series (schema 3, ~20 buckets) over the same targets,\n", p.histSeries)
	}
	if p.lateFrac > 0 && sel["late"] {
		fmt.Fprintf(w, "late phase: %.0f%% of the samples 1–10 min late, out-of-order window 30 min in both stores,\n", 100*p.lateFrac)
	}
	if sel.blocks() {
		fmt.Fprintf(w, "blocks6h: %d rounds in 2h blocks cut as they go%s,\n", p.blocksRounds, map[bool]string{true: ", then restart", false: ""}[sel["restart"]])
	}
	if p.lateFrac > 0 && sel.blocksLate() {
		fmt.Fprintf(w, "blocks6h-late: %d rounds in 2h blocks cut as they go, %.0f%% of the samples 1–10 min late, out-of-order window 30 min%s,\n", p.blocksRounds, 100*p.lateFrac, map[bool]string{true: ", then restart-late", false: ""}[sel["restart-late"]])
	}
	if sel["scale"] || sel["scale-late"] {
		fmt.Fprintf(w, "scale: %d series (the corpus replicated), %d rounds in blocks of %s%s,\n", p.scaleSeries, p.scaleRounds, shortDuration(time.Duration(scaleBlockRange(p.scaleRounds))*time.Millisecond),
			map[bool]string{true: fmt.Sprintf("; scale-late with %.0f%% of the samples 1–10 min late", 100*p.lateFrac), false: ""}[p.lateFrac > 0 && sel["scale-late"]])
	}
	if sel["promql"] {
		fmt.Fprintf(w, "promql: Prometheus's engine over the blocks6h data, %d to %d executions per query and store (until %v went on it),\n", p.promqlReps, max(p.promqlReps, promqlMaxReps), p.promqlBudget)
	}
	fmt.Fprintf(w, "medians of %d alternating runs per configuration\n", runs)
	fmt.Fprintln(w, strings.Repeat("-", 100))
}
