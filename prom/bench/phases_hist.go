package main

import (
	"fmt"
	"os"
	"time"
)

// The histogram phases. Generating a histogram (building its spans and
// buckets, converting it to Prometheus's type) is work of the benchmark,
// not of the store, and would dilute the comparison, so the histograms are
// generated histChunkRounds rounds at a time before they are written and
// only the writing is measured. The per-histogram figures come from a store
// that holds only the histogram series, so that its CPU, its reads and its
// block bytes are the histograms' alone; the mixed scrape (the float
// workload with the histograms in the same commits) is measured for
// realism and for the paired isolation cost.

// histQuery selects every histogram series of a histogram-only store.
var histQuery = &query{name: "histograms", matchers: []matcher{{name: "job", value: "bench"}}}

// ingestHist writes rounds [from, to) of the histogram workload to s and,
// if refs is not nil, the float workload too: one commit per target per
// round with the target's floats and histograms. refs and hrefs cache the
// float and histogram series refs. It returns the numbers of float and
// histogram samples and the usage of the writing alone (the histograms
// of every histChunkRounds rounds are generated before it).
func ingestHist(s store, c *corpus, hw *histWorkload, refs, hrefs []uint64, from, to int) (floats, hists int, u usage, err error) {
	for lo := from; lo < to; lo += histChunkRounds {
		hi := min(lo+histChunkRounds, to)
		batch := hw.batch(lo, hi)
		m := startMeter()
		_, err := scrapeRounds(hw.targets, lo, hi, func(k, r int) (int, error) {
			return scrapeMixed(s, c, hw, refs, hrefs, batch[r-lo], k, r)
		})
		d := m.stop()
		u.wall += d.wall
		u.cpu += d.cpu
		u.mallocs += d.mallocs
		if err != nil {
			return 0, 0, u, err
		}
	}
	if refs != nil {
		floats = len(c.series) * (to - from)
	}
	return floats, len(hw.series) * (to - from), u, nil
}

// scrapeMixed writes target k's round r in one commit: its floats if refs
// is not nil, then its histograms from row (indexed by histogram series).
func scrapeMixed(s store, c *corpus, hw *histWorkload, refs, hrefs []uint64, row []histSample, k, r int) (int, error) {
	t := scrapeTime(k, r)
	app := s.appender()
	n := 0
	if refs != nil {
		lo, hi := c.target(k)
		for i := lo; i < hi; i++ {
			ref, err := app.append(refs[i], i, t, c.value(i, r))
			if err != nil {
				_ = app.rollback()
				return 0, fmt.Errorf("bench: append series %d round %d: %w", i, r, err)
			}
			refs[i] = ref
		}
		n += hi - lo
	}
	lo, hi := hw.target(k)
	for j := lo; j < hi; j++ {
		ref, err := app.appendHistogram(hrefs[j], j, t, &row[j])
		if err != nil {
			_ = app.rollback()
			return 0, fmt.Errorf("bench: append histogram series %d round %d: %w", j, r, err)
		}
		hrefs[j] = ref
	}
	n += hi - lo
	if err := app.commit(); err != nil {
		return 0, fmt.Errorf("bench: commit target %d round %d: %w", k, r, err)
	}
	return n, nil
}

// readHist runs histQuery reps times over [mint, maxt] and returns the
// histogram samples read per second and the median latency.
func readHist(s store, reps int, mint, maxt int64) (rate float64, p50 time.Duration, err error) {
	var ds []time.Duration
	var wall time.Duration
	samples := 0
	for range reps {
		start := time.Now()
		series, n, err := s.queryHistograms(histQuery, mint, maxt)
		d := time.Since(start)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: query %s: %w", histQuery.name, err)
		}
		if series == 0 {
			return 0, 0, fmt.Errorf("bench: query %s matched no series", histQuery.name)
		}
		ds = append(ds, d)
		wall += d
		samples += n
	}
	return float64(samples) / wall.Seconds(), percentile(ds, 0.5), nil
}

// runHistograms runs the histogram phases on fresh stores: the
// histogram-only ingest and, if full, its reads (from the head, then from
// the block), head compaction and block bytes, and the mixed scrape.
func runHistograms(cfg config, c *corpus, hw *histWorkload, p params, full bool) (figures, error) {
	f := figures{}
	dir, err := os.MkdirTemp(p.tmp, "hist-"+cfg.kind.String()+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	base := liveHeap()
	s, err := openStore(cfg.kind, storeConfig{dir: dir, isolation: cfg.isolation, hseries: hw.series})
	if err != nil {
		return nil, err
	}
	defer s.close()
	hrefs := make([]uint64, len(hw.series))
	_, n, u, err := ingestHist(s, c, hw, nil, hrefs, 0, p.rounds)
	if err != nil {
		return nil, err
	}
	f["hist.cpu"] = float64(u.cpu.Nanoseconds()) / float64(n)
	f["hist.rate"] = float64(n) / u.wall.Seconds()
	f["hist.allocs"] = float64(u.mallocs) / float64(n)
	f["hist.heap"] = (float64(liveHeap()) - float64(base)) / float64(len(hw.series))
	if !full {
		return f, s.close()
	}

	mint, maxt := baseTime, maxTime(p.rounds, hw.targets)
	rate, p50, err := readHist(s, p.readReps, mint, maxt)
	if err != nil {
		return nil, err
	}
	f["hist.read.rate"] = rate
	f["hist.read.p50"] = float64(p50.Nanoseconds())

	// As in the float phases, the head grows past one and a half block
	// ranges, so that its first hour is due, then is compacted.
	to := p.rounds + p.rwwRounds + p.compactRounds
	m := startMeter()
	if _, _, _, err := ingestHist(s, c, hw, nil, hrefs, p.rounds, to); err != nil {
		return nil, err
	}
	if err := s.compact(); err != nil {
		return nil, fmt.Errorf("bench: compact: %w", err)
	}
	f["hist.compact.cpu"] = m.stop().cpu.Seconds()
	bytes, samples, err := diskPerSample(s)
	if err != nil {
		return nil, err
	}
	if samples == 0 {
		return nil, fmt.Errorf("bench: %s wrote no histogram block", cfg)
	}
	f["hist.disk.bytes"] = float64(bytes) / float64(samples)
	f["hist.disk.samples"] = float64(samples)
	// The first hour is now in the block only.
	rate, _, err = readHist(s, p.readReps, mint, maxt)
	if err != nil {
		return nil, err
	}
	f["hist.read.block.rate"] = rate
	if err := s.close(); err != nil {
		return nil, err
	}

	mixed, err := runMixed(cfg, c, hw, p)
	if err != nil {
		return nil, err
	}
	for k, v := range mixed {
		f[k] = v
	}
	return f, nil
}

// runMixed runs the mixed scrape's ingest on a fresh store.
func runMixed(cfg config, c *corpus, hw *histWorkload, p params) (figures, error) {
	dir, err := os.MkdirTemp(p.tmp, "mixed-"+cfg.kind.String()+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := openStore(cfg.kind, storeConfig{dir: dir, isolation: cfg.isolation, series: c.series, hseries: hw.series})
	if err != nil {
		return nil, err
	}
	defer s.close()
	fl, n, u, err := ingestHist(s, c, hw, make([]uint64, len(c.series)), make([]uint64, len(hw.series)), 0, p.rounds)
	if err != nil {
		return nil, err
	}
	return figures{
		"mixed.cpu":  float64(u.cpu.Nanoseconds()) / float64(fl+n),
		"mixed.rate": float64(fl+n) / u.wall.Seconds(),
	}, s.close()
}

// runHistIsolationCost measures the paired isolation cost of store kind k
// on the mixed scrape, as runIsolationCost does on the float scrape: one
// round of every target per block, the histograms of each block generated
// before it, outside the measurement.
func runHistIsolationCost(k storeKind, c *corpus, hw *histWorkload, p params) (figures, error) {
	start := time.Now()
	var ratios []float64
	for _, onFirst := range []bool{true, false} {
		err := pairedStores(k, c.series, hw.series, p.tmp, onFirst, func(on, off store) error {
			type refSet struct{ refs, hrefs []uint64 }
			refs := map[store]refSet{}
			// Round 0 creates the series; the blocks measure steady scrapes.
			for _, s := range []store{on, off} {
				refs[s] = refSet{make([]uint64, len(c.series)), make([]uint64, len(hw.series))}
				if _, _, _, err := ingestHist(s, c, hw, refs[s].refs, refs[s].hrefs, 0, 1); err != nil {
					return err
				}
			}
			var row []histSample
			r, err := pairedRatio(on, off, p.rounds,
				func(_ store, i int) { row = hw.batch(1+i, 2+i)[0] }, // each store its own copies
				func(s store, i int) (int, error) {
					return scrapeRounds(hw.targets, 1+i, 2+i, func(k, r int) (int, error) {
						return scrapeMixed(s, c, hw, refs[s].refs, refs[s].hrefs, row, k, r)
					})
				})
			ratios = append(ratios, r...)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("bench: paired isolation cost (histograms) of %s: %w", k, err)
		}
	}
	return figures{
		"isocost.hist":         medianOf(ratios),
		"isocost.hist.seconds": time.Since(start).Seconds(),
	}, nil
}
