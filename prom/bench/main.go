// Command bench runs the same workload against isotsdb and Prometheus's
// TSDB in one process, alternating between them, and prints a table of
// medians and ratios isotsdb/Prometheus.
//
// Usage (from prom/):
//
//	go run ./bench [-runs 5] [-rounds 240] ...
//
// The workload: the 20kseries corpus with job and instance labels, targets
// of 500 series, one commit per target per 15 s scrape, 2 writer
// goroutines; phases ingest, read, read-while-write and head compaction;
// then an isolation stress workload (1,024 appenders committing 1–10
// samples each) and query start with 10,000 open appenders; then 2,000
// native histogram series (schema 3, about 20 buckets) spread over the
// same targets: ingest, read, compaction and block bytes on a store of
// histograms alone, and the histograms mixed into the float scrape; then
// the late phase: the float scrape with 10% of the samples (-late-frac)
// appended 1–10 minutes late, both stores with a 30 minute out-of-order
// window: ingest, reads over the full range, a check that every sample not
// rejected reads back, and the rejections counted. Every store runs with
// isolation on and off; the cost of isolation, and of the out-of-order
// window on in-order samples, is also measured paired (isocost.go).
//
// Then, with isolation on only (phases_blocks.go, phases_scale.go,
// phases_promql.go):
//
//   - blocks6h: the float scrape over 6 h of data (1,440 rounds) in 2 h
//     blocks that both stores cut as they go (cutting.go: each store
//     compacts its head in the background when a commit leaves it
//     spanning more than 1.5 block ranges; the round that does so is
//     known, so the benchmark takes the live heap before it and samples
//     the heap every 5 ms until the compaction is done; compact() is also
//     called every 30 min of data). Ingest CPU per sample (compactions
//     included), the compactions' peak heap over the live heap before,
//     heap per series at the end, reads over the whole range and over the
//     newest hour, bytes per sample in the blocks.
//   - restart: after blocks6h, a copy of the open store's directory (what
//     kill -9 leaves: both stores have written every commit's WAL records
//     to the file when Commit returns), Close, then Open of the same
//     directory and of the copy, each timed alone, with the live heap
//     after it and a count of the samples.
//   - scale: -scale-series series (default 1,000,000) made by replicating
//     the corpus with distinct instances, -scale-rounds rounds (default
//     480, 2 h, in 1 h blocks): ingest CPU, heap and RSS growth per series
//     (freed memory returned to the OS and the peak RSS reset before each
//     store), a head compaction's peak heap, reads of the query set
//     rebuilt for that corpus. It stops early, and says where, if the
//     machine runs short of memory or a store fails.
//   - promql: Prometheus's PromQL engine over the blocks6h data of both
//     stores (isotsdb through prom/storage): instant counts and range
//     queries over the newest 1 h and 6 h, results compared between the
//     stores (a difference fails the run), then median latencies, their
//     ratios and the geometric mean.
//
// Not in the default set, run only when named in -phases, the late
// variants of blocks6h, restart and scale (phases_blocks_late.go, issue
// 15): blocks6h-late, restart-late and scale-late, each its phase with the
// late phase's schedule (-late-frac of the samples 1–10 minutes late) on
// stores with a 30 minute out-of-order window, so that late samples meet
// block cutting, the WBL, replay and overlapping blocks. Each store must
// read back exactly the samples it took (checked sample by sample, after
// the ingest and after each Open), and both stores' reads must return as
// many samples; the late samples rejected and, after kill -9, the samples
// lost are rows with a target of 0.
//
// -phases selects phases (scrape,hist,late,blocks6h,restart,scale,promql,
// and the late variants blocks6h-late,restart-late,scale-late; default
// all, which is the first seven, and may be combined with others:
// -phases all,blocks6h-late,restart-late,scale-late); restart and promql
// run, and report, the blocks6h ingest they work on, restart-late that of
// blocks6h-late.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"
)

func main() {
	var p params
	runs := flag.Int("runs", 5, "runs per configuration (alternating)")
	flag.StringVar(&p.corpus, "corpus", "../testdata/20kseries.json", "label sets, one JSON object per line")
	flag.IntVar(&p.series, "series", 0, "series to use from the corpus (0 = all)")
	flag.IntVar(&p.rounds, "rounds", 240, "scrape rounds of the ingest phase")
	flag.IntVar(&p.rwwRounds, "rww-rounds", 120, "scrape rounds written during read-while-write")
	flag.IntVar(&p.compactRounds, "compact-rounds", 20, "scrape rounds written before the head compaction")
	flag.IntVar(&p.readReps, "read-reps", 10, "rounds of the read phase (each runs a query all-series/matched-series times, at most 50)")
	flag.IntVar(&p.appenders, "appenders", 1024, "stress: concurrent appenders")
	flag.IntVar(&p.commits, "commits", 300, "stress: commits per appender")
	flag.IntVar(&p.qsBatches, "qs-batches", 100, "query start: batches (the median is over batches)")
	flag.IntVar(&p.qsPerBatch, "qs-per-batch", 10, "query start: queriers per batch")
	flag.IntVar(&p.histSeries, "hist-series", 2000, "native histogram series of the histogram phases (0 = skip them)")
	flag.Float64Var(&p.lateFrac, "late-frac", 0.1, "late phase and late variants: share of samples appended 1–10 minutes late, out-of-order window 30 min (0 = skip the late phase)")
	phases := flag.String("phases", "all", "comma-separated phases to run: all (= "+strings.Join(phaseNames, ",")+
		") and the late variants, run only when named: "+strings.Join(latePhaseNames, ",")+
		" (restart and promql run the 6 h ingest of blocks6h, and report it; restart-late that of blocks6h-late)")
	flag.IntVar(&p.blocksRounds, "blocks-rounds", 1440, "blocks6h: scrape rounds (1,440 = 6 h), in 2 h blocks")
	flag.IntVar(&p.blocksReadReps, "blocks-read-reps", 3, "blocks6h: rounds of each read phase (whole range, newest hour)")
	flag.IntVar(&p.scaleSeries, "scale-series", 1_000_000, "scale: series (the corpus replicated with distinct instances)")
	flag.IntVar(&p.scaleRounds, "scale-rounds", 480, "scale: scrape rounds (480 = 2 h, in 1 h blocks)")
	flag.IntVar(&p.scaleReadReps, "scale-read-reps", 1, "scale: rounds of the read phase")
	flag.IntVar(&p.promqlReps, "promql-reps", 5, "promql: executions of each query per store at least (the median is reported)")
	flag.DurationVar(&p.promqlBudget, "promql-budget", 3*time.Second, "promql: a query is run again (up to 41 times per store) until both stores together spent this long on it")
	flag.StringVar(&p.tmp, "tmp", "", "directory for the stores' data (default: the system's temp dir)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.StringVar(&p.heapProfile, "heapprofile", "", "write a heap profile after each ingest phase to this file (use with -only)")
	only := flag.String("only", "", "run only this configuration, e.g. isotsdb/isolation=on, or \"paired\" for the paired isolation cost (for profiling; no table)")
	flag.Parse()
	var err error
	if p.phases, err = parsePhases(*phases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if p.lateFrac < 0 || p.lateFrac > 1 {
		fmt.Fprintln(os.Stderr, "bench: -late-frac must be between 0 and 1")
		os.Exit(2)
	}
	if p.lateFrac == 0 && p.phases.late() {
		fmt.Fprintln(os.Stderr, "bench: -late-frac 0 leaves the late variants "+strings.Join(latePhaseNames, ",")+" nothing to measure")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	p.only = *only
	if p.heapProfile != "" {
		runtime.MemProfileRate = 64 // fine-grained: the profile is for accounting bytes per series
	}

	c, err := loadCorpus(p.corpus, p.series)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res, err := runAll(c, p, *runs, func(s string) { fmt.Fprintln(os.Stderr, s) })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if p.only != "" {
		return
	}
	header(os.Stdout, c, p, *runs, prometheusVersion())
	if !report(os.Stdout, res, queries(c)) {
		fmt.Println("some targets were missed")
		pprof.StopCPUProfile()
		os.Exit(3)
	}
	fmt.Println("every target holds")
}

// prometheusVersion is the version of Prometheus's module in the build.
func prometheusVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/prometheus/prometheus" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

// writeHeapProfile writes the live heap to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
