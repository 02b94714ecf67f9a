// Package cli is isotsdb's command-line tool, tsdb: cmd/tsdb builds it
// from the root module alone, and prom/cmd/tsdb builds it with the
// commands that need the nested modules' code (serve, on Prometheus's, and
// upload, on the shipper's) added through Command.
//
//	tsdb bench write [flags]
//
// runs the project's write benchmark: it ingests scrapes of real-world
// label sets into a fresh database, reports throughput, CPU, memory, disk
// use and query latencies, and checks that reads running during writes see
// whole commits only. Its data set, the 20,000 label sets of the
// repository's testdata/20kseries.json, is built into the binary
// (gzipped, see corpus.go), so it runs from any directory; --series-file
// reads another file instead.
//
// The inspection commands look at a data directory without changing it
// (no lock, nothing written), even while another process has it open:
//
//	tsdb ls DIR                  blocks, head and WAL
//	tsdb analyze DIR [BLOCK]     cardinality of a block or of the head
//	tsdb dump DIR [--match SEL]  samples as "{labels} value timestamp"
//	                             (histograms in promtool's notation, stale
//	                             markers as "stale"; --stale-as-nan: "NaN")
//	tsdb check DIR               offline consistency check; exit code 1 on damage
//
// A directory that is not a database makes them fail with exit code 1.
//
// # Public API, and the exception
//
// bench write and dump use only isotsdb's public API (package tsdb and its
// public packages labels, chunks, value and vfs), and ls and analyze use it for
// everything else they show (tsdb.OpenReadOnly, tsdb.BlockMeta). The
// inspection commands are offline tools that, like promtool, also read the
// on-disk formats where the public API does not reach, and these reads are
// the documented exception:
//
//   - check runs package check, which reads every format itself;
//   - analyze of a block reads the block's index and chunk headers with
//     check.BlockChunks, to get every series' labels, chunk time ranges
//     and chunk encodings and sample counts (floats or native histograms)
//     without decoding samples or opening the database;
//   - ls finds the WAL's newest checkpoint with check.LastCheckpoint.
//
// This package imports no internal package: package check is its only way
// to the formats.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/alecthomas/kingpin/v2"
)

// Command is a command that a build of the tool adds to the built-in
// ones.
type Command interface {
	// Register declares the command, its arguments and flags on app and
	// returns it.
	Register(app *kingpin.Application) *kingpin.CmdClause
	// Run executes the command once the command line parsed, with the
	// values Register bound; it returns the exit code.
	Run(ctx context.Context, stdout, stderr io.Writer) int
}

// Run executes the command line args (without the program name), writing
// results to stdout and progress, usage and errors to stderr, and returns
// the exit code. extra are commands beyond the built-in ones. It never
// exits the process itself, so tests can call it.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, extra ...Command) int {
	app := kingpin.New("tsdb", "isotsdb's command-line tool.")
	app.UsageWriter(stdout).ErrorWriter(stderr)
	// kingpin "terminates" after --help; remember the code instead of
	// exiting, and return it once Parse returns.
	terminated, termCode := false, exitOK
	app.Terminate(func(code int) {
		if !terminated {
			terminated, termCode = true, code
		}
	})

	bench := app.Command("bench", "Run benchmarks.")
	benchWriteCmd := bench.Command("write", "Ingest scrapes of real-world series, then report throughput, "+
		"CPU, memory, disk use, query latency and a read-while-write isolation check.")
	var cfg benchWriteConfig
	benchWriteCmd.Flag("out", "Data directory (must be empty or absent; kept afterwards). Default: a temporary directory, removed at the end.").
		StringVar(&cfg.out)
	benchWriteCmd.Flag("series-file", "Label sets to ingest, one JSON object per line. "+
		"Default: the built-in copy of the repository's testdata/20kseries.json.").
		StringVar(&cfg.seriesFile)
	benchWriteCmd.Flag("series", "Number of series, in targets of 500 with their own instance label (the file is reused if it is shorter).").
		Default("20000").IntVar(&cfg.series)
	benchWriteCmd.Flag("rounds", "Scrapes of every target, 15 s of sample time apart.").
		Default("1440").IntVar(&cfg.rounds)
	benchWriteCmd.Flag("writers", "Goroutines committing scrapes.").
		Default("2").IntVar(&cfg.writers)
	benchWriteCmd.Flag("readers", "Goroutines querying during the read-while-write check.").
		Default("2").IntVar(&cfg.readers)
	benchWriteCmd.Flag("isolation", "Write isolation; --isolation=false measures without it.").
		Default("true").PlaceHolder("true|false").SetValue(boolValue{&cfg.isolation})
	benchWriteCmd.Flag("wal-compression", "Compress WAL records with snappy.").
		Default("false").PlaceHolder("true|false").SetValue(boolValue{&cfg.walCompression})
	benchWriteCmd.Flag("check-duration", "Length of the read-while-write check.").
		Default("3s").DurationVar(&cfg.checkDuration)
	benchWriteCmd.Flag("late-frac", "Fraction of every scrape's samples that arrive late: appended 1 to 10 scrapes later, "+
		"in a later scrape's commit (also in the read-while-write check). 0: none.").
		Default("0").Float64Var(&cfg.lateFrac)
	benchWriteCmd.Flag("ooo-window", "Options.OutOfOrderTimeWindow: how far behind the newest sample late samples are accepted. "+
		"Default: 30m with --late-frac, else 0 (off).").
		PlaceHolder("30m").IsSetByUser(&cfg.oooWindowSet).DurationVar(&cfg.oooWindow)
	benchWriteCmd.Flag("seed", "Seed of the generated sample values (and of which samples arrive late).").
		Default("1").Uint64Var(&cfg.seed)
	benchWriteCmd.Flag("query", "Extra series selector to time, e.g. 'up{job=\"api\"}' (repeatable).").
		StringsVar(&cfg.queries)
	benchWriteCmd.Flag("cpuprofile", "Write a CPU profile of the ingestion to this file.").
		StringVar(&cfg.cpuProfile)
	benchWriteCmd.Flag("memprofile", "Write a heap profile taken after the ingestion to this file.").
		StringVar(&cfg.memProfile)

	lsCmd := app.Command("ls", "List the blocks of a data directory and summarize its head and WAL (read-only).")
	lsDir := lsCmd.Arg("dir", "Data directory.").Required().String()

	analyzeCmd := app.Command("analyze", "Report the cardinality of a block or of the head: label names by values, "+
		"metrics by series, label pairs by series, churn (read-only).")
	var acfg analyzeConfig
	analyzeCmd.Arg("dir", "Data directory.").Required().StringVar(&acfg.dir)
	analyzeCmd.Arg("block", `Block ULID, or "head". Default: the newest block, or the head if there is no block.`).StringVar(&acfg.block)
	analyzeCmd.Flag("limit", "Entries per list.").Default("20").IntVar(&acfg.limit)

	dumpCmd := app.Command("dump", "Print samples as '{labels} value timestamp' lines, as promtool tsdb dump does "+
		"(native histograms in Prometheus's notation; stale markers as 'stale'; read-only).")
	var dcfg dumpConfig
	dumpCmd.Arg("dir", "Data directory.").Required().StringVar(&dcfg.dir)
	dumpCmd.Flag("match", "Series selector, e.g. 'up{job=\"api\"}' (repeatable: series matching any). Default: every series.").
		StringsVar(&dcfg.matches)
	dumpCmd.Flag("min-time", "Start of the range (inclusive): milliseconds since the epoch or RFC 3339.").
		Default(minTimeFlag).SetValue(timeValue{&dcfg.minTime})
	dumpCmd.Flag("max-time", "End of the range (inclusive): milliseconds since the epoch or RFC 3339.").
		Default(maxTimeFlag).SetValue(timeValue{&dcfg.maxTime})
	dumpCmd.Flag("stale-as-nan", "Print stale markers as promtool does ('NaN', '{count:0, sum:NaN}'), "+
		"indistinguishable from a NaN value.").BoolVar(&dcfg.staleAsNaN)

	checkCmd := app.Command("check", "Check every block and the WAL offline for damage and inconsistencies (read-only); "+
		"exit code 1 on any error.")
	checkDir := checkCmd.Arg("dir", "Data directory.").Required().String()

	extraCmds := map[string]Command{}
	for _, c := range extra {
		extraCmds[c.Register(app).FullCommand()] = c
	}

	var helpAsked bool
	app.HelpFlag.IsSetByUser(&helpAsked)
	cmd, err := app.Parse(args)
	if helpAsked && terminated { // --help without a command: Parse also reports the missing command
		return termCode
	}
	if errors.Is(err, kingpin.ErrCommandNotSpecified) {
		return exitUsage // kingpin printed the usage
	}
	if terminated {
		return termCode
	}
	if err != nil {
		fmt.Fprintf(stderr, "tsdb: %v (try --help)\n", err)
		return exitUsage
	}
	switch cmd {
	case benchWriteCmd.FullCommand():
		return runBenchWrite(ctx, cfg, stdout, stderr)
	case lsCmd.FullCommand():
		return runLs(*lsDir, stdout, stderr)
	case analyzeCmd.FullCommand():
		return runAnalyze(ctx, acfg, stdout, stderr)
	case dumpCmd.FullCommand():
		return runDump(ctx, dcfg, stdout, stderr)
	case checkCmd.FullCommand():
		return runCheck(*checkDir, stdout, stderr)
	}
	if c, ok := extraCmds[cmd]; ok {
		return c.Run(ctx, stdout, stderr)
	}
	fmt.Fprintf(stderr, "tsdb: unknown command %q (try --help)\n", cmd)
	return exitUsage
}

// run is Run with the built-in commands only.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Run(ctx, args, stdout, stderr)
}
