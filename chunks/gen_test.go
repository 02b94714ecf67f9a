package chunks

import (
	"math"
	"math/rand/v2"
	"sort"
)

// staleNaN is the bit pattern Prometheus uses to mark a series stale.
const staleNaN = 0x7ff0000000000002

// Series generators for tests and benchmarks. Each returns n samples with
// strictly increasing times.

// genScrape returns a regular 15 s scrape with ±jitter ms of jitter starting
// at t0, with values from val(i, r).
func genScrape(r *rand.Rand, n int, t0, jitter int64, val func(i int, r *rand.Rand) uint64) []testSample {
	ss := make([]testSample, n)
	for i := range ss {
		t := t0 + int64(i)*15000
		if jitter > 0 {
			t += r.Int64N(2*jitter+1) - jitter
		}
		ss[i] = testSample{t, val(i, r)}
	}
	return ss
}

func counterValues() func(int, *rand.Rand) uint64 {
	var v float64
	return func(_ int, r *rand.Rand) uint64 {
		v += float64(r.IntN(50))
		return math.Float64bits(v)
	}
}

func gaugeValues(i int, r *rand.Rand) uint64 {
	return math.Float64bits(math.Round((50+10*math.Sin(float64(i)/10)+r.NormFloat64())*100) / 100)
}

func constValues(float64) func(int, *rand.Rand) uint64 {
	return func(int, *rand.Rand) uint64 { return math.Float64bits(42) }
}

// specialValues cycles through NaNs, stale markers, infinities and zeros.
func specialValues(i int, r *rand.Rand) uint64 {
	specials := [...]uint64{
		staleNaN,
		math.Float64bits(math.NaN()),
		0x7ff8000000000001, // NaN with another payload
		math.Float64bits(math.Inf(1)),
		math.Float64bits(math.Inf(-1)),
		0,
		1 << 63, // -0
		math.Float64bits(1),
		math.Float64bits(math.MaxFloat64),
		math.Float64bits(math.SmallestNonzeroFloat64),
	}
	if r.IntN(3) == 0 {
		return specials[r.IntN(len(specials))]
	}
	return specials[i%len(specials)]
}

func randomBits(_ int, r *rand.Rand) uint64 { return r.Uint64() }

// sortDedup sorts ss by time and keeps the first sample of each time.
func sortDedup(ss []testSample) []testSample {
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].t < ss[j].t })
	out := ss[:0]
	for i, s := range ss {
		if i > 0 && s.t == out[len(out)-1].t {
			continue
		}
		out = append(out, s)
	}
	return out
}

// genJumps returns times with deltas drawn from all magnitudes, so that the
// delta-of-delta falls in every bucket including the 64-bit one, and some
// deltas wrap around int64 arithmetic.
func genJumps(r *rand.Rand, n int) []testSample {
	ss := make([]testSample, 0, n)
	t := int64(math.MinInt64) + r.Int64N(1000)
	for range n {
		ss = append(ss, testSample{t, r.Uint64()})
		step := int64(1) + r.Int64N(int64(1)<<r.IntN(62))
		if t > math.MaxInt64-step {
			break
		}
		t += step
	}
	return ss
}
