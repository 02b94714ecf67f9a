package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"strings"
	"time"
)

// params are the workload's sizes.
type params struct {
	corpus        string
	series        int     // 0 = the whole corpus
	rounds        int     // ingest rounds
	rwwRounds     int     // rounds written during read-while-write
	compactRounds int     // rounds written before the head compaction
	readReps      int     // rounds of the read phase (see queries for the executions per round)
	appenders     int     // stress appenders
	commits       int     // commits per stress appender
	qsBatches     int     // query-start batches
	qsPerBatch    int     // query starts per batch
	histSeries    int     // native histogram series of the histogram phases (0 = none)
	lateFrac      float64 // share of the late phase's samples that arrive late (0 = skip the late phase and its paired cost)
	tmp           string
	only          string // run only this configuration
	heapProfile   string // write a heap profile after ingest to this file

	phases         phaseSet      // the phases to run
	blocksRounds   int           // blocks6h: rounds of the ingest (1,440: 6 h)
	blocksReadReps int           // blocks6h: rounds of each read phase
	scaleSeries    int           // scale: series
	scaleRounds    int           // scale: rounds
	scaleReadReps  int           // scale: rounds of the read phase
	promqlReps     int           // promql: executions of each query per store
	promqlBudget   time.Duration // promql: more executions of a query until this much time went on it
}

// figures are one configuration's results of one run, by figure name.
type figures map[string]float64

// config is one store with isolation on or off.
type config struct {
	kind      storeKind
	isolation bool
}

func (c config) String() string {
	if c.isolation {
		return c.kind.String() + "/isolation=on"
	}
	return c.kind.String() + "/isolation=off"
}

// queries returns the read phase's query set for corpus c: the most common
// metric name, a metric name of median popularity, one instance, a wide
// regex over metric names and everything.
func queries(c *corpus) []*query {
	counts := map[string]int{}
	for _, kv := range c.series {
		counts[kv[1]]++ // __name__ sorts first
	}
	var top, mid string
	for n, k := range counts {
		if k > counts[top] || (k == counts[top] && n < top) {
			top = n
		}
	}
	// median popularity among names with ≥ 20 series
	best := math.MaxInt
	for n, k := range counts {
		if d := abs(k - 100); k >= 20 && (d < best || (d == best && n < mid)) {
			best, mid = d, n
		}
	}
	if mid == "" {
		mid = top
	}
	qs := []*query{
		{name: "metric (top)", matchers: []matcher{{name: "__name__", value: top}}},
		{name: "metric (~100 series)", matchers: []matcher{{name: "__name__", value: mid}}},
		{name: "instance", matchers: []matcher{{name: "instance", value: instanceName(c.targets() / 2)}}},
		{name: "wide regex", matchers: []matcher{{name: "__name__", value: "k.*|v.*", regex: true}}},
		{name: "everything", matchers: []matcher{{name: "job", value: "bench"}}},
	}
	// Small queries run more often, so that every query's p99 rests on
	// enough executions: the weight is all series / matched series,
	// capped at 50.
	for _, q := range qs {
		q.weight = min(50, max(1, len(c.series)/max(1, c.matching(q))))
	}
	return qs
}

// matching counts the corpus series q selects.
func (c *corpus) matching(q *query) int {
	res := make([]*regexp.Regexp, len(q.matchers))
	for i, m := range q.matchers {
		if m.regex {
			res[i] = regexp.MustCompile("^(?:" + m.value + ")$")
		}
	}
	n := 0
	for _, kv := range c.series {
		ok := true
		for j, m := range q.matchers {
			v := ""
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == m.name {
					v = kv[i+1]
				}
			}
			if res[j] != nil {
				ok = ok && res[j].MatchString(v)
			} else {
				ok = ok && v == m.value
			}
		}
		if ok {
			n++
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// runScrape runs the scrape workload on a fresh store: ingest and, if
// full, the read, query-start, read-while-write and compaction phases.
func runScrape(cfg config, c *corpus, qs []*query, p params, full bool) (figures, error) {
	f := figures{}
	dir, err := os.MkdirTemp(p.tmp, "bench-"+cfg.kind.String()+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	base := liveHeap()
	s, err := openStore(cfg.kind, storeConfig{dir: dir, isolation: cfg.isolation, series: c.series})
	if err != nil {
		return nil, err
	}
	defer s.close()
	refs := make([]uint64, len(c.series))

	m := startMeter()
	n, err := ingest(s, c, refs, 0, p.rounds)
	u := m.stop()
	if err != nil {
		return nil, err
	}
	f["ingest.cpu"] = float64(u.cpu.Nanoseconds()) / float64(n)
	f["ingest.rate"] = float64(n) / u.wall.Seconds()
	f["ingest.allocs"] = float64(u.mallocs) / float64(n)
	f["ingest.heap"] = (float64(liveHeap()) - float64(base)) / float64(len(c.series))
	if p.heapProfile != "" {
		if err := writeHeapProfile(p.heapProfile); err != nil {
			return nil, err
		}
	}
	if !full {
		return f, s.close()
	}

	mint, maxt := baseTime, maxTime(p.rounds, c.targets())
	st, err := readPhase(s, qs, p.readReps, mint, maxt)
	if err != nil {
		return nil, err
	}
	f["read.rate"] = float64(st.samples) / st.wall.Seconds()
	for _, q := range qs {
		f["read.p50."+q.name] = float64(percentile(st.latencies[q.name], 0.5).Nanoseconds())
		f["read.p99."+q.name] = float64(percentile(st.latencies[q.name], 0.99).Nanoseconds())
	}

	d, err := queryStart(s, c, maxt+scrapeEvery, mint, maxt, p.qsBatches, p.qsPerBatch)
	if err != nil {
		return nil, err
	}
	f["qstart"] = float64(d.Nanoseconds())

	to := p.rounds + p.rwwRounds
	n, u, st, err = readWhileWrite(s, c, refs, qs, p.rounds, to, mint)
	if err != nil {
		return nil, err
	}
	f["rww.ingest"] = float64(n) / u.wall.Seconds()
	f["rww.read"] = float64(st.samples) / st.wall.Seconds()
	f["rww.p50"] = float64(percentile(st.all, 0.5).Nanoseconds())
	f["rww.p99"] = float64(percentile(st.all, 0.99).Nanoseconds())
	f["rww.queries"] = float64(len(st.all))

	m = startMeter()
	if _, err := ingest(s, c, refs, to, to+p.compactRounds); err != nil {
		return nil, err
	}
	if err := s.compact(); err != nil {
		return nil, fmt.Errorf("bench: compact: %w", err)
	}
	u = m.stop()
	f["compact.wall"] = u.wall.Seconds()
	f["compact.cpu"] = u.cpu.Seconds()
	bytes, samples, err := diskPerSample(s)
	if err != nil {
		return nil, err
	}
	if samples == 0 {
		return nil, fmt.Errorf("bench: %s wrote no block", cfg)
	}
	f["disk.bytes"] = float64(bytes) / float64(samples)
	f["disk.samples"] = float64(samples)
	return f, s.close()
}

// runStress runs the isolation stress workload on a fresh store.
func runStress(cfg config, c *corpus, p params) (figures, error) {
	dir, err := os.MkdirTemp(p.tmp, "stress-"+cfg.kind.String()+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	need := p.appenders * stressSeries
	if need > len(c.series) {
		return nil, fmt.Errorf("bench: stress needs %d series, the corpus has %d", need, len(c.series))
	}
	s, err := openStore(cfg.kind, storeConfig{dir: dir, isolation: cfg.isolation, series: c.series[:need]})
	if err != nil {
		return nil, err
	}
	defer s.close()
	m := startMeter()
	n, err := stress(s, p.appenders, 0, p.commits)
	u := m.stop()
	if err != nil {
		return nil, err
	}
	return figures{
		"stress.cpu":  float64(u.cpu.Nanoseconds()) / float64(n),
		"stress.wall": float64(u.wall.Nanoseconds()) / float64(n),
	}, s.close()
}

// runAll runs every configuration p.runs times, alternating the order of
// the stores, and returns all figures by configuration. The phases are
// those of p.phases (nil: all, the late variants left out);
// configurations with isolation off run only the scrape and histogram
// phases, and are skipped without them. After each run, the late
// variants' read counts of the two stores are compared
// (checkEqualReads).
func runAll(c *corpus, p params, runs int, progress func(string)) (map[config][]figures, error) {
	sel := p.phases
	if sel == nil {
		sel, _ = parsePhases("")
	}
	qs := queries(c)
	var hw *histWorkload
	if p.histSeries > 0 && sel["hist"] {
		hw = newHistWorkload(p.histSeries, c.targets())
	}
	var ls *lateSchedule
	if p.lateFrac > 0 && sel["late"] {
		ls = newLateSchedule(len(c.series), p.rounds, p.lateFrac)
	}
	var sc *corpus
	var sqs []*query
	if sel["scale"] || sel["scale-late"] {
		sc = scaleCorpus(c, p.scaleSeries)
		sqs = queries(sc)
	}
	// The late variants' workloads, built before any run (their
	// schedules stay in the heap through every phase, as the late
	// phase's does).
	var blocksLate, scaleLate *lateRun
	if p.lateFrac > 0 && sel.blocksLate() {
		blocksLate = newLateRun(c, p.blocksRounds, p.lateFrac)
	}
	if p.lateFrac > 0 && sel["scale-late"] {
		scaleLate = newLateRun(sc, p.scaleRounds, p.lateFrac)
	}
	var kept [2]blocksRun // the last blocks6h run's data of each store, for the PromQL phase
	defer func() {
		for _, k := range kept {
			if k.dir != "" {
				os.RemoveAll(k.dir)
			}
		}
	}()
	order := []config{
		{isotsdbStore, true}, {prometheusStore, true},
		{prometheusStore, false}, {isotsdbStore, false},
	}
	out := map[config][]figures{}
	for r := range runs {
		for j := range order {
			cfg := order[(j+r)%len(order)]
			if p.only != "" && p.only != cfg.String() {
				continue
			}
			if !cfg.isolation && !sel["scrape"] && hw == nil {
				continue
			}
			start := time.Now()
			f := figures{}
			merge := func(g figures) {
				for k, v := range g {
					f[k] = v
				}
			}
			if sel["scrape"] {
				sf, err := runScrape(cfg, c, qs, p, cfg.isolation)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", cfg, r+1, err)
				}
				merge(sf)
				sf, err = runStress(cfg, c, p)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", cfg, r+1, err)
				}
				merge(sf)
			}
			if hw != nil {
				hf, err := runHistograms(cfg, c, hw, p, cfg.isolation)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: histograms: %w", cfg, r+1, err)
				}
				merge(hf)
			}
			if ls != nil && cfg.isolation {
				lf, err := runLate(cfg, c, qs, ls, p, progress)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", cfg, r+1, err)
				}
				merge(lf)
			}
			if cfg.isolation && sel.blocks() {
				t := time.Now()
				bf, br, err := runBlocks(cfg, c, qs, p, sel["restart"], sel["promql"] && r == runs-1, nil, progress)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", cfg, r+1, err)
				}
				merge(bf)
				f["b6.seconds"] = time.Since(t).Seconds()
				kept[cfg.kind] = br
			}
			if cfg.isolation && blocksLate != nil {
				t := time.Now()
				bf, _, err := runBlocks(cfg, c, qs, p, sel["restart-late"], false, blocksLate, progress)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", cfg, r+1, err)
				}
				merge(bf)
				f["b6late.seconds"] = time.Since(t).Seconds()
			}
			if cfg.isolation && sc != nil && sel["scale"] {
				t := time.Now()
				xf, err := runScale(cfg, sc, sqs, p, nil, progress)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: scale: %w", cfg, r+1, err)
				}
				merge(xf)
				f["scale.seconds"] = time.Since(t).Seconds()
			}
			if cfg.isolation && scaleLate != nil {
				t := time.Now()
				xf, err := runScale(cfg, sc, sqs, p, scaleLate, progress)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: scale-late: %w", cfg, r+1, err)
				}
				merge(xf)
				f["scalelate.seconds"] = time.Since(t).Seconds()
			}
			out[cfg] = append(out[cfg], f)
			progress(fmt.Sprintf("run %d/%d %-28s %5.1fs  %s", r+1, runs, cfg, time.Since(start).Seconds(), summary(f)))
		}
		if err := checkEqualReads(out, r); err != nil {
			return nil, err
		}
		for j := range 2 {
			k := storeKind((j + r) % 2)
			if p.only != "" && p.only != "paired" {
				continue
			}
			start := time.Now()
			f := figures{}
			if sel["scrape"] {
				g, err := runIsolationCost(k, c, p)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", k, r+1, err)
				}
				maps.Copy(f, g)
			}
			if hw != nil {
				g, err := runHistIsolationCost(k, c, hw, p)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", k, r+1, err)
				}
				maps.Copy(f, g)
			}
			if ls != nil {
				g, err := runLateCost(k, c, p)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", k, r+1, err)
				}
				maps.Copy(f, g)
			}
			if len(f) == 0 {
				continue
			}
			fileWith(out, config{k, true}, r, f)
			progress(fmt.Sprintf("run %d/%d %-28s %5.1fs  paired isolation cost: scrape %.3f, stress %.3f, with histograms %.3f; out-of-order window cost %.3f",
				r+1, runs, k.String()+"/paired", time.Since(start).Seconds(), f["isocost.scrape"], f["isocost.stress"], f["isocost.hist"], f["latecost.scrape"]))
		}
	}
	if sel["promql"] && kept[0].dir != "" && kept[1].dir != "" {
		start := time.Now()
		pf, err := runPromQL(c, kept, p, progress)
		if err != nil {
			return nil, err
		}
		for k := range pf {
			pf[k]["promql.seconds"] = time.Since(start).Seconds()
			fileWith(out, config{storeKind(k), true}, runs-1, pf[k])
		}
	}
	return out, nil
}

// fileWith adds f to the figures of cfg's run r (counted from 0), which
// it creates if cfg has fewer runs (-only paired).
func fileWith(out map[config][]figures, cfg config, r int, f figures) {
	fs := out[cfg]
	for len(fs) < r+1 {
		fs = append(fs, figures{})
	}
	out[cfg] = fs
	maps.Copy(fs[r], f)
}

// summary is the progress line's account of a configuration's run.
func summary(f figures) string {
	var parts []string
	add := func(key, format string) {
		if v, ok := f[key]; ok {
			parts = append(parts, fmt.Sprintf(format, v))
		}
	}
	add("ingest.cpu", "ingest %.0f ns/sample")
	add("ingest.heap", "heap %.0f B/series")
	add("stress.cpu", "stress %.0f ns/sample")
	add("hist.cpu", "histograms %.0f ns/sample")
	add("late.cpu", "late %.0f ns/sample")
	add("late.rejected", "(%.0f late rejected)")
	add("b6.cpu", "blocks6h %.0f ns/sample")
	add("b6.heap", "%.0f B/series")
	add("b6.seconds", "(%.0fs)")
	add("restart.open.wall", "restart open %.2fs")
	add("restart.crash.wall", "after crash %.2fs")
	add("b6late.cpu", "blocks6h-late %.0f ns/sample")
	add("b6late.rejected", "(%.0f late rejected)")
	add("b6late.seconds", "(%.0fs)")
	add("restartlate.open.wall", "restart-late open %.2fs")
	add("restartlate.crash.wall", "after crash %.2fs")
	add("scale.cpu", "scale %.0f ns/sample")
	add("scale.heap", "%.0f B/series")
	add("scale.seconds", "(%.0fs)")
	add("scalelate.cpu", "scale-late %.0f ns/sample")
	add("scalelate.rejected", "(%.0f late rejected)")
	add("scalelate.seconds", "(%.0fs)")
	return strings.Join(parts, ", ")
}
