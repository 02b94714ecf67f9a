package check

import (
	"errors"
	"fmt"
	"strings"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

var (
	// ErrNotTSDB is returned by Dir for a directory that cannot be read or
	// holds neither a wal directory nor a block.
	ErrNotTSDB = errors.New("check: not a TSDB data directory")
	// ErrInconsistent is wrapped by Report.Err when the check found at
	// least one problem of severity Error.
	ErrInconsistent = errors.New("check: data directory is damaged or inconsistent")
)

// Severity ranks a Problem.
type Severity int

const (
	// Warning: worth knowing, but no data is wrong or lost beyond what the
	// database repairs by itself (a torn WAL tail, a leftover temporary
	// directory, overlapping blocks, a chunk no series refers to).
	Warning Severity = 1
	// Error: data is damaged or the files contradict each other.
	Error Severity = 2
)

// String returns "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Problem is one finding of a check.
type Problem struct {
	Severity Severity
	// Path is the file or directory the problem is in.
	Path string
	// Offset is the byte offset in Path where the problem is, or -1 when it
	// has no single position.
	Offset int64
	// Series is the label set of the series concerned, in text form, or ""
	// if the problem is not about one series.
	Series string
	// Msg says what is wrong.
	Msg string
	// Err is the error that revealed the problem, if any; errors.Is and
	// errors.As see through it (e.g. to
	// errors.Is(err, tsdb.ErrCorrupt) and a *tsdb.CorruptionError).
	Err error
}

// String formats the problem on one line:
//
//	error: dir/01H.../index at offset 4096, series {a="1"}: msg: err
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Severity.String())
	b.WriteString(": ")
	b.WriteString(p.Path)
	if p.Offset >= 0 {
		fmt.Fprintf(&b, " at offset %d", p.Offset)
	}
	if p.Series != "" {
		b.WriteString(", series ")
		b.WriteString(p.Series)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	if p.Err != nil {
		b.WriteString(": ")
		b.WriteString(p.Err.Error())
	}
	return b.String()
}

// BlockSummary is what the check found in one block.
type BlockSummary struct {
	// Dir is the block's directory.
	Dir string
	// Series, Chunks and Samples count what the index and chunk files hold
	// (as far as they could be read); Tombstones counts deletion intervals.
	Series, Chunks, Samples, Tombstones uint64
	// HistogramChunks and HistogramSamples count the chunks of either
	// histogram encoding (integer and float) and their samples; they are
	// included in Chunks and Samples.
	HistogramChunks, HistogramSamples uint64
	// MinTime and MaxTime are the range from meta.json (0 if unreadable).
	MinTime, MaxTime int64
}

// WALSummary is what the check found in the WAL.
type WALSummary struct {
	// Dir is the WAL directory; "" if the data directory has none.
	Dir string
	// Checkpoint is the path of the last checkpoint, "" if none.
	Checkpoint string
	// FirstSegment and LastSegment are the indexes of the segments read
	// (those after the checkpoint), -1 if none.
	FirstSegment, LastSegment int
	// Records counts the records read, checkpoint included.
	Records int
	// Series and Samples count the series definitions and samples read.
	Series, Samples int
}

// HeadChunksSummary is what a check read of the head chunk files
// (chunks_head/, memory-mapped closed head chunks).
type HeadChunksSummary struct {
	// Dir is the directory; "" if the data directory has none.
	Dir string
	// Files is the number of files read up to any damage, Bytes their
	// valid length.
	Files int
	Bytes int64
	// Chunks counts the in-order chunks, OutOfOrderChunks those flagged
	// out of order (written by Prometheus; isotsdb skips them).
	Chunks, OutOfOrderChunks int
}

// Report is the outcome of a check: the problems found, in the order found,
// and a summary of what was read.
type Report struct {
	// Dir is the data directory checked.
	Dir        string
	Problems   []Problem
	Blocks     []BlockSummary
	WAL        WALSummary
	HeadChunks HeadChunksSummary
}

// Count returns the number of problems of severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, p := range r.Problems {
		if p.Severity == s {
			n++
		}
	}
	return n
}

// Err returns nil if the report has no problem of severity Error, and
// otherwise an error wrapping ErrInconsistent that lists up to five of
// them, for tests that want the data directory to be sound.
func (r *Report) Err() error {
	var errs []string
	n := 0
	for _, p := range r.Problems {
		if p.Severity != Error {
			continue
		}
		if n++; n <= 5 {
			errs = append(errs, p.String())
		}
	}
	if n == 0 {
		return nil
	}
	more := ""
	if n > len(errs) {
		more = fmt.Sprintf("\n(and %d more)", n-len(errs))
	}
	return fmt.Errorf("%w: %s: %d errors:\n%s%s", ErrInconsistent, r.Dir, n, strings.Join(errs, "\n"), more)
}

// maxProblemsPerPath bounds the problems listed for one file: a damaged
// file can make every series or record after the damage look wrong, and
// the first few findings say all there is to say. The rest are counted.
const maxProblemsPerPath = 20

// reporter collects problems into a Report, listing at most
// maxProblemsPerPath per path and counting the others.
type reporter struct {
	rep     *Report
	perPath map[string]int
	dropped map[string]*droppedProblems
	order   []string // paths with dropped problems, in first-drop order
}

type droppedProblems struct {
	n     int
	worst Severity
}

func newReporter(rep *Report) *reporter {
	return &reporter{rep: rep, perPath: map[string]int{}, dropped: map[string]*droppedProblems{}}
}

func (rp *reporter) add(p Problem) {
	if rp.perPath[p.Path]++; rp.perPath[p.Path] <= maxProblemsPerPath {
		rp.rep.Problems = append(rp.rep.Problems, p)
		return
	}
	d := rp.dropped[p.Path]
	if d == nil {
		d = &droppedProblems{}
		rp.dropped[p.Path] = d
		rp.order = append(rp.order, p.Path)
	}
	d.n++
	d.worst = max(d.worst, p.Severity)
}

// errorf adds a problem of severity Error.
func (rp *reporter) errorf(path string, off int64, series string, err error, format string, args ...any) {
	rp.add(Problem{Severity: Error, Path: path, Offset: off, Series: series, Msg: fmt.Sprintf(format, args...), Err: err})
}

// warnf adds a problem of severity Warning.
func (rp *reporter) warnf(path string, off int64, series string, err error, format string, args ...any) {
	rp.add(Problem{Severity: Warning, Path: path, Offset: off, Series: series, Msg: fmt.Sprintf(format, args...), Err: err})
}

// fromErr adds a problem for err, taking the file and offset from the
// corruption error types of the format packages when err holds one, and
// path and off otherwise.
func (rp *reporter) fromErr(sev Severity, path string, off int64, series string, err error, format string, args ...any) {
	path, off = locate(err, path, off)
	rp.add(Problem{Severity: sev, Path: path, Offset: off, Series: series, Msg: fmt.Sprintf(format, args...), Err: err})
}

// finish adds one problem per path whose problems were not all listed.
func (rp *reporter) finish() {
	for _, path := range rp.order {
		d := rp.dropped[path]
		rp.rep.Problems = append(rp.rep.Problems, Problem{Severity: d.worst, Path: path, Offset: -1,
			Msg: fmt.Sprintf("%d more problems in this file not listed", d.n)})
	}
	rp.order = nil
}

// locate returns the file and offset a corruption error names, or path and
// off if err holds none or one that names no file (the bytes of a chunk or
// a record, a stream).
func locate(err error, path string, off int64) (string, int64) {
	if file, o, ok := corrupt.Locate(err); ok && file != "" {
		return file, o
	}
	return path, off
}
