package promstorage_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
)

// Golden tests of the encodings with start timestamps: XOR2 here, and
// HistogramST and FloatHistogramST through the histogram golden harness
// (histogram_chunk_golden_test.go) with goldenOpts.st set.

// stPattern is a way start timestamps move along a series.
type stPattern uint8

const (
	stNone     stPattern = iota // the encodings without ST
	stZero                      // ST encodings, every ST 0 (none known)
	stConstant                  // one ST before the first sample, never changing
	stResets                    // an ST that jumps to a recent time now and then, sometimes to 0
	stPrevious                  // each sample's ST is the previous sample's time, with jitter (delta temporality)
	stLate                      // 0 for 150 samples, then constant: the first change comes after index 127
	stWild                      // anything: backwards, negative, huge, after t
	numSTPatterns
)

func (p stPattern) String() string {
	return [...]string{"none", "zero", "constant", "resets", "previous", "late", "wild"}[p]
}

// starts returns the start timestamps of samples at times ts.
func (p stPattern) starts(seed uint64, ts []int64) []int64 {
	r := rand.New(rand.NewPCG(seed, uint64(p)))
	sts := make([]int64, len(ts))
	if len(ts) == 0 {
		return sts
	}
	cur := ts[0] - 1 - r.Int64N(100_000)
	for i, t := range ts {
		switch p {
		case stConstant:
			sts[i] = cur
		case stResets:
			if r.IntN(25) == 0 {
				switch r.IntN(4) {
				case 0:
					cur = 0
				default:
					cur = t - r.Int64N(1000)
				}
			}
			sts[i] = cur
		case stPrevious:
			if i > 0 {
				sts[i] = ts[i-1] + r.Int64N(5) - 2
			} else {
				sts[i] = t - 15_000
			}
		case stLate:
			if i >= 150 {
				sts[i] = cur
			}
		case stWild:
			switch r.IntN(8) {
			case 0:
				sts[i] = 0
			case 1:
				sts[i] = r.Int64() - r.Int64()
			case 2:
				sts[i] = t + r.Int64N(1000) // after t
			case 3:
				sts[i] = math.MinInt64 + r.Int64N(10)
			case 4:
				sts[i] = math.MaxInt64 - r.Int64N(10)
			default:
				if i > 0 {
					sts[i] = sts[i-1] - r.Int64N(300) + 100 // mostly backwards
				}
			}
		}
	}
	return sts
}

// floatSeq returns n float samples of a kind chosen by seed: regular or
// jittery timestamps with occasional big or negative gaps, and values that
// are constant, counters, gauges, random bits, or sprinkled with stale
// markers and special floats.
func floatSeq(seed uint64, n int) (ts []int64, vs []float64) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	kind := seed % 6
	t := int64(r.Uint64N(1<<42)) - 1<<41
	v := float64(r.IntN(1000))
	stale := math.Float64frombits(staleNaNBits)
	for i := range n {
		switch r.IntN(20) {
		case 0:
			t += r.Int64N(1 << 30) // big gap
		case 1:
			t += 1 + r.Int64N(5) // tiny gap: negative dod
		default:
			t += 15_000 + r.Int64N(int64(1+kind*kind*50)) - int64(kind*kind*25)
		}
		if i > 0 && t <= ts[i-1] {
			t = ts[i-1] + 1
		}
		switch kind {
		case 0: // constant
		case 1: // counter
			v += float64(r.IntN(100))
		case 2: // gauge with decimals
			v = math.Round(r.NormFloat64()*1000) / 100
		case 3: // random bits
			v = math.Float64frombits(r.Uint64())
		case 4: // counter with stale markers and specials
			switch r.IntN(10) {
			case 0:
				ts, vs = append(ts, t), append(vs, stale)
				continue
			case 1:
				ts, vs = append(ts, t), append(vs, [...]float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1)}[r.IntN(5)])
				continue
			}
			v += float64(r.IntN(3))
		case 5: // values that change few bits, then many
			if i%40 < 20 {
				v = math.Float64frombits(math.Float64bits(v) ^ 1<<r.IntN(8))
			} else {
				v = r.Float64() * math.Ldexp(1, r.IntN(200)-100)
			}
		}
		ts, vs = append(ts, t), append(vs, v)
	}
	return ts, vs
}

// runXOR2Golden appends the same samples to Prometheus's XOR2 chunks and
// ours, cutting a chunk every cutEvery samples and re-creating the
// appender from the chunk's bytes every resumeEvery samples, and requires
// identical bytes and decoding.
func runXOR2Golden(t *testing.T, p stPattern, seed uint64, n, cutEvery, resumeEvery int) {
	ts, vs := floatSeq(seed, n)
	sts := p.starts(seed, ts)

	var pDone []chunkenc.Chunk
	pc := chunkenc.NewXOR2Chunk()
	papp, err := pc.Appender()
	require.NoError(t, err)
	var oDone [][]byte
	oc := chunks.NewXOR2Chunk()
	oapp, err := oc.XOR2Appender()
	require.NoError(t, err)

	for i := range ts {
		if cutEvery > 0 && pc.NumSamples() >= cutEvery {
			pDone = append(pDone, pc)
			pc = chunkenc.NewXOR2Chunk()
			papp, err = pc.Appender()
			require.NoError(t, err)
			oDone = append(oDone, slices.Clone(oc.Bytes()))
			oc = chunks.NewXOR2Chunk()
			oapp, err = oc.XOR2Appender()
			require.NoError(t, err)
		}
		if resumeEvery > 0 && i%resumeEvery == resumeEvery-1 {
			papp, err = pc.Appender()
			require.NoError(t, err)
			c, err := chunks.FromData(chunks.EncXOR2, slices.Clone(oc.Bytes()))
			require.NoError(t, err)
			oc = c.(*chunks.XOR2Chunk)
			oapp, err = oc.XOR2Appender()
			require.NoError(t, err)
		}
		papp.Append(sts[i], ts[i], vs[i])
		oapp.AppendST(sts[i], ts[i], vs[i])
	}
	want := make([][]byte, 0, len(pDone)+1)
	for _, c := range append(pDone, pc) {
		want = append(want, slices.Clone(c.Bytes()))
	}
	got := append(oDone, slices.Clone(oc.Bytes()))
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i], got[i], "chunk %d of %d", i, len(want))
		requireSameXOR2Decoding(t, want[i])
	}
}

// requireSameXOR2Decoding decodes XOR2 chunk bytes with both decoders and
// requires the same samples and start timestamps.
func requireSameXOR2Decoding(t testing.TB, b []byte) {
	pc, err := chunkenc.FromData(chunkenc.EncXOR2, b)
	require.NoError(t, err)
	oc, err := chunks.FromData(chunks.EncXOR2, b)
	require.NoError(t, err)
	require.Equal(t, pc.NumSamples(), oc.NumSamples())
	pit := pc.Iterator(nil)
	oit := oc.Iterator(nil).(*chunks.XOR2Iterator)
	for i := 0; ; i++ {
		pvt, ovt := pit.Next(), oit.Next()
		require.Equal(t, pvt.String(), ovt.String(), "sample %d", i)
		if ovt == chunks.ValNone {
			break
		}
		pt, pv := pit.At()
		ot, ov := oit.At()
		require.Equal(t, pt, ot, "sample %d time", i)
		require.Equal(t, math.Float64bits(pv), math.Float64bits(ov), "sample %d value", i)
		require.Equal(t, pit.AtST(), oit.AtST(), "sample %d start time", i)
	}
	require.NoError(t, pit.Err())
	require.NoError(t, oit.Err())
}

func TestXOR2ChunkGolden(t *testing.T) {
	for p := stZero; p < numSTPatterns; p++ {
		for _, cut := range []int{0, 120, 7} {
			for _, resume := range []int{0, 5, 13} {
				t.Run(fmt.Sprintf("%v/cut%d/resume%d", p, cut, resume), func(t *testing.T) {
					for seed := range uint64(6) {
						runXOR2Golden(t, p, seed, 400, cut, resume)
					}
				})
			}
		}
	}
}

func TestXOR2ChunkGoldenEdges(t *testing.T) {
	stale := math.Float64frombits(staleNaNBits)
	type s struct {
		st, t int64
		v     float64
	}
	seqs := map[string][]s{
		"one sample":           {{0, 1, 1}},
		"one sample with st":   {{-5, 1, 1}},
		"stale first":          {{0, 1, stale}, {0, 2, 1}, {0, 3, 1}, {0, 4, 2}},
		"stale at dod 0":       {{0, 10, 1}, {0, 20, 2}, {0, 30, stale}, {0, 40, 2}, {0, 50, 3}},
		"st at second":         {{0, 10, 1}, {9, 20, 1}, {9, 30, 1}, {9, 40, 1}},
		"st before first":      {{math.MinInt64, math.MaxInt64 - 10, 1}, {0, math.MaxInt64 - 5, 2}, {0, math.MaxInt64, 3}},
		"extreme times":        {{1, math.MinInt64, 0}, {2, math.MinInt64 + 1, 0}, {3, math.MaxInt64, 0}},
		"dod bucket edges":     {{0, 0, 0}, {0, 10, 0}, {0, 10 + 10 + 4095, 0}, {0, 4125 + 4105 - 4096, 0}, {0, 8134 + 3914 + 524287, 1}, {0, 536335 + 528201 - 524288, 1}, {0, 1 << 40, 1}},
		"no window then reuse": {{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {0, 4, 1}, {0, 5, 3}, {0, 6, 2}},
	}
	for name, seq := range seqs {
		for _, resume := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("%s/resume%d", name, resume), func(t *testing.T) {
				pc := chunkenc.NewXOR2Chunk()
				papp, err := pc.Appender()
				require.NoError(t, err)
				oc := chunks.NewXOR2Chunk()
				oapp, err := oc.XOR2Appender()
				require.NoError(t, err)
				for i, x := range seq {
					if resume > 0 && i%resume == 0 {
						papp, err = pc.Appender()
						require.NoError(t, err)
						oapp, err = oc.XOR2Appender()
						require.NoError(t, err)
					}
					papp.Append(x.st, x.t, x.v)
					oapp.AppendST(x.st, x.t, x.v)
				}
				require.Equal(t, pc.Bytes(), oc.Bytes())
				requireSameXOR2Decoding(t, pc.Bytes())
			})
		}
	}
}

func FuzzXOR2ChunkGolden(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(50))
	f.Add(uint64(4), uint8(0x35), uint16(300))
	f.Fuzz(func(t *testing.T, seed uint64, mode uint8, n uint16) {
		p := stZero + stPattern(mode%uint8(numSTPatterns-1))
		cut := []int{0, 120, 7, 1}[mode>>3&3]
		resume := []int{0, 5, 13, 1}[mode>>5&3]
		runXOR2Golden(t, p, seed, int(n%1000)+1, cut, resume)
	})
}

// FuzzXOR2ChunkDecodeParity decodes arbitrary bytes with both decoders:
// whenever ours decodes a chunk without error, Prometheus's must decode
// the same samples.
func FuzzXOR2ChunkDecodeParity(f *testing.F) {
	for seed := range uint64(6) {
		ts, vs := floatSeq(seed, 30)
		sts := stPattern(seed%6+1).starts(seed, ts)
		c := chunks.NewXOR2Chunk()
		app, err := c.XOR2Appender()
		require.NoError(f, err)
		for i := range ts {
			app.AppendST(sts[i], ts[i], vs[i])
		}
		f.Add(slices.Clone(c.Bytes()))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := chunks.FromData(chunks.EncXOR2, b)
		if err != nil {
			return
		}
		it := c.Iterator(nil)
		for it.Next() != chunks.ValNone {
		}
		if it.Err() != nil {
			return
		}
		requireSameXOR2Decoding(t, b)
	})
}

func TestHistogramSTChunkGolden(t *testing.T) {
	for p := stZero; p < numSTPatterns; p++ {
		for _, float := range []bool{false, true} {
			for _, kind := range []struct {
				name          string
				custom, gauge bool
			}{{"exp", false, false}, {"custom", true, false}, {"gauge", false, true}} {
				for _, cr := range [][2]int{{0, 0}, {120, 0}, {0, 5}, {7, 13}} {
					name := fmt.Sprintf("%v/float=%v/%s/cut%d/resume%d", p, float, kind.name, cr[0], cr[1])
					o := goldenOpts{custom: kind.custom, gauge: kind.gauge, float: float, cutEvery: cr[0], resumeEvery: cr[1], st: p}
					t.Run(name, func(t *testing.T) {
						for seed := range uint64(3) {
							runGolden(t, o, seed, 300)
						}
					})
				}
			}
		}
	}
}

func FuzzHistogramSTChunkGolden(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(2), uint16(50))
	f.Add(uint64(7), uint8(5), uint8(6), uint16(300))
	f.Fuzz(func(t *testing.T, seed uint64, mode, pattern uint8, n uint16) {
		o := goldenOpts{
			custom: mode&1 != 0, gauge: mode&2 != 0, float: mode&4 != 0,
			cutEvery: []int{0, 120, 7, 1}[mode>>3&3], resumeEvery: []int{0, 5, 13, 1}[mode>>5&3],
			st: stZero + stPattern(pattern%uint8(numSTPatterns-1)),
		}
		runGolden(t, o, seed, int(n%1000)+1)
	})
}

// FuzzHistogramSTChunkDecodeParity is FuzzHistogramChunkDecodeParity for
// the ST encodings.
func FuzzHistogramSTChunkDecodeParity(f *testing.F) {
	for _, float := range []bool{false, true} {
		for seed := range uint64(3) {
			o := goldenOpts{custom: seed == 1, gauge: seed == 2, float: float, st: stPattern(seed + 2)}
			g := newHistGen(seed, o.custom, o.gauge)
			ts, hs := histSeq(g, 30)
			sts := o.st.starts(seed, ts)
			oh := newOurHistHead(f, o)
			for i := range ts {
				oh.append(f, o, i, sts[i], ts[i], hs[i])
			}
			for _, b := range oh.bytes(float) {
				f.Add(b, float)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, float bool) {
		enc := chunks.EncHistogramST
		if float {
			enc = chunks.EncFloatHistogramST
		}
		c, err := chunks.FromData(enc, b)
		if err != nil {
			return
		}
		it := c.Iterator(nil)
		for it.Next() != chunks.ValNone {
		}
		if it.Err() != nil {
			return
		}
		requireSameDecoding(t, b, float, true)
	})
}
