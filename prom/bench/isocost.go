package main

import (
	"fmt"
	"os"
	"time"
)

// The isolation cost targets ask for a resolution of 1%, finer than the
// run-to-run noise of whole runs on a shared 2-core machine (the same
// store's medians move by ±2% between invocations). So the cost is also
// measured paired: one store with isolation on and one with it off are
// open side by side and written in alternating blocks, A B B A A B ...:
// one scrape round of every target (a few milliseconds), or a twelfth of
// the stress commits (longer, since each stress block starts 1,024
// goroutines, which must stay a small part of it); each block's CPU time
// charged to the store that ran it. Drift of the machine (clock speed,
// other tenants) hits both halves of a pair alike; both stores are live
// throughout, so GC work, driven by the two heaps together, falls on both
// alike too, and a pair a GC cycle lands in is an outlier the median
// ignores. The figure is the median over pairs of cpu(on)/cpu(off).

// pairedStores opens a store of kind k with isolation on and one with it
// off, on the given float and histogram series (the one with isolation on
// first if onFirst), and closes them at the end of fn.
func pairedStores(k storeKind, series, hseries [][]string, tmp string, onFirst bool, fn func(on, off store) error) error {
	on := storeConfig{isolation: true, series: series, hseries: hseries}
	off := on
	off.isolation = false
	return openPair(k, on, off, tmp, onFirst, fn)
}

// openPair opens a store of kind k with configuration a and one with b
// (their dirs are fresh temporary directories under tmp; a's first if
// aFirst), and closes them at the end of fn.
func openPair(k storeKind, a, b storeConfig, tmp string, aFirst bool, fn func(a, b store) error) error {
	var stores [2]store
	cfgs := [2]storeConfig{a, b}
	order := []int{0, 1}
	if !aFirst {
		order = []int{1, 0}
	}
	for _, i := range order {
		dir, err := os.MkdirTemp(tmp, "paired-"+k.String()+"-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg := cfgs[i]
		cfg.dir = dir
		s, err := openStore(k, cfg)
		if err != nil {
			return err
		}
		defer s.close()
		stores[i] = s
	}
	return fn(stores[0], stores[1])
}

// pairedScrape writes the float scrape to on and off, round 0 (which
// creates the series) outside the measurement, then rounds [1, rounds]
// in paired blocks of one round, and returns the CPU ratios on/off of the
// pairs.
func pairedScrape(on, off store, c *corpus, rounds int) ([]float64, error) {
	refs := map[store][]uint64{on: make([]uint64, len(c.series)), off: make([]uint64, len(c.series))}
	for _, s := range []store{on, off} {
		if _, err := ingest(s, c, refs[s], 0, 1); err != nil {
			return nil, err
		}
	}
	return pairedRatio(on, off, rounds, nil, func(s store, i int) (int, error) {
		return ingest(s, c, refs[s], 1+i, 2+i)
	})
}

// stressPairs is the number of block pairs of the stress measurement.
const stressPairs = 12

// pairedRatio runs block(s, i) for i in [0, pairs) on on and off
// alternately (ABBA order, so neither always goes first) and returns the
// CPU ratios on/off of the pairs. prepare, if not nil, runs before each
// block, outside the measurement (to generate its data).
func pairedRatio(on, off store, pairs int, prepare func(s store, i int), block func(s store, i int) (int, error)) ([]float64, error) {
	var ratios []float64
	for i := range pairs {
		var cpu [2]float64 // per sample; 0 = on, 1 = off
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, which := range order {
			s := on
			if which == 1 {
				s = off
			}
			if prepare != nil {
				prepare(s, i)
			}
			m := startMeter()
			n, err := block(s, i)
			u := m.stop()
			if err != nil {
				return nil, err
			}
			cpu[which] = float64(u.cpu.Nanoseconds()) / float64(n)
		}
		ratios = append(ratios, cpu[0]/cpu[1])
	}
	return ratios, nil
}

// runIsolationCost measures the paired isolation cost of store kind k on
// the scrape workload and on the 1,024-appender stress workload.
func runIsolationCost(k storeKind, c *corpus, p params) (figures, error) {
	f := figures{}
	start := time.Now()
	// Each measurement is made twice, with the stores opened in either
	// order, so that neither setting always gets the first-created heap and
	// files; the figure is the median over the pairs of both.
	var scrape, stressed []float64
	for _, onFirst := range []bool{true, false} {
		err := pairedStores(k, c.series, nil, p.tmp, onFirst, func(on, off store) error {
			r, err := pairedScrape(on, off, c, p.rounds)
			scrape = append(scrape, r...)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("bench: paired isolation cost (scrape) of %s: %w", k, err)
		}
		need := p.appenders * stressSeries
		if need > len(c.series) {
			return nil, fmt.Errorf("bench: stress needs %d series, the corpus has %d", need, len(c.series))
		}
		err = pairedStores(k, c.series[:need], nil, p.tmp, onFirst, func(on, off store) error {
			for _, s := range []store{on, off} {
				if _, err := stress(s, p.appenders, 0, 1); err != nil { // creates the series
					return err
				}
			}
			per := max(1, p.commits/stressPairs)
			r, err := pairedRatio(on, off, stressPairs, nil, func(s store, i int) (int, error) {
				return stress(s, p.appenders, 1+i*per, per)
			})
			stressed = append(stressed, r...)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("bench: paired isolation cost (stress) of %s: %w", k, err)
		}
	}
	f["isocost.scrape"] = medianOf(scrape)
	f["isocost.stress"] = medianOf(stressed)
	f["isocost.seconds"] = time.Since(start).Seconds()
	return f, nil
}
