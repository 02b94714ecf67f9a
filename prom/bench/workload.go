package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
)

// Workload constants shared by both stores.
const (
	targetSize   = 500                  // series per target; one commit per target per scrape
	scrapeEvery  = int64(15000)         // ms between scrapes of a target
	baseTime     = int64(1764000000000) // first scrape, aligned to an hour
	blockRange   = int64(3600 * 1000)   // block duration of both stores, ms
	writers      = 2                    // writer goroutines
	stressSeries = 10                   // series per stress appender
	openAppends  = 10000                // open appenders during the query-start probe
)

// corpus is the workload's series: label sets as name/value pairs (sorted
// by name), grouped into targets of targetSize consecutive series.
type corpus struct {
	series [][]string // each: name, value, name, value, ...; sorted by name
	kinds  []valueKind
}

// loadCorpus reads the 20kseries file (one JSON object of labels per line)
// and adds job and instance labels: series i belongs to target i/targetSize.
func loadCorpus(path string, limit int) (*corpus, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: corpus: %w", err)
	}
	defer f.Close()
	c := &corpus{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && (limit <= 0 || len(c.series) < limit) {
		var m map[string]string
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("bench: corpus line %d: %w", len(c.series)+1, err)
		}
		i := len(c.series)
		m["job"] = "bench"
		m["instance"] = instanceName(i / targetSize)
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		slices.Sort(names)
		kv := make([]string, 0, 2*len(names))
		for _, n := range names {
			kv = append(kv, n, m[n])
		}
		c.series = append(c.series, kv)
		c.kinds = append(c.kinds, kindOf(i))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bench: corpus: %w", err)
	}
	if len(c.series) == 0 {
		return nil, fmt.Errorf("bench: corpus %s is empty", path)
	}
	return c, nil
}

func instanceName(target int) string { return fmt.Sprintf("10.0.%d.%d:9100", target/250, target%250) }

// targets returns the number of targets.
func (c *corpus) targets() int { return (len(c.series) + targetSize - 1) / targetSize }

// target returns the series indexes [lo, hi) of target k.
func (c *corpus) target(k int) (lo, hi int) {
	return k * targetSize, min((k+1)*targetSize, len(c.series))
}

// scrapeTime is the timestamp of round r of target k: 15 s apart, each
// target with its own fixed offset, as a scrape loop spreads targets.
func scrapeTime(k, r int) int64 {
	return baseTime + int64(r)*scrapeEvery + int64(k*131)%scrapeEvery
}

// maxTime is the newest timestamp after rounds rounds of n targets.
func maxTime(rounds, targets int) int64 {
	t := int64(math.MinInt64)
	for k := 0; k < targets; k++ {
		t = max(t, scrapeTime(k, rounds-1))
	}
	return t
}

// valueKind is how a series' values evolve.
type valueKind uint8

const (
	kindCounter   valueKind = iota // monotonically increasing integers
	kindGaugeInt                   // integer gauge moving around a level (bytes, counts)
	kindGaugeFrac                  // fractional gauge (ratios, seconds)
	kindConstant                   // 1, like up or *_info
)

// kindOf spreads kinds over series: 45% counters, 20% integer gauges,
// 10% fractional gauges, 25% constants.
func kindOf(i int) valueKind {
	switch h := mix(uint64(i), 0) % 100; {
	case h < 45:
		return kindCounter
	case h < 65:
		return kindGaugeInt
	case h < 75:
		return kindGaugeFrac
	default:
		return kindConstant
	}
}

// mix is a small deterministic hash of (a, b).
func mix(a, b uint64) uint64 {
	x := a*0x9e3779b97f4a7c15 ^ b*0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return x
}

// value is series i's sample in round r. It depends only on (i, r), so
// every store and every run gets the same data.
func (c *corpus) value(i, r int) float64 {
	switch c.kinds[i] {
	case kindCounter:
		// rate per scrape between 0 and 2^(i%12); r*(rate) plus a jitter
		// that never makes it go down.
		rate := mix(uint64(i), 1) % (1 << (i % 12))
		return float64(uint64(r)*rate + mix(uint64(i), uint64(r))%(rate+1))
	case kindGaugeInt:
		level := mix(uint64(i), 2) % (1 << 30)
		return float64(level + (mix(uint64(i), uint64(r)) % 64 * 4096))
	case kindGaugeFrac:
		return float64(mix(uint64(i), uint64(r))%1000) / 7
	default:
		return 1
	}
}
