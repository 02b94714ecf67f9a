// Package chunktest holds the sample generators that the tests and
// benchmarks of the chunk encoding (package chunks) and of the chunk
// segment files (internal/chunkseg) share. It does not import chunks, so
// chunks' own tests can use it.
package chunktest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// StaleNaN is the bit pattern Prometheus uses to mark a series stale.
const StaleNaN = 0x7ff0000000000002

// Sample is a sample with its value as raw bits, so that comparisons see
// NaN payloads and signed zeros.
type Sample struct {
	T int64
	V uint64
}

// String formats the sample with its value as bits and as a float.
func (s Sample) String() string {
	return fmt.Sprintf("(%d, %#x=%g)", s.T, s.V, math.Float64frombits(s.V))
}

// RequireSamples fails the test unless got equals want, sample by sample
// (values compared bit by bit).
func RequireSamples(t testing.TB, want, got []Sample) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("got %d samples, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("sample %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

// Series generators for tests and benchmarks. Each returns n samples with
// strictly increasing times.

// GenScrape returns a regular 15 s scrape with ±jitter ms of jitter
// starting at t0, with values from val(i, r).
func GenScrape(r *rand.Rand, n int, t0, jitter int64, val func(i int, r *rand.Rand) uint64) []Sample {
	ss := make([]Sample, n)
	for i := range ss {
		t := t0 + int64(i)*15000
		if jitter > 0 {
			t += r.Int64N(2*jitter+1) - jitter
		}
		ss[i] = Sample{t, val(i, r)}
	}
	return ss
}

// CounterValues returns a generator of a counter's values: increases of
// 0 to 49.
func CounterValues() func(int, *rand.Rand) uint64 {
	var v float64
	return func(_ int, r *rand.Rand) uint64 {
		v += float64(r.IntN(50))
		return math.Float64bits(v)
	}
}

// GaugeValues generates a noisy sine wave rounded to two decimals.
func GaugeValues(i int, r *rand.Rand) uint64 {
	return math.Float64bits(math.Round((50+10*math.Sin(float64(i)/10)+r.NormFloat64())*100) / 100)
}

// ConstValues returns a generator of one constant value.
func ConstValues(float64) func(int, *rand.Rand) uint64 {
	return func(int, *rand.Rand) uint64 { return math.Float64bits(42) }
}

// SpecialValues cycles through NaNs, stale markers, infinities and zeros.
func SpecialValues(i int, r *rand.Rand) uint64 {
	specials := [...]uint64{
		StaleNaN,
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

// RandomBits generates uniformly random value bits.
func RandomBits(_ int, r *rand.Rand) uint64 { return r.Uint64() }

// SortDedup sorts ss by time and keeps the first sample of each time.
func SortDedup(ss []Sample) []Sample {
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].T < ss[j].T })
	out := ss[:0]
	for i, s := range ss {
		if i > 0 && s.T == out[len(out)-1].T {
			continue
		}
		out = append(out, s)
	}
	return out
}

// GenJumps returns times with deltas drawn from all magnitudes, so that
// the delta-of-delta falls in every bucket including the 64-bit one, and
// some deltas wrap around int64 arithmetic.
func GenJumps(r *rand.Rand, n int) []Sample {
	ss := make([]Sample, 0, n)
	t := int64(math.MinInt64) + r.Int64N(1000)
	for range n {
		ss = append(ss, Sample{t, r.Uint64()})
		step := int64(1) + r.Int64N(int64(1)<<r.IntN(62))
		if t > math.MaxInt64-step {
			break
		}
		t += step
	}
	return ss
}

// SamplesFromBytes turns fuzz input into samples: 16 bytes per sample
// (time, then value bits, little-endian), sorted by time with duplicate
// times dropped.
func SamplesFromBytes(data []byte) []Sample {
	ss := make([]Sample, 0, len(data)/16)
	for ; len(data) >= 16; data = data[16:] {
		ss = append(ss, Sample{int64(binary.LittleEndian.Uint64(data)), binary.LittleEndian.Uint64(data[8:])})
	}
	return SortDedup(ss)
}

// AppendAll appends ss to app (a chunks.Appender).
func AppendAll(app interface{ Append(int64, float64) }, ss []Sample) {
	for _, s := range ss {
		app.Append(s.T, math.Float64frombits(s.V))
	}
}

// Iterator is the part of chunks.Iterator that Collect uses. V is
// chunks.ValueType, which this package cannot name.
type Iterator[V ~uint8] interface {
	Next() V
	At() (int64, float64)
	Err() error
}

// valFloat is chunks.ValFloat; valNone is chunks.ValNone.
const (
	valNone  = 0
	valFloat = 1
)

// Collect drains it, failing the test on an iteration error or on a sample
// that is not a float.
func Collect[V ~uint8](t testing.TB, it Iterator[V]) []Sample {
	t.Helper()
	var out []Sample
	for vt := it.Next(); vt != valNone; vt = it.Next() {
		if vt != valFloat {
			t.Fatalf("sample %d has value type %d, not float", len(out), vt)
		}
		ts, v := it.At()
		out = append(out, Sample{ts, math.Float64bits(v)})
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iteration error after %d samples: %v", len(out), err)
	}
	return out
}
