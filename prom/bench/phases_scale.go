package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// The scale phase: p.scaleSeries series made from the corpus by
// replicating it with distinct instance values (series i is corpus series
// i mod len(corpus) in target i/500, so targets stay 500 series), the
// float scrape for p.scaleRounds rounds, cutting blocks as it goes (block
// range scaleBlockRange), then the read phase's queries rebuilt for the
// larger corpus (queries: the top metric name, one of about 100 series,
// one instance, the wide regex and everything, the last weighted 1).
// Both stores run in one process, one after the other: before each, freed
// memory goes back to the OS and the peak RSS is reset, so that its RSS
// growth and peak are its own (file pages the store maps count too).

// minFreeMemory is the memory the scale phase leaves the machine: it
// stops writing (and reports the rounds it wrote) when MemAvailable falls
// below it, rather than let the process be killed.
const minFreeMemory = 1 << 30

// scaleCorpus returns n series made from c: series i is c's series m =
// i mod len(c.series) of replica j = i / len(c.series), with instance
// instanceName(j*c.targets() + m/targetSize), so that every replica has
// instances of its own (for the 20kseries corpus, a multiple of
// targetSize, that is instanceName(i/targetSize): the instance is the
// target), and its kind of values.
func scaleCorpus(c *corpus, n int) *corpus {
	sc := &corpus{series: make([][]string, n), kinds: make([]valueKind, n)}
	for i := range n {
		j, m := i/len(c.series), i%len(c.series)
		src := c.series[m]
		kv := make([]string, len(src))
		copy(kv, src)
		for l := 0; l < len(kv); l += 2 {
			if kv[l] == "instance" {
				kv[l+1] = instanceName(j*c.targets() + m/targetSize)
			}
		}
		sc.series[i] = kv
		sc.kinds[i] = kindOf(i)
	}
	return sc
}

// scaleBlockRange returns the block range (ms) of a scale phase of rounds
// rounds: 1 h if the head spans more than 1.5 h at the end, so that a
// head compaction happens, else the largest multiple of 5 min of which
// that holds (at least 5 min).
func scaleBlockRange(rounds int) int64 {
	span := int64(rounds-1) * scrapeEvery
	if span > newestHour/2*3 {
		return newestHour
	}
	const step = 5 * 60 * 1000
	return max(step, floorTo(span*2/3-1, step))
}

// memAvailable returns MemAvailable of /proc/meminfo, or 0 if unknown.
func memAvailable() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// errLowMemory stops the scale phase before the machine runs out of
// memory.
var errLowMemory = fmt.Errorf("bench: scale: less than %d MiB of memory available", minFreeMemory>>20)

// runScale runs the scale phase on a fresh store of configuration cfg
// over sc (from scaleCorpus) with queries qs (queries(sc)); with late
// (not nil, built for sc and p.scaleRounds), its late variant,
// scale-late (see phases_blocks_late.go), whose figures are prefixed
// scalelate. instead of scale.. A store that fails or a machine short of
// memory ends it early: the figures then hold scale.rounds (the rounds
// of the scrape written), scale.stopped (1) and whatever was measured,
// and log gets the reason; the error return is for failures of the
// benchmark itself.
func runScale(cfg config, sc *corpus, qs []*query, p params, late *lateRun, log func(string)) (figures, error) {
	f := figures{}
	phase, fig := "scale", "scale."
	var ls *lateSchedule
	if late != nil {
		phase, fig, ls = "scale-late", "scalelate.", late.ls
	}
	dir, err := os.MkdirTemp(p.tmp, "scale-"+cfg.kind.String()+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	runtime.GC()
	r0, err := resetRSS()
	if err != nil {
		log(err.Error())
	}
	base := liveHeap()
	br := scaleBlockRange(p.scaleRounds)
	scfg := storeConfig{dir: dir, isolation: cfg.isolation, series: sc.series, blockRange: br}
	if late != nil {
		scfg.lateWindow = lateWindow
	}
	s, err := openStore(cfg.kind, scfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	refs := make([]uint64, len(sc.series))
	guard := func(int) error {
		if m := memAvailable(); m > 0 && m < minFreeMemory {
			return errLowMemory
		}
		return nil
	}
	cs, err := ingestCutting(s, sc, refs, p.scaleRounds, br, ls, guard)
	f[fig+"rounds"] = float64(min(cs.rounds, p.scaleRounds))
	if cs.samples > 0 {
		f[fig+"cpu"] = float64(cs.ingest.cpu.Nanoseconds()) / float64(cs.samples)
		f[fig+"rate"] = float64(cs.samples) / cs.ingest.wall.Seconds()
	}
	if late != nil {
		lateFigures(f, fig, cfg, phase, late, cs, log)
	}
	f[fig+"compactions"] = float64(cs.compactions)
	if cs.compactions > 0 {
		f[fig+"compact.peak"] = float64(cs.peakOver)
	}
	if r1 := readRSS(); r1.ok && r0.ok {
		f[fig+"rss"] = (float64(r1.now) - float64(r0.now)) / float64(len(sc.series))
		f[fig+"rss.peak"] = (float64(r1.peak) - float64(r0.now)) / float64(len(sc.series))
		f[fig+"rss.file"] = (float64(r1.file) - float64(r0.file)) / float64(len(sc.series))
	}
	f[fig+"heap"] = (float64(liveHeap()) - float64(base)) / float64(len(sc.series))
	if p.heapProfile != "" {
		if err := writeHeapProfile(p.heapProfile + "." + phase); err != nil {
			return nil, err
		}
	}
	if err != nil {
		f[fig+"stopped"] = 1
		log(fmt.Sprintf("%s: %s phase stopped after %d of %d rounds: %v", cfg, phase, cs.rounds, p.scaleRounds, err))
		return f, nil
	}

	mint, maxt := baseTime, maxTime(p.scaleRounds, sc.targets())
	st, err := readPhase(s, qs, p.scaleReadReps, mint, maxt)
	if err != nil {
		f[fig+"stopped"] = 1
		log(fmt.Sprintf("%s: %s phase: reads failed: %v", cfg, phase, err))
		return f, nil
	}
	f[fig+"read"] = float64(st.samples) / st.wall.Seconds()
	for _, q := range qs {
		f[fig+"p50."+q.name] = float64(percentile(st.latencies[q.name], 0.5).Nanoseconds())
	}
	if late != nil {
		f[fig+"read.samples"] = float64(st.samples)
		got, err := readDigest(s, mint, maxt)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: read back: %w", phase, err)
		}
		if err := checkDigest(cfg, phase, got, late.want.minus(cs.late.lost)); err != nil {
			return nil, err
		}
	}
	return f, s.close()
}
