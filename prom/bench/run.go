package main

import (
	"fmt"
	"math"
	"os"
	"regexp"
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
// the stores, and returns all figures by configuration.
func runAll(c *corpus, p params, runs int, progress func(string)) (map[config][]figures, error) {
	qs := queries(c)
	var hw *histWorkload
	if p.histSeries > 0 {
		hw = newHistWorkload(p.histSeries, c.targets())
	}
	var ls *lateSchedule
	if p.lateFrac > 0 {
		ls = newLateSchedule(len(c.series), p.rounds, p.lateFrac)
	}
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
			start := time.Now()
			f, err := runScrape(cfg, c, qs, p, cfg.isolation)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", cfg, r+1, err)
			}
			sf, err := runStress(cfg, c, p)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", cfg, r+1, err)
			}
			for k, v := range sf {
				f[k] = v
			}
			if hw != nil {
				hf, err := runHistograms(cfg, c, hw, p, cfg.isolation)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: histograms: %w", cfg, r+1, err)
				}
				for k, v := range hf {
					f[k] = v
				}
			}
			if ls != nil && cfg.isolation {
				lf, err := runLate(cfg, c, qs, ls, p, progress)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", cfg, r+1, err)
				}
				for k, v := range lf {
					f[k] = v
				}
			}
			out[cfg] = append(out[cfg], f)
			msg := fmt.Sprintf("run %d/%d %-28s %5.1fs  ingest %.0f ns/sample, heap %.0f B/series, stress %.0f ns/sample, histograms %.0f ns/sample",
				r+1, runs, cfg, time.Since(start).Seconds(), f["ingest.cpu"], f["ingest.heap"], f["stress.cpu"], f["hist.cpu"])
			if _, ok := f["late.cpu"]; ok {
				msg += fmt.Sprintf(", late %.0f ns/sample (%.0f of %.0f late rejected)", f["late.cpu"], f["late.rejected"], f["late.late"])
			}
			progress(msg)
		}
		for j := range 2 {
			k := storeKind((j + r) % 2)
			if p.only != "" && p.only != "paired" {
				continue
			}
			f, err := runIsolationCost(k, c, p)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", k, r+1, err)
			}
			if hw != nil {
				hf, err := runHistIsolationCost(k, c, hw, p)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", k, r+1, err)
				}
				for name, v := range hf {
					f[name] = v
				}
			}
			if ls != nil {
				lf, err := runLateCost(k, c, p)
				if err != nil {
					return nil, fmt.Errorf("%s run %d: %w", k, r+1, err)
				}
				for name, v := range lf {
					f[name] = v
				}
			}
			// Filed with the run's isolation-on figures of the store.
			fs := out[config{k, true}]
			if len(fs) < r+1 { // -only paired
				fs = append(fs, figures{})
				out[config{k, true}] = fs
			}
			for name, v := range f {
				fs[len(fs)-1][name] = v
			}
			progress(fmt.Sprintf("run %d/%d %-28s %5.1fs  paired isolation cost: scrape %.3f, stress %.3f, with histograms %.3f; out-of-order window cost %.3f",
				r+1, runs, k.String()+"/paired", f["isocost.seconds"]+f["isocost.hist.seconds"]+f["latecost.seconds"], f["isocost.scrape"], f["isocost.stress"], f["isocost.hist"], f["latecost.scrape"]))
		}
	}
	return out, nil
}
