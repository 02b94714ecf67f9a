package chunks

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// stHistHead is histHead for the ST encodings, integer or float: it
// appends with start timestamps, follows the returned chunks and appenders,
// cuts every cutEvery samples and resumes the appender from the chunk's
// bytes every resumeEvery samples.
type stHistHead struct {
	t                     testing.TB
	float                 bool
	cutEvery, resumeEvery int

	done []Chunk
	ic   *HistogramChunk
	ia   *HistogramAppender
	fc   *FloatHistogramChunk
	fa   *FloatHistogramAppender
}

func newSTHistHead(t testing.TB, float bool, cutEvery, resumeEvery int) *stHistHead {
	hh := &stHistHead{t: t, float: float, cutEvery: cutEvery, resumeEvery: resumeEvery}
	hh.cut()
	return hh
}

func (hh *stHistHead) cut() {
	var err error
	if hh.float {
		hh.fc = NewFloatHistogramSTChunk()
		hh.fa, err = hh.fc.Appender()
	} else {
		hh.ic = NewHistogramSTChunk()
		hh.ia, err = hh.ic.Appender()
	}
	require.NoError(hh.t, err)
}

func (hh *stHistHead) cur() Chunk {
	if hh.float {
		return hh.fc
	}
	return hh.ic
}

func (hh *stHistHead) append(i int, st, ts int64, h *histogram.Histogram) {
	t := hh.t
	if hh.resumeEvery > 0 && i%hh.resumeEvery == hh.resumeEvery-1 {
		c, err := FromData(hh.cur().Encoding(), bytes.Clone(hh.cur().Bytes()))
		require.NoError(t, err)
		if hh.float {
			hh.fc = c.(*FloatHistogramChunk)
			hh.fa, err = hh.fc.Appender()
		} else {
			hh.ic = c.(*HistogramChunk)
			hh.ia, err = hh.ic.Appender()
		}
		require.NoError(t, err)
	}
	var prevI *HistogramAppender
	var prevF *FloatHistogramAppender
	if hh.cutEvery > 0 && hh.cur().NumSamples() >= hh.cutEvery {
		hh.done = append(hh.done, hh.cur())
		prevI, prevF = hh.ia, hh.fa
		hh.cut()
	}
	old := hh.cur()
	var res HistogramAppendResult
	var err error
	if hh.float {
		res, hh.fc, hh.fa, err = hh.fa.AppendFloatHistogramSTAfter(prevF, st, ts, h.ToFloat())
	} else {
		res, hh.ic, hh.ia, err = hh.ia.AppendHistogramSTAfter(prevI, st, ts, h)
	}
	require.NoError(t, err)
	if res == CutNewChunk {
		hh.done = append(hh.done, old)
	}
}

func (hh *stHistHead) chunks() []Chunk { return append(hh.done, hh.cur()) }

func TestHistogramSTRoundTrip(t *testing.T) {
	for _, float := range []bool{false, true} {
		for _, tc := range []struct {
			name          string
			custom, gauge bool
		}{{"exponential", false, false}, {"custom", true, false}, {"gauge", false, true}} {
			for kind := range numSTKinds {
				for _, cr := range [][2]int{{0, 0}, {120, 0}, {0, 7}, {9, 4}} {
					name := fmt.Sprintf("float=%v/%s/st%d/cut%d/resume%d", float, tc.name, kind, cr[0], cr[1])
					t.Run(name, func(t *testing.T) {
						for seed := range uint64(2) {
							g := newHistGen(seed, tc.custom, tc.gauge)
							ts, hs := histSeq(g, 300)
							sts := genST(rand.New(rand.NewPCG(seed, 5)), ts, kind)
							hh := newSTHistHead(t, float, cr[0], cr[1])
							for i := range ts {
								hh.append(i, sts[i], ts[i], hs[i])
							}
							requireSTHistSamples(t, hh.chunks(), float, sts, ts, hs)
						}
					})
				}
			}
		}
	}
}

// requireSTHistSamples decodes chunks and requires the samples appended:
// times, start timestamps and histograms.
func requireSTHistSamples(t *testing.T, cs []Chunk, float bool, sts, ts []int64, hs []*histogram.Histogram) {
	t.Helper()
	i := 0
	var it Iterator
	var h histogram.Histogram
	var fh histogram.FloatHistogram
	for ci, c := range cs {
		want := EncHistogramST
		if float {
			want = EncFloatHistogramST
		}
		require.Equal(t, want, c.Encoding())
		it = c.Iterator(it)
		for it.Next() != ValNone {
			require.Less(t, i, len(ts))
			msg := fmt.Sprintf("sample %d", i)
			require.Equal(t, ts[i], it.AtT(), msg)
			require.Equal(t, sts[i], it.(interface{ AtST() int64 }).AtST(), msg)
			if float {
				_, got := it.AtFloatHistogram(&fh)
				wantFH := hs[i].ToFloat()
				if isStale(wantFH.Sum) {
					require.True(t, isStale(got.Sum), msg)
				} else {
					requireSameFloatBuckets(t, wantFH, got)
				}
			} else {
				it.AtHistogram(&h)
				requireSameHistogram(t, hs[i], &h, msg)
			}
			i++
		}
		require.NoError(t, it.Err(), "chunk %d", ci)
	}
	require.Equal(t, len(ts), i)
}

// TestHistogramSTHeader checks the ST chunk header: the counter-reset bits
// share the first byte with the 14-bit sample count, and the third byte is
// the ST header.
func TestHistogramSTHeader(t *testing.T) {
	for _, float := range []bool{false, true} {
		t.Run(fmt.Sprintf("float=%v", float), func(t *testing.T) {
			hh := newSTHistHead(t, float, 0, 0)
			h := &histogram.Histogram{Count: 1, ZeroCount: 1, CounterResetHint: histogram.GaugeType}
			for i := range int64(3) {
				hh.append(int(i), 100+i, 1000*i, h)
			}
			b := hh.cur().Bytes()
			require.Equal(t, []byte{0b1100_0000, 3, stKnownBit | 1}, b[:3])
			require.Equal(t, 3, hh.cur().NumSamples())
			var cr histogram.CounterResetHint
			if float {
				cr = hh.fc.CounterResetHeader()
			} else {
				cr = hh.ic.CounterResetHeader()
			}
			require.Equal(t, histogram.GaugeType, cr)
		})
	}
}

// TestHistogramSTFull checks that an ST chunk, which counts samples in 14
// bits, is cut after 16383 samples.
func TestHistogramSTFull(t *testing.T) {
	c := NewHistogramSTChunk()
	app, err := c.Appender()
	require.NoError(t, err)
	h := &histogram.Histogram{Count: 1, ZeroCount: 1}
	for i := range int64(stSampleCountMask) {
		res, _, _, err := app.AppendHistogramST(i/100, i, h)
		require.NoError(t, err)
		require.Equal(t, AppendedInPlace, res)
	}
	require.Equal(t, stSampleCountMask, c.NumSamples())
	res, nc, napp, err := app.AppendHistogramST(7, stSampleCountMask, h)
	require.NoError(t, err)
	require.Equal(t, CutNewChunk, res)
	require.Equal(t, EncHistogramST, nc.Encoding())
	require.Equal(t, 1, nc.NumSamples())
	require.Equal(t, histogram.NotCounterReset, nc.CounterResetHeader())
	require.NotSame(t, app, napp)
	it := c.Iterator(nil)
	n := 0
	for it.Next() != ValNone {
		require.Equal(t, int64(n/100), it.(*HistogramIterator).AtST())
		n++
	}
	require.NoError(t, it.Err())
	require.Equal(t, stSampleCountMask, n)
}

func TestHistogramSTFromDataErrors(t *testing.T) {
	for _, e := range []Encoding{EncHistogramST, EncFloatHistogramST} {
		for name, b := range map[string][]byte{
			"short":               {0, 0},
			"no samples but data": {0, 0, 0, 1},
		} {
			t.Run(fmt.Sprintf("%v/%s", e, name), func(t *testing.T) {
				_, err := FromData(e, b)
				requireCorrupt(t, err)
			})
		}
		// Unlike the plain encodings' flags byte, any ST header is valid.
		c, err := FromData(e, []byte{0x80, 0, 0xff})
		require.NoError(t, err)
		require.Equal(t, 0, c.NumSamples())
	}
}

func FuzzHistogramSTChunkDecode(f *testing.F) {
	for _, b := range seedHistogramChunks(f, false, true) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeAll(t, b, false, true) })
}

func FuzzFloatHistogramSTChunkDecode(f *testing.F) {
	for _, b := range seedHistogramChunks(f, true, true) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeAll(t, b, true, true) })
}

// FuzzHistogramSTChunkRoundTrip appends a generated sequence with start
// timestamps, chosen by the fuzzer, to ST chunks and requires every sample
// back.
func FuzzHistogramSTChunkRoundTrip(f *testing.F) {
	f.Add(uint64(0), uint8(0), uint16(100))
	f.Add(uint64(3), uint8(0x53), uint16(500))
	f.Fuzz(func(t *testing.T, seed uint64, mode uint8, n uint16) {
		g := newHistGen(seed, mode&1 != 0, mode&2 != 0)
		float := mode&4 != 0
		ts, hs := histSeq(g, int(n%800)+1)
		sts := genST(rand.New(rand.NewPCG(seed, 6)), ts, int(mode>>3)%numSTKinds)
		hh := newSTHistHead(t, float, []int{0, 120, 7, 1}[mode>>6&3], []int{0, 5, 13, 1}[mode>>3&3])
		for i := range ts {
			hh.append(i, sts[i], ts[i], hs[i])
		}
		requireSTHistSamples(t, hh.chunks(), float, sts, ts, hs)
	})
}
