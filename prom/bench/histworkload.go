package main

import (
	"fmt"
	"math"

	phistogram "github.com/prometheus/prometheus/model/histogram"

	"github.com/isotsdb/tsdb/histogram"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// The histogram workload: native histogram series spread evenly over the
// float workload's targets, each a counter histogram of schema 3 (buckets
// 2^(1/8) apart) as a client library exposes a latency: about 20 populated
// buckets around a per-series centre, every count growing by a random
// increment each scrape, and now and then a bucket appearing that was
// empty before (it then stays, as in a real counter histogram).
const (
	histSchema  = 3
	histSlots   = 28  // bucket positions a series may ever populate
	histInitial = 24  // of which the first 24 are candidates at round 0
	histAppear  = 960 // rounds (4 h) over which the other buckets appear
	// histChunkRounds is how many rounds of histograms are generated at a
	// time, outside the measurement, before they are written: 8 rounds of
	// 2,000 series, about 10 MiB with both stores' copies.
	histChunkRounds = 8
)

// histNames are the metric names of the histogram series; a target's
// series cycle through them, with a handler label telling them apart.
var histNames = []string{
	"http_request_duration_seconds",
	"grpc_server_handling_seconds",
	"db_query_duration_seconds",
	"rpc_client_latency_seconds",
	"http_response_size_bytes",
}

// histWorkload is the histogram series of the workload and how their
// values evolve. Values depend only on (series, round), so every store and
// every run gets the same data. It is read-only after newHistWorkload and
// safe for concurrent use.
type histWorkload struct {
	series  [][]string // label name/value pairs, sorted by name
	perTgt  int        // series per target; series j belongs to target j/perTgt
	targets int
	layouts []histLayout
}

// histLayout is one series' bucket layout, drawn once.
type histLayout struct {
	first  int32              // bucket index of slot 0
	appear [histSlots]int     // round from which a slot is populated
	rate   [histSlots]uint64  // mean increment per scrape of a slot
	mid    [histSlots]float64 // representative observation of a slot, for the sum
	zero   uint64             // increment per scrape of the zero bucket
}

// newHistWorkload returns n histogram series spread over targets targets
// (the instances of the float workload).
func newHistWorkload(n, targets int) *histWorkload {
	hw := &histWorkload{perTgt: (n + targets - 1) / targets, targets: targets}
	for j := range n {
		k := j / hw.perTgt
		local := j % hw.perTgt
		hw.series = append(hw.series, []string{
			"__name__", histNames[local%len(histNames)],
			"handler", fmt.Sprintf("/api/v1/endpoint%d", local/len(histNames)),
			"instance", instanceName(k),
			"job", "bench",
		})
		hw.layouts = append(hw.layouts, newHistLayout(j))
	}
	return hw
}

func newHistLayout(j int) histLayout {
	var l histLayout
	// Centres between 2^-5 and 2^1 (31 ms to 2 s for latencies).
	l.first = int32(mix(uint64(j), 10)%48) - 40 - histInitial/2
	scale := uint64(1) << (j % 6) // busy and quiet series
	for s := range histSlots {
		h := mix(uint64(j), uint64(100+s))
		if s >= histInitial || h%6 == 0 { // about 20 of the first 24 are populated from round 0
			l.appear[s] = 1 + int(h>>8)%histAppear
		}
		// A bell over the slots: most observations near the centre.
		d := float64(s - histInitial/2)
		l.rate[s] = 1 + uint64(float64(4*scale)*math.Exp(-d*d/32)) + (h>>20)%scale
		l.mid[s] = math.Exp2((float64(l.first+int32(s)) + 0.5) / 8)
	}
	l.zero = mix(uint64(j), 11) % 2
	return l
}

// target returns the histogram series [lo, hi) of target k.
func (hw *histWorkload) target(k int) (lo, hi int) {
	return min(k*hw.perTgt, len(hw.series)), min((k+1)*hw.perTgt, len(hw.series))
}

// slotCount is the cumulative count of series j's slot s in round
// r ≥ appear: (r−appear)·rate plus a jitter in [0, rate], so it never goes
// down, like the float counters.
func slotCount(j, s, r, appear int, rate uint64) uint64 {
	return uint64(r-appear)*rate + mix(uint64(j), uint64(r)<<6|uint64(s))%(rate+1)
}

// value returns series j's histogram in round r: a fresh object, as a
// scrape parses it, since both stores keep what is appended.
func (hw *histWorkload) value(j, r int) *histogram.Histogram {
	l := &hw.layouts[j]
	h := &histogram.Histogram{
		Schema:        histSchema,
		ZeroThreshold: math.Ldexp(1, -128), // Prometheus's default
		ZeroCount:     uint64(r) * l.zero,
	}
	h.Count = h.ZeroCount
	var prev uint64
	last := -2 // slot of the previous populated bucket
	for s := range histSlots {
		if r < l.appear[s] {
			continue
		}
		c := slotCount(j, s, r, l.appear[s], l.rate[s])
		if s == last+1 {
			h.PositiveSpans[len(h.PositiveSpans)-1].Length++
		} else {
			off := l.first + int32(s)
			if last >= 0 {
				off = int32(s - last - 1)
			}
			h.PositiveSpans = append(h.PositiveSpans, histogram.Span{Offset: off, Length: 1})
		}
		h.PositiveBuckets = append(h.PositiveBuckets, int64(c)-int64(prev))
		prev, last = c, s
		h.Count += c
		h.Sum += float64(c) * l.mid[s]
	}
	return h
}

// histSample is one histogram in both stores' types, converted once from
// the same value; each store appends its own and keeps it.
type histSample struct {
	iso  *histogram.Histogram
	prom *phistogram.Histogram
}

// batch returns the histograms of rounds [from, to) of every series,
// indexed [round-from][series].
func (hw *histWorkload) batch(from, to int) [][]histSample {
	out := make([][]histSample, to-from)
	for r := from; r < to; r++ {
		row := make([]histSample, len(hw.series))
		for j := range row {
			h := hw.value(j, r)
			row[j] = histSample{iso: h, prom: promstorage.ToPromHistogram(h)}
		}
		out[r-from] = row
	}
	return out
}
