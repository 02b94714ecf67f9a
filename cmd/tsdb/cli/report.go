package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
)

// writeReport prints res as aligned plain-text tables, ready to paste into
// a README.
func writeReport(w io.Writer, res *benchResult) error {
	cfg := res.cfg
	var b strings.Builder
	iso := "on"
	if !cfg.isolation {
		iso = "off"
	}
	fmt.Fprintf(&b, "isotsdb bench write: %s series in %s of %d, %s %v apart, %s, isolation %s\n",
		humanize.Comma(int64(cfg.series)), plural(res.targets, "target"), seriesPerTarget,
		plural(cfg.rounds, "scrape"), time.Duration(scrapeInterval)*time.Millisecond,
		plural(cfg.writers, "writer"), iso)
	switch w := cfg.outOfOrderWindow(); {
	case cfg.lateFrac > 0:
		fmt.Fprintf(&b, "late samples: %s of each scrape, 1 to %d scrapes late; out-of-order window %v\n",
			formatPercent(cfg.lateFrac), maxLateDelay, w)
	case w > 0:
		fmt.Fprintf(&b, "late samples: none; out-of-order window %v\n", w)
	}

	b.WriteString("\ningestion\n")
	cpu := "n/a"
	if res.cpuKnown && res.samples > 0 {
		cpu = fmt.Sprintf("%.0f ns", float64(res.cpu.Nanoseconds())/float64(res.samples))
	}
	perSeries := "n/a"
	if res.headSeries > 0 && res.heapAfterGC > res.heapBaseline {
		perSeries = humanize.IBytes((res.heapAfterGC - res.heapBaseline) / uint64(res.headSeries))
	}
	bytesPerSample := "n/a"
	if res.samples > 0 {
		bytesPerSample = fmt.Sprintf("%.2f", float64(res.disk.total)/float64(res.samples))
	}
	rows := [][]string{
		{"samples", humanize.Comma(res.samples), ""},
		{"series", humanize.Comma(res.headSeries), ""},
		{"wall time", formatDuration(res.wall), ""},
		{"samples/s", humanize.Comma(int64(float64(res.samples) / res.wall.Seconds())), ""},
		{"CPU per sample", cpu, "user+sys of the process"},
		{"peak heap in use", humanize.IBytes(res.peakHeap), fmt.Sprintf("sampled every %v", monitorInterval)},
		{"final compaction", formatDuration(res.compaction), "what was still due when ingestion ended"},
		{"heap per series", perSeries, "after compaction and GC"},
		{"on disk", humanize.IBytes(uint64(res.disk.total)), res.disk.describe()},
		{"bytes per sample", bytesPerSample, "on disk"},
	}
	if cfg.lateFrac > 0 {
		rows = append(rows,
			[]string{"late samples written", humanize.Comma(res.lateWritten), "counted in samples"},
			[]string{"late samples rejected", humanize.Comma(res.lateRejected), "too old, out of bounds or out of order"})
	}
	writeTable(&b, []align{left, right, left}, rows)

	fmt.Fprintf(&b, "\nqueries (whole time range, median of %d runs)\n", queryRuns)
	qrows := [][]string{{"query", "selector", "series", "samples", "latency"}}
	for _, r := range res.queryResults {
		qrows = append(qrows, []string{r.q.what, r.q.selector, humanize.Comma(int64(r.series)),
			humanize.Comma(r.samples), formatDuration(r.latency)})
	}
	writeTable(&b, []align{left, left, right, right, right}, qrows)

	c := res.check
	fmt.Fprintf(&b, "\nread-while-write check (%v, %s of %d series, %s)\n",
		c.duration, plural(c.writers, "writer"), c.seriesPerTarget, plural(c.readers, "reader"))
	verdict := "must be 0"
	if !cfg.isolation {
		verdict = "expected > 0 without isolation"
	}
	crows := [][]string{
		{"commits", humanize.Comma(c.commits), ""},
		{"reads", humanize.Comma(c.reads), ""},
		{"partial reads", humanize.Comma(c.partial), verdict},
		{"backwards reads", humanize.Comma(c.backwards), "must be 0"},
		{"wrong values", humanize.Comma(c.wrongValues), "must be 0"},
	}
	if c.lateFrac > 0 {
		crows = append(crows,
			[]string{"late samples", humanize.Comma(c.lateSamples),
				fmt.Sprintf("%s of each scrape; seen with their commit or not at all", formatPercent(c.lateFrac))},
			[]string{"late rejected", humanize.Comma(c.lateRejected), "not expected by the readers"})
	}
	writeTable(&b, []align{left, right, left}, crows)
	_, err := io.WriteString(w, b.String())
	return err
}

// align is a column's alignment.
type align bool

const (
	left  align = false
	right align = true
)

// writeTable writes rows as columns padded to their widest cell, two
// spaces apart and indented by two, without trailing spaces.
func writeTable(b *strings.Builder, aligns []align, rows [][]string) {
	widths := make([]int, len(aligns))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		line.WriteString("  ")
		for i, cell := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if aligns[i] == right {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}

// formatPercent writes a fraction as a percentage, e.g. 0.1 as "10%".
func formatPercent(f float64) string {
	return fmt.Sprintf("%.3g%%", 100*f)
}

// formatDuration rounds d to about three significant digits. It rounds
// before choosing the unit, so that 999.6 µs reads "1 ms", not "1e+03 µs".
func formatDuration(d time.Duration) string {
	if d > 0 {
		p := time.Duration(1)
		for d/p >= 1000 {
			p *= 10
		}
		d = d.Round(p)
	}
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3g µs", float64(d)/float64(time.Microsecond))
	}
}
