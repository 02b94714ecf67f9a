package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/vfs"
)

// runLs prints the blocks of the data directory dir, then a summary of its
// head and WAL ("tsdb ls DIR"). When dir has a shipper file (see
// readShipped), a SHIPPED column says which blocks were uploaded.
func runLs(dir string, stdout, stderr io.Writer) int {
	db, err := openReadOnly(dir, stderr)
	if err != nil {
		return reportError(stderr, "ls", err)
	}
	defer db.Close()

	out := bufio.NewWriter(stdout)
	shipped, hasShipper, shipErr := readShipped(dir)
	if shipErr != nil {
		fmt.Fprintf(stderr, "ls: warning: %v\n", shipErr)
	}
	rows := [][]string{{"BLOCK ULID", "MIN TIME", "MAX TIME", "DURATION", "SERIES", "SAMPLES", "HISTOGRAMS", "CHUNKS", "SIZE", "LEVEL"}}
	aligns := []align{left, left, left, right, right, right, right, right, right, right}
	if hasShipper {
		rows[0] = append(rows[0], "SHIPPED")
		aligns = append(aligns, left)
	}
	for _, m := range db.Blocks() {
		size := dirSize(filepath.Join(dir, m.ULID.String()))
		row := []string{m.ULID.String(), formatTime(m.MinTime), formatTime(m.MaxTime),
			formatSpan(m.MinTime, m.MaxTime), humanize.Comma(int64(m.Stats.NumSeries)), humanize.Comma(int64(m.Stats.NumSamples)),
			humanize.Comma(int64(m.Stats.NumHistogramSamples)), humanize.Comma(int64(m.Stats.NumChunks)), humanize.IBytes(uint64(size)), strconv.Itoa(m.Compaction.Level)}
		if hasShipper {
			mark := "no"
			switch {
			case shipErr != nil:
				mark = "?"
			case shipped[m.ULID.String()]:
				mark = "yes"
			}
			row = append(row, mark)
		}
		rows = append(rows, row)
	}
	var b strings.Builder
	if len(rows) == 1 {
		b.WriteString("no blocks\n")
	} else {
		writeTable(&b, aligns, rows)
	}
	out.WriteString(b.String())

	h := db.Head()
	fmt.Fprintln(out)
	if h.NumSeries() == 0 || h.MinTime() == math.MaxInt64 {
		fmt.Fprintf(out, "head: %s series, no samples\n", humanize.Comma(h.NumSeries()))
	} else {
		fmt.Fprintf(out, "head: %s series, %s to %s (%s)\n", humanize.Comma(h.NumSeries()),
			formatTime(h.MinTime()), formatTime(h.MaxTime()), formatSpan(h.MinTime(), h.MaxTime()))
	}
	fmt.Fprintf(out, "WAL:  %s\n", walSummary(filepath.Join(dir, "wal")))
	if err := out.Flush(); err != nil {
		return reportError(stderr, "ls", err)
	}
	return exitOK
}

// shipperFile is where a block shipper (package ship, or a Thanos
// sidecar) lists the blocks of the data directory it has uploaded, as
// {"version":1,"uploaded":["<ULID>",...]}.
const shipperFile = "thanos.shipper.json"

// readShipped returns the ULIDs that dir's shipper file lists; ok is false
// when dir has no such file. A file that cannot be read or decoded gives ok
// true and the error, so the listing marks shipping as unknown.
func readShipped(dir string) (ulids map[string]bool, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, shipperFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	var m struct {
		Version  int      `json:"version"`
		Uploaded []string `json:"uploaded"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, true, fmt.Errorf("%s: %w", shipperFile, err)
	}
	if m.Version != 1 {
		return nil, true, fmt.Errorf("%s: version %d, want 1", shipperFile, m.Version)
	}
	ulids = make(map[string]bool, len(m.Uploaded))
	for _, u := range m.Uploaded {
		ulids[u] = true
	}
	return ulids, true, nil
}

// walSummary describes the segments and the checkpoint of the WAL in dir.
func walSummary(dir string) string {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "none"
	}
	if err != nil {
		return err.Error()
	}
	var (
		n           int
		first, last = -1, -1
		size        int64
	)
	for _, e := range ents {
		k, err := strconv.Atoi(e.Name())
		if err != nil || e.IsDir() || k < 0 {
			continue
		}
		if first < 0 || k < first {
			first = k
		}
		last = max(last, k)
		n++
		if fi, err := e.Info(); err == nil {
			size += fi.Size()
		}
	}
	s := "no segments"
	if n > 0 {
		s = fmt.Sprintf("%s (%08d to %08d, %s)", plural(n, "segment"), first, last, humanize.IBytes(uint64(size)))
	}
	// A format read past the public API, through package check: see "the
	// exception" in main.go.
	cp, err := check.LastCheckpoint(vfs.OS(), dir)
	switch {
	case err != nil:
		s += ", checkpoint: " + err.Error()
	case cp == "":
		s += ", no checkpoint"
	default:
		s += ", " + filepath.Base(cp) + " (" + humanize.IBytes(uint64(dirSize(cp))) + ")"
	}
	return s
}
