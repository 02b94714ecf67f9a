package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	tsdb "github.com/isotsdb/tsdb"
)

// Exit codes of tsdb.
const (
	exitOK        = 0
	exitError     = 1 // the command failed
	exitUsage     = 2 // bad command line
	exitIsolation = 3 // the read-while-write check saw a torn or backwards read
)

// benchWriteConfig is the command line of "tsdb bench write".
type benchWriteConfig struct {
	out            string        // data dir; "" means a temporary one
	seriesFile     string        // label sets, one JSON object per line
	series         int           // number of series
	rounds         int           // scrapes of every target
	writers        int           // goroutines committing scrapes
	readers        int           // goroutines querying in the read check
	isolation      bool          // Options.IsolationDisabled = !isolation
	walCompression bool          // Options.WALCompression
	checkDuration  time.Duration // length of the read-while-write check
	lateFrac       float64       // fraction of samples that arrive late; 0: none
	oooWindow      time.Duration // --ooo-window, if oooWindowSet
	oooWindowSet   bool          // --ooo-window was given
	seed           uint64        // seeds the value generators
	queries        []string      // extra selectors to time
	cpuProfile     string        // CPU profile of the ingestion, if set
	memProfile     string        // heap profile after the ingestion, if set
}

// benchResult is everything "tsdb bench write" measured.
type benchResult struct {
	cfg     benchWriteConfig
	targets int

	samples  int64
	wall     time.Duration
	cpu      time.Duration // user+sys of the process during ingestion
	cpuKnown bool          // false where getrusage is unavailable

	compaction    time.Duration // of the compaction still due after ingestion
	peakHeap      uint64        // highest heap in use seen during ingestion
	heapAfterGC   uint64        // heap in use after ingestion and a GC
	heapBaseline  uint64        // heap in use after a GC before the series were loaded
	headSeries    int64
	disk          diskUsage
	queryResults  []queryResult
	check         readCheckResult
	sampleTimeMin int64
	sampleTimeMax int64

	// Late mode: late samples written and rejected during ingestion,
	// and why the first rejected one was.
	lateWritten, lateRejected int64
	firstLateRejection        error
}

// runBenchWrite runs the benchmark and prints its report to stdout;
// progress, warnings and errors go to stderr. It returns the exit code.
func runBenchWrite(ctx context.Context, cfg benchWriteConfig, stdout, stderr io.Writer) int {
	res, err := benchWrite(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tsdb bench write: %v\n", err)
		return exitError
	}
	if err := writeReport(stdout, res); err != nil {
		fmt.Fprintf(stderr, "tsdb bench write: write report: %v\n", err)
		return exitError
	}
	if msg := res.check.failure(cfg.isolation); msg != "" {
		fmt.Fprintf(stderr, "tsdb bench write: %s\n", msg)
		return exitIsolation
	}
	return exitOK
}

// benchWrite runs the whole benchmark: ingestion, measurements, queries and
// the read-while-write check.
func benchWrite(ctx context.Context, cfg benchWriteConfig, stderr io.Writer) (res *benchResult, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	extra, err := parseQueries(cfg.queries)
	if err != nil {
		return nil, err
	}
	res = &benchResult{cfg: cfg}
	res.heapBaseline = heapInUseAfterGC()

	sets, err := loadLabelSets(cfg.seriesFile, cfg.series)
	if err != nil {
		return nil, err
	}
	targets := newTargets(sets, cfg.seed)
	res.targets = len(targets)
	if cfg.lateFrac > 0 {
		for _, t := range targets {
			t.enableLate(cfg.lateFrac, cfg.seed)
		}
	}

	dir, cleanup, err := dataDir(cfg.out)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()

	opts := tsdb.DefaultOptions()
	opts.IsolationDisabled = !cfg.isolation
	opts.WALCompression = cfg.walCompression
	opts.OutOfOrderTimeWindow = cfg.outOfOrderWindow()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := tsdb.Open(dir, logger, nil, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close DB: %w", cerr))
		}
	}()

	// Sample time ends about now, so the data looks like a recent past.
	start := time.Now().UnixMilli()/scrapeInterval*scrapeInterval - int64(cfg.rounds)*scrapeInterval
	res.sampleTimeMin = start
	res.sampleTimeMax = start + int64(cfg.rounds)*scrapeInterval - 1 // offsets are < scrapeInterval

	if err := ingest(ctx, db, targets, start, cfg, res, stderr); err != nil {
		return nil, err
	}
	if res.firstLateRejection != nil {
		fmt.Fprintf(stderr, "tsdb bench write: warning: %d late samples rejected, the first: %v\n",
			res.lateRejected, res.firstLateRejection)
	}
	res.headSeries = db.Head().NumSeries()
	// Let compaction catch up, so that the disk figures do not depend on
	// how far the background compaction got.
	st := newStatusLine(stderr)
	defer st.clear()
	st.show("compacting")
	t0 := time.Now()
	if err := db.Compact(ctx); err != nil {
		return nil, err
	}
	res.compaction = time.Since(t0)
	if res.disk, err = measureDisk(dir); err != nil {
		return nil, err
	}
	res.heapAfterGC = heapInUseAfterGC()
	if cfg.memProfile != "" {
		if err := writeHeapProfile(cfg.memProfile); err != nil {
			return nil, err
		}
	}

	st.show("running queries")
	queries, err := defaultQueries(targets)
	if err != nil {
		return nil, err
	}
	if res.queryResults, err = runQueries(ctx, db, append(queries, extra...), res.sampleTimeMin, res.sampleTimeMax); err != nil {
		return nil, err
	}

	st.show(fmt.Sprintf("read-while-write check (%v)", cfg.checkDuration))
	checkStart := start + int64(cfg.rounds)*scrapeInterval + scrapeInterval
	if res.check, err = readCheck(ctx, db, targets, checkStart, cfg); err != nil {
		return nil, err
	}
	return res, nil
}

func (cfg *benchWriteConfig) validate() error {
	switch {
	case cfg.series < 1:
		return fmt.Errorf("--series must be at least 1, not %d", cfg.series)
	case cfg.rounds < 1:
		return fmt.Errorf("--rounds must be at least 1, not %d", cfg.rounds)
	case cfg.writers < 1:
		return fmt.Errorf("--writers must be at least 1, not %d", cfg.writers)
	case cfg.readers < 1:
		return fmt.Errorf("--readers must be at least 1, not %d", cfg.readers)
	case cfg.checkDuration <= 0:
		return fmt.Errorf("--check-duration must be positive, not %v", cfg.checkDuration)
	case !(cfg.lateFrac >= 0 && cfg.lateFrac < 1):
		return fmt.Errorf("--late-frac must be at least 0 and below 1, not %v", cfg.lateFrac)
	case cfg.oooWindow < 0:
		return fmt.Errorf("--ooo-window must not be negative, not %v", cfg.oooWindow)
	}
	return nil
}

// outOfOrderWindow is the run's Options.OutOfOrderTimeWindow: --ooo-window
// if given, else defaultOOOWindow in late mode and 0 (off) otherwise.
func (cfg *benchWriteConfig) outOfOrderWindow() time.Duration {
	switch {
	case cfg.oooWindowSet:
		return cfg.oooWindow
	case cfg.lateFrac > 0:
		return defaultOOOWindow
	}
	return 0
}

// dataDir returns the directory to run in and a function that removes it
// if it was created here. A given directory must be empty or absent: a
// second run into the same directory would append older samples.
func dataDir(out string) (string, func() error, error) {
	if out == "" {
		dir, err := os.MkdirTemp("", "tsdb-bench-")
		if err != nil {
			return "", nil, fmt.Errorf("create temporary data dir: %w", err)
		}
		return dir, func() error { return os.RemoveAll(dir) }, nil
	}
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", nil, fmt.Errorf("read --out dir: %w", err)
	}
	if len(entries) > 0 {
		return "", nil, fmt.Errorf("--out dir %s is not empty", out)
	}
	return out, func() error { return nil }, nil
}

// ingest scrapes every target cfg.rounds times, one commit per target per
// round, with cfg.writers goroutines taking targets from a shared counter.
// Rounds are separated by a barrier, so a target's scrapes are committed in
// time order and at most one goroutine touches a target at a time.
// In late mode (cfg.lateFrac > 0) each commit holds the scrape's samples
// but the held ones, and the late samples due (workload_late.go); one more
// commit per target after the last round appends the samples still held.
func ingest(ctx context.Context, db *tsdb.DB, targets []*target, start int64, cfg benchWriteConfig, res *benchResult, stderr io.Writer) (err error) {
	total := int64(0)
	for _, t := range targets {
		total += int64(len(t.series))
	}
	total *= int64(cfg.rounds)

	var done atomic.Int64 // samples committed
	mon := startMonitor(&done, total, stderr)
	defer func() {
		res.peakHeap = mon.stop()
	}()

	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return fmt.Errorf("create CPU profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Join(fmt.Errorf("start CPU profile: %w", err), f.Close())
		}
		defer func() {
			pprof.StopCPUProfile()
			if cerr := f.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("write CPU profile: %w", cerr))
			}
		}()
	}

	// Late mode: late samples counted by every writer.
	var lateWritten, lateRejected atomic.Int64
	var firstRejection atomic.Pointer[error]
	countLate := func(c lateCounts) {
		lateWritten.Add(int64(c.written))
		lateRejected.Add(int64(c.rejected))
		if c.firstRejection != nil {
			firstRejection.CompareAndSwap(nil, &c.firstRejection)
		}
	}
	defer func() {
		res.lateWritten, res.lateRejected = lateWritten.Load(), lateRejected.Load()
		if p := firstRejection.Load(); p != nil {
			res.firstLateRejection = *p
		}
	}()

	cpu0, cpuKnown := processCPUTime()
	t0 := time.Now()
	for round := 0; round < cfg.rounds; round++ {
		base := start + int64(round)*scrapeInterval
		err := forEachTarget(ctx, targets, cfg.writers, func(ctx context.Context, t *target) error {
			if t.late == nil {
				if err := t.scrape(ctx, db, base+t.offset); err != nil {
					return err
				}
				done.Add(int64(len(t.series)))
				return nil
			}
			n, c, err := t.scrapeLate(ctx, db, base+t.offset)
			countLate(c)
			done.Add(int64(n))
			return err
		})
		if err != nil {
			return fmt.Errorf("ingest round %d: %w", round, err)
		}
	}
	if cfg.lateFrac > 0 {
		// The samples still held arrive after the last scrape.
		err := forEachTarget(ctx, targets, cfg.writers, func(ctx context.Context, t *target) error {
			c, err := t.flushLate(ctx, db)
			countLate(c)
			done.Add(int64(c.written))
			return err
		})
		if err != nil {
			return fmt.Errorf("ingest the last late samples: %w", err)
		}
	}
	res.wall = time.Since(t0)
	cpu1, _ := processCPUTime()
	res.cpu, res.cpuKnown = cpu1-cpu0, cpuKnown
	res.samples = done.Load()
	return nil
}

// forEachTarget calls fn for every target, from up to writers goroutines
// that take targets from a shared counter; fn is never called twice at once
// for one target. It returns the first error, after the calls under way
// have returned.
func forEachTarget(ctx context.Context, targets []*target, writers int, fn func(context.Context, *target) error) error {
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range min(writers, len(targets)) {
		g.Go(func() error {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(targets) {
					return nil
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				if err := fn(gctx, targets[i]); err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return errors.Join(fmt.Errorf("write heap profile: %w", err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write heap profile: %w", err)
	}
	return nil
}
