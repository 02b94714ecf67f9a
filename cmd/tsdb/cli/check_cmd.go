package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/dustin/go-humanize"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/vfs"
)

// runCheck checks the data directory dir offline (package check) and
// prints every problem, a line per block and a summary. It returns
// exitError if any problem is an error; warnings alone pass.
func runCheck(dir string, stdout, stderr io.Writer) int {
	rep, err := check.Dir(vfs.OS(), dir)
	if errors.Is(err, check.ErrNotTSDB) {
		return reportError(stderr, "check", fmt.Errorf("%s: %w", dir, errNotTSDB))
	}
	if err != nil {
		return reportError(stderr, "check", err)
	}
	out := bufio.NewWriter(stdout)
	for _, p := range rep.Problems {
		fmt.Fprintln(out, p)
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintln(out)
	}
	for _, b := range rep.Blocks {
		// Native histograms are counted in parentheses, where there are any.
		hc, hs := "", ""
		if b.HistogramChunks > 0 {
			hc = " (" + humanize.Comma(int64(b.HistogramChunks)) + " histogram)"
			hs = " (" + humanize.Comma(int64(b.HistogramSamples)) + " histogram)"
		}
		fmt.Fprintf(out, "block %s  %s to %s  %s series, %s chunks%s, %s samples%s, %s tombstones\n",
			filepath.Base(b.Dir), formatTime(b.MinTime), formatTime(b.MaxTime), humanize.Comma(int64(b.Series)),
			humanize.Comma(int64(b.Chunks)), hc, humanize.Comma(int64(b.Samples)), hs, humanize.Comma(int64(b.Tombstones)))
	}
	w := rep.WAL
	switch {
	case w.Dir == "":
		fmt.Fprintln(out, "WAL: none")
	default:
		cp := "no checkpoint"
		if w.Checkpoint != "" {
			cp = filepath.Base(w.Checkpoint)
		}
		segs := "no segments"
		if w.FirstSegment >= 0 {
			segs = fmt.Sprintf("segments %08d to %08d", w.FirstSegment, w.LastSegment)
		}
		fmt.Fprintf(out, "WAL: %s, %s: %s records, %s series, %s samples\n", cp, segs,
			humanize.Comma(int64(w.Records)), humanize.Comma(int64(w.Series)), humanize.Comma(int64(w.Samples)))
	}
	if hc := rep.HeadChunks; hc.Dir != "" {
		ooo := ""
		if hc.OutOfOrderChunks > 0 {
			ooo = " (and " + humanize.Comma(int64(hc.OutOfOrderChunks)) + " out-of-order, skipped)"
		}
		fmt.Fprintf(out, "head chunks: %s files, %s chunks%s, %s bytes\n", humanize.Comma(int64(hc.Files)),
			humanize.Comma(int64(hc.Chunks)), ooo, humanize.Comma(hc.Bytes))
	}
	errs, warns := rep.Count(check.Error), rep.Count(check.Warning)
	verdict := "OK"
	if errs > 0 {
		verdict = "FAILED"
	}
	fmt.Fprintf(out, "%s: %s, %s\n", verdict, plural(errs, "error"), plural(warns, "warning"))
	if err := out.Flush(); err != nil {
		return reportError(stderr, "check", err)
	}
	if errs > 0 {
		return exitError
	}
	return exitOK
}
