package chunks

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// stSample is a float sample with its start timestamp.
type stSample struct {
	testSample
	ST int64
}

// genST returns start timestamps for samples at times ts, moving as kind
// says: 0 none, 1 constant, 2 reset now and then, 3 the previous sample's
// time with jitter, 4 constant from sample 200 on (after index 127), 5
// anything at all, including backwards and after t.
func genST(r *rand.Rand, ts []int64, kind int) []int64 {
	sts := make([]int64, len(ts))
	if len(ts) == 0 {
		return sts
	}
	cur := ts[0] - 1 - r.Int64N(1e6)
	for i, t := range ts {
		switch kind {
		case 1:
			sts[i] = cur
		case 2:
			if r.IntN(20) == 0 {
				cur = t - r.Int64N(100)
				if r.IntN(3) == 0 {
					cur = 0
				}
			}
			sts[i] = cur
		case 3:
			sts[i] = t - 15000 + r.Int64N(3) - 1
			if i > 0 {
				sts[i] = ts[i-1] + r.Int64N(3) - 1
			}
		case 4:
			if i >= 200 {
				sts[i] = cur
			}
		case 5:
			switch r.IntN(5) {
			case 0:
				sts[i] = r.Int64() - r.Int64()
			case 1:
				sts[i] = t + r.Int64N(100)
			case 2:
				sts[i] = math.MinInt64 + r.Int64N(3)
			case 3:
				if i > 0 {
					sts[i] = sts[i-1] - r.Int64N(1000)
				}
			}
		}
	}
	return sts
}

const numSTKinds = 6

func withST(ss []testSample, sts []int64) []stSample {
	out := make([]stSample, len(ss))
	for i, s := range ss {
		out[i] = stSample{s, sts[i]}
	}
	return out
}

func encodeXOR2(t testing.TB, ss []stSample) *XOR2Chunk {
	c, _ := encodeXOR2App(t, ss)
	return c
}

func encodeXOR2App(t testing.TB, ss []stSample) (*XOR2Chunk, *XOR2Appender) {
	t.Helper()
	c := NewXOR2Chunk()
	app, err := c.XOR2Appender()
	require.NoError(t, err)
	for _, s := range ss {
		app.AppendST(s.ST, s.T, math.Float64frombits(s.V))
	}
	return c, app
}

// requireResumes encodes ss[:k], resumes an appender from the chunk's
// bytes and appends the rest. The samples must decode; the bytes must be
// those of c (all of ss appended at once) unless no value window had been
// written after k samples: then the resumed appender continues, as
// Prometheus's does, with the full 64-bit window, and may choose another.
func requireResumes(t testing.TB, c *XOR2Chunk, ss []stSample, k int) {
	t.Helper()
	pc, papp := encodeXOR2App(t, ss[:k])
	fd, err := FromData(EncXOR2, bytes.Clone(pc.Bytes()))
	require.NoError(t, err)
	app, err := fd.(*XOR2Chunk).XOR2Appender()
	require.NoError(t, err)
	for _, s := range ss[k:] {
		app.AppendST(s.ST, s.T, math.Float64frombits(s.V))
	}
	if papp.win.leading != noLeading || k == 0 {
		require.Equal(t, c.Bytes(), fd.Bytes(), "resumed after %d samples", k)
	}
	got := collectXOR2(t, fd.Iterator(nil))
	require.Equal(t, len(ss), len(got), "resumed after %d samples", k)
	for i := range ss {
		require.Equal(t, ss[i], got[i], "resumed after %d samples: sample %d", k, i)
	}
}

func collectXOR2(t testing.TB, it Iterator) []stSample {
	t.Helper()
	var out []stSample
	for it.Next() != ValNone {
		ts, v := it.At()
		require.Equal(t, ts, it.AtT())
		out = append(out, stSample{testSample{T: ts, V: math.Float64bits(v)}, it.(*XOR2Iterator).AtST()})
	}
	require.NoError(t, it.Err())
	return out
}

func xor2Cases() map[string][]stSample {
	r := rand.New(rand.NewPCG(21, 21))
	cases := map[string][]stSample{"empty": nil}
	gens := map[string]func() []testSample{
		"counter":   func() []testSample { return genScrape(r, 300, 1_700_000_000_000, 0, counterValues()) },
		"gauge":     func() []testSample { return genScrape(r, 300, 1_700_000_000_000, 100, gaugeValues) },
		"const":     func() []testSample { return genScrape(r, 300, -5000, 3, constValues(7)) },
		"specials":  func() []testSample { return genScrape(r, 300, 0, 5000, specialValues) },
		"random":    func() []testSample { return genScrape(r, 300, 0, 1, randomBits) },
		"jumps":     func() []testSample { return genJumps(r, 200) },
		"one":       func() []testSample { return []testSample{{T: 5, V: math.Float64bits(1)}} },
		"two stale": func() []testSample { return []testSample{{T: 5, V: staleNaN}, {T: 6, V: staleNaN}} },
	}
	for name, gen := range gens {
		for kind := range numSTKinds {
			ss := gen()
			ts := make([]int64, len(ss))
			for i, s := range ss {
				ts[i] = s.T
			}
			cases[fmt.Sprintf("%s/st%d", name, kind)] = withST(ss, genST(r, ts, kind))
		}
	}
	return cases
}

func TestXOR2RoundTrip(t *testing.T) {
	for name, ss := range xor2Cases() {
		t.Run(name, func(t *testing.T) {
			c := encodeXOR2(t, ss)
			require.Equal(t, EncXOR2, c.Encoding())
			require.Equal(t, len(ss), c.NumSamples())
			got := collectXOR2(t, c.Iterator(nil))
			require.Equal(t, len(ss), len(got))
			for i := range ss {
				require.Equal(t, ss[i], got[i], "sample %d", i)
			}

			// Resuming from the bytes at any point continues the chunk.
			for _, k := range []int{0, 1, 2, 3, len(ss) / 3, 127, 128, len(ss) - 1} {
				if k < 0 || k > len(ss) {
					continue
				}
				requireResumes(t, c, ss, k)
			}

			// Seek lands on the first sample at or after the target.
			if len(ss) > 2 {
				it := c.Iterator(nil)
				mid := ss[len(ss)/2]
				require.Equal(t, ValFloat, it.Seek(mid.T))
				require.Equal(t, mid.T, it.AtT())
				require.Equal(t, mid.ST, it.(*XOR2Iterator).AtST())
				require.Equal(t, ValFloat, it.Seek(math.MinInt64), "Seek moved backwards")
				require.Equal(t, mid.T, it.AtT())
			}
		})
	}
}

// TestXOR2STHeader checks the header bits Prometheus sets, and that start
// timestamps that are all 0 cost no bits in the first 127 samples (after
// them, the forced first change at index 127 makes every sample carry one).
func TestXOR2STHeader(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	ss := genScrape(r, 200, 1000, 0, counterValues())
	ts := make([]int64, len(ss))
	for i, s := range ss {
		ts[i] = s.T
	}
	zero := encodeXOR2(t, withST(ss[:maxSTChangeOn], make([]int64, maxSTChangeOn)))
	require.Equal(t, byte(0), zero.Bytes()[stHeaderByte])
	zero = encodeXOR2(t, withST(ss, make([]int64, len(ss))))
	require.Equal(t, byte(maxSTChangeOn), zero.Bytes()[stHeaderByte])

	constant := encodeXOR2(t, withST(ss, genST(r, ts, 1)))
	require.Equal(t, byte(stKnownBit|maxSTChangeOn), constant.Bytes()[stHeaderByte], "constant ST: known, forced change at 127")

	sts := make([]int64, len(ss))
	sts[5] = 77
	sts[6] = 77
	late := encodeXOR2(t, withST(ss, sts))
	require.Equal(t, byte(5), late.Bytes()[stHeaderByte])
	got := collectXOR2(t, late.Iterator(nil))
	for i := range got {
		require.Equal(t, sts[i], got[i].ST, "sample %d", i)
	}
}

// TestXOR2IteratorSnapshot checks that an iterator decodes the chunk as it
// was when created, although later appends change the ST header byte.
func TestXOR2IteratorSnapshot(t *testing.T) {
	c := NewXOR2Chunk()
	app, err := c.XOR2Appender()
	require.NoError(t, err)
	for i := range int64(10) {
		app.AppendST(0, 1000*i, float64(i))
	}
	it := c.Iterator(nil)
	app.AppendST(500, 10_000, 10) // first ST change, at index 10
	app.AppendST(600, 11_000, 11)
	require.Equal(t, byte(10), c.Bytes()[stHeaderByte])
	got := collectXOR2(t, it)
	require.Len(t, got, 10)
	for i, s := range got {
		require.Equal(t, int64(0), s.ST)
		require.Equal(t, int64(i)*1000, s.T)
	}
	got = collectXOR2(t, c.Iterator(it))
	require.Len(t, got, 12)
	require.Equal(t, int64(500), got[10].ST)
	require.Equal(t, int64(600), got[11].ST)
}

func TestXOR2FromDataErrors(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":               nil,
		"short":               {0, 0},
		"no samples but data": {0, 0, 0, 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := FromData(EncXOR2, b)
			requireCorrupt(t, err)
		})
	}
	// Truncated samples fail in the iterator and in Appender.
	c := encodeXOR2(t, withST(genScrape(rand.New(rand.NewPCG(1, 1)), 20, 0, 0, gaugeValues), make([]int64, 20)))
	b := c.Bytes()[:len(c.Bytes())-3]
	fd, err := FromData(EncXOR2, b)
	require.NoError(t, err)
	it := fd.Iterator(nil)
	for it.Next() != ValNone {
	}
	requireCorrupt(t, it.Err())
	_, err = fd.(*XOR2Chunk).XOR2Appender()
	requireCorrupt(t, err)
}

func TestXOR2Full(t *testing.T) {
	c := NewXOR2Chunk()
	app, err := c.XOR2Appender()
	require.NoError(t, err)
	for i := range int64(MaxSamples + 1) {
		app.AppendST(i/1000, i, 1)
	}
	require.Equal(t, MaxSamples, c.NumSamples(), "an append to a full chunk is ignored")
	it := c.Iterator(nil)
	n := 0
	for it.Next() != ValNone {
		n++
	}
	require.NoError(t, it.Err())
	require.Equal(t, MaxSamples, n)
}

// stSamplesFromFuzz turns fuzz input into samples with start timestamps:
// 24 bytes per sample (time, value bits, ST), sorted by time without
// duplicate times.
func stSamplesFromFuzz(data []byte) []stSample {
	var flat []byte
	var sts []int64
	for ; len(data) >= 24; data = data[24:] {
		flat = append(flat, data[:16]...)
		sts = append(sts, int64(data[16])|int64(data[17])<<8|int64(data[18])<<16|int64(int8(data[23]))<<56)
	}
	ss := samplesFromFuzz(flat) // sorted: ST order follows the input's loosely
	return withST(ss, sts[:len(ss)])
}

// FuzzXOR2RoundTrip encodes arbitrary samples with start timestamps and
// checks they decode to the same bits, also after resuming the chunk from
// its bytes at any point (see requireResumes).
func FuzzXOR2RoundTrip(f *testing.F) {
	f.Add(uint8(3), bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 9))
	f.Add(uint8(0), bytes.Repeat([]byte{0xff, 0, 0x80, 0, 3}, 40))
	f.Fuzz(func(t *testing.T, split uint8, data []byte) {
		ss := stSamplesFromFuzz(data)
		c := encodeXOR2(t, ss)
		got := collectXOR2(t, c.Iterator(nil))
		require.Equal(t, len(ss), len(got))
		for i := range ss {
			require.Equal(t, ss[i], got[i], "sample %d", i)
		}
		requireResumes(t, c, ss, min(int(split), len(ss)))
	})
}

// FuzzXOR2Decode feeds arbitrary bytes to the decoder: it must not panic,
// must stop after at most the header's count of samples, and when Appender
// accepts the bytes, an appended sample must decode after the old ones.
func FuzzXOR2Decode(f *testing.F) {
	for _, ss := range xor2Cases() {
		if len(ss) <= 40 {
			f.Add(bytes.Clone(encodeXOR2(f, ss).Bytes()))
		} else {
			f.Add(bytes.Clone(encodeXOR2(f, ss[:40]).Bytes()))
		}
	}
	f.Add([]byte{0, 1, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{0, 3, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := FromData(EncXOR2, data)
		if err != nil {
			requireCorrupt(t, err)
			return
		}
		var got []stSample
		it := c.Iterator(nil)
		for it.Next() != ValNone {
			ts, v := it.At()
			got = append(got, stSample{testSample{T: ts, V: math.Float64bits(v)}, it.(*XOR2Iterator).AtST()})
			require.LessOrEqual(t, len(got), c.NumSamples(), "decoded more than the header's samples")
		}
		decodeErr := it.Err()
		if decodeErr != nil {
			requireCorrupt(t, decodeErr)
		} else {
			require.Equal(t, c.NumSamples(), len(got), "samples decoded without error")
		}
		require.False(t, it.Next() != ValNone || it.Seek(math.MinInt64) != ValNone, "iterator moved after its end")

		orig := bytes.Clone(data)
		app, err := c.(*XOR2Chunk).XOR2Appender()
		require.Equal(t, orig, data, "Appender modified the FromData bytes")
		if err != nil {
			requireCorrupt(t, err)
			return
		}
		require.NoError(t, decodeErr, "Appender accepted bytes the iterator rejected")
		if len(got) == MaxSamples || (len(got) > 0 && got[len(got)-1].T == math.MaxInt64) {
			return
		}
		next := stSample{testSample{T: math.MinInt64, V: staleNaN}, 42}
		if len(got) > 0 {
			next.T = got[len(got)-1].T + 1
		}
		app.AppendST(next.ST, next.T, math.Float64frombits(next.V))
		again := collectXOR2(t, c.Iterator(nil))
		require.Equal(t, append(got, next), again)
	})
}

// concST is the start timestamp of sample i of the XOR2 concurrency test:
// 0 for the first 50 samples of each 200-sample chunk, so that the ST
// header byte changes while readers iterate the chunk, then moving in steps.
func concST(i int) int64 {
	if i%200 < 50 {
		return 0
	}
	return int64(i/37) * 1000
}

// TestXOR2ConcurrentAppendIterate is TestXORConcurrentAppendIterate for
// XOR2 chunks with start timestamps: iterators created under the lock must
// yield exactly the samples, start timestamps included, appended before.
func TestXOR2ConcurrentAppendIterate(t *testing.T) {
	const (
		total     = 30_000
		perChunk  = 200
		readers   = 2
		minChecks = 100
	)
	var (
		mu   sync.Mutex // protects cs, app, n
		cs   []*XOR2Chunk
		app  *XOR2Appender
		n    int
		done atomic.Bool
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := range total {
			mu.Lock()
			if i%perChunk == 0 {
				if len(cs) > 0 {
					cs[len(cs)-1].Compact()
				}
				c := NewXOR2Chunk()
				a, err := c.XOR2Appender()
				if !assert.NoError(t, err) {
					mu.Unlock()
					return
				}
				cs, app = append(cs, c), a
			}
			ts, v := concSample(i)
			app.AppendST(concST(i), ts, v)
			n++
			mu.Unlock()
		}
	}()
	var checks atomic.Int64
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 43))
			var it Iterator
			for local := 0; !done.Load() || local < minChecks; {
				mu.Lock()
				if len(cs) == 0 {
					mu.Unlock()
					continue
				}
				k := len(cs) - 1
				if rng.IntN(4) == 0 {
					k = rng.IntN(len(cs))
				}
				want := min(perChunk, n-k*perChunk)
				it = cs[k].Iterator(it)
				mu.Unlock()
				got := 0
				for it.Next() != ValNone {
					ts, v := it.At()
					i := k*perChunk + got
					wt, wv := concSample(i)
					if ts != wt || math.Float64bits(v) != math.Float64bits(wv) || it.(*XOR2Iterator).AtST() != concST(i) {
						t.Errorf("chunk %d sample %d: got (%d, %d, %g), want (%d, %d, %g)", k, got, it.(*XOR2Iterator).AtST(), ts, v, concST(i), wt, wv)
						return
					}
					got++
				}
				if !assert.NoError(t, it.Err(), "chunk %d", k) || !assert.Equal(t, want, got, "chunk %d", k) {
					return
				}
				checks.Add(1)
				local++
			}
		}()
	}
	wg.Wait()
	require.GreaterOrEqual(t, checks.Load(), int64(readers*minChecks))
}

// TestAtSTWithoutST checks that the iterators of the encodings without
// start timestamps report 0.
func TestAtSTWithoutST(t *testing.T) {
	type atST interface{ AtST() int64 }
	x := encode(t, []testSample{{T: 1, V: 1}})
	it := x.Iterator(nil)
	require.Equal(t, ValFloat, it.Next())
	require.Equal(t, int64(0), it.(atST).AtST())
	h := NewHistogramChunk()
	ha, err := h.Appender()
	require.NoError(t, err)
	_, _, _, err = ha.AppendHistogramST(5, 1, &histogram.Histogram{Count: 1, ZeroCount: 1})
	require.NoError(t, err)
	hit := h.Iterator(nil)
	require.Equal(t, ValHistogram, hit.Next())
	require.Equal(t, int64(0), hit.(atST).AtST(), "plain histogram chunks drop ST")
	require.Equal(t, int64(0), NewNopIterator().(atST).AtST())
}
