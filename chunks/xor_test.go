package chunks

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestXORRoundTrip(t *testing.T) {
	const seed = 20240611
	r := rand.New(rand.NewPCG(seed, 1))
	cases := []struct {
		name string
		ss   []testSample
	}{
		{"single sample", []testSample{{T: 1234, V: math.Float64bits(5)}}},
		{"two samples", []testSample{{T: -5, V: math.Float64bits(5)}, {T: 7, V: math.Float64bits(-5)}}},
		{"regular scrape gauge", genScrape(r, 120, 1_700_000_000_000, 0, gaugeValues)},
		{"jittered scrape gauge", genScrape(r, 120, 1_700_000_000_000, 50, gaugeValues)},
		{"jittered counter", genScrape(r, 120, 1_700_000_000_000, 200, counterValues())},
		{"constant", genScrape(r, 240, 0, 0, constValues(42))},
		{"special values", genScrape(r, 200, 1_000, 10, specialValues)},
		{"random bits", genScrape(r, 300, 0, 7000, randomBits)},
		{"negative times", genScrape(r, 120, -10_000_000, 100, gaugeValues)},
		{"huge jumps", genJumps(r, 500)},
		{"extreme times", []testSample{
			{T: math.MinInt64, V: 0}, {T: math.MinInt64 + 1, V: 1}, {T: 0, V: 2}, {T: math.MaxInt64 - 1, V: 3}, {T: math.MaxInt64, V: 4},
		}},
		{"MinInt64 to MaxInt64", []testSample{{T: math.MinInt64, V: staleNaN}, {T: math.MaxInt64, V: staleNaN}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := encode(t, tc.ss)
			require.Equal(t, len(tc.ss), c.NumSamples(), "NumSamples (seed %d)", seed)
			requireSamples(t, tc.ss, collect(t, c.Iterator(nil)))

			fd, err := FromData(EncXOR, bytes.Clone(c.Bytes()))
			require.NoError(t, err)
			requireSamples(t, tc.ss, collect(t, fd.Iterator(nil)))
		})
	}
}

// TestDoDBucketWidths checks the number of bits each timestamp
// delta-of-delta costs, at the edges of every bucket. Values are constant,
// so each sample after the second costs the dod plus one value bit.
func TestDoDBucketWidths(t *testing.T) {
	cases := []struct {
		dod  int64
		bits int
	}{
		{0, 1},
		{1, 16}, {-1, 16},
		{8192, 16}, {-8191, 16}, // 14-bit bucket: [-(2^13-1), 2^13]
		{8193, 20}, {-8192, 20},
		{65536, 20}, {-65535, 20}, // 17-bit bucket
		{65537, 24}, {-65536, 24},
		{524288, 24}, {-524287, 24}, // 20-bit bucket
		{524289, 68}, {-524288, 68},
		{1 << 40, 68}, {-(1 << 40), 68},
	}
	for _, tc := range cases {
		const d0 = int64(1) << 30 // first delta, large enough for negative dods
		ss := []testSample{{T: 0, V: 0}, {T: d0, V: 0}, {T: 2*d0 + tc.dod, V: 0}}
		base := encode(t, ss[:2])
		c := encode(t, ss)
		// The 2-sample chunk ends with the second value's '0' bit, the
		// first bit of a fresh byte after the byte-aligned uvarint; the
		// third sample adds the dod and another '0' value bit.
		baseBits := len(base.Bytes())*8 - 7
		wantLen := (baseBits + tc.bits + 1 + 7) / 8
		require.Len(t, c.Bytes(), wantLen, "dod %d: chunk length (dod costing %d bits)", tc.dod, tc.bits)
		requireSamples(t, ss, collect(t, c.Iterator(nil)))
	}
}

func TestXORSeek(t *testing.T) {
	ss := []testSample{{T: 10, V: 1}, {T: 20, V: 2}, {T: 30, V: 3}, {T: 40, V: 4}}
	type step struct {
		seek   bool // Seek(arg) if true, else Next()
		arg    int64
		ok     bool
		wantAt int64
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"seek before first", []step{{true, 0, true, 10}}},
		{"seek exact", []step{{true, 20, true, 20}}},
		{"seek between", []step{{true, 25, true, 30}}},
		{"seek last", []step{{true, 40, true, 40}}},
		{"seek past end", []step{{true, 41, false, 0}}},
		{"seek past end stays exhausted", []step{{true, 41, false, 0}, {true, 0, false, 0}, {false, 0, false, 0}}},
		{"seek does not move when current qualifies", []step{{false, 0, true, 10}, {false, 0, true, 20}, {true, 15, true, 20}, {true, 20, true, 20}}},
		{"seek never moves backwards", []step{{true, 30, true, 30}, {true, 10, true, 30}, {false, 0, true, 40}}},
		{"seek after next to later", []step{{false, 0, true, 10}, {true, 31, true, 40}, {false, 0, false, 0}}},
		{"next to end then seek", []step{{true, 40, true, 40}, {false, 0, false, 0}, {true, 40, false, 0}}},
		{"seek min int", []step{{true, math.MinInt64, true, 10}, {true, math.MinInt64, true, 10}}},
	}
	c := encode(t, ss)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := c.Iterator(nil)
			for i, s := range tc.steps {
				var ok bool
				if s.seek {
					ok = it.Seek(s.arg) != ValNone
				} else {
					ok = it.Next() != ValNone
				}
				require.Equal(t, s.ok, ok, "step %d", i)
				if ok {
					at, _ := it.At()
					require.Equal(t, s.wantAt, at, "step %d: At()", i)
				}
			}
			require.NoError(t, it.Err())
		})
	}
	t.Run("empty chunk", func(t *testing.T) {
		require.False(t, NewXORChunk().Iterator(nil).Seek(0) != ValNone, "Seek on empty chunk returned true")
	})
}

// TestXORAppenderResume checks that an appender obtained from a chunk read
// back from bytes continues exactly as if all samples had gone through one
// appender, for every split point, and never writes to the caller's bytes.
func TestXORAppenderResume(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	series := map[string][]testSample{
		"gauge":    genScrape(r, 60, 1_700_000_000_000, 50, gaugeValues),
		"counter":  genScrape(r, 60, 0, 300, counterValues()),
		"constant": genScrape(r, 30, 0, 0, constValues(1)),
		"special":  genScrape(r, 60, -1000, 5, specialValues),
		"random":   genScrape(r, 60, 0, 7000, randomBits),
		"jumps":    genJumps(r, 60),
		// A window is set only after the constant prefix: the resumed
		// appender must still know it has none.
		"constant then change": append(genScrape(r, 5, 0, 0, constValues(3)), testSample{T: 100000, V: 12345}, testSample{T: 110000, V: 99}),
	}
	for name, ss := range series {
		t.Run(name, func(t *testing.T) {
			want := encode(t, ss).Bytes()
			for k := 0; k <= len(ss); k++ {
				src := bytes.Clone(encode(t, ss[:k]).Bytes())
				orig := bytes.Clone(src)
				c, err := FromData(EncXOR, src[:len(src):len(src)+0])
				require.NoError(t, err)
				appendAll(mustAppender(t, c), ss[k:])
				require.Equal(t, want, c.Bytes(), "split %d: resumed chunk differs", k)
				require.Equal(t, orig, src, "split %d: Appender wrote to the FromData bytes", k)
				// A second Appender on our own chunk resumes too.
				c2 := encode(t, ss[:k])
				appendAll(mustAppender(t, c2), ss[k:])
				requireBytes(t, want, c2.Bytes())
			}
		})
	}
}

// TestXORAppenderResumeOldPadding resumes a chunk as older Prometheus
// versions wrote it, with a zero byte after a byte-aligned last field: the
// continuation must fill that byte and match a fresh encoding.
func TestXORAppenderResumeOldPadding(t *testing.T) {
	ss := []testSample{{T: 1000, V: math.Float64bits(1)}, {T: 16000, V: math.Float64bits(1)}, {T: 31010, V: math.Float64bits(2)}}
	old := append(bytes.Clone(encode(t, ss[:1]).Bytes()), 0)
	c, err := FromData(EncXOR, old)
	require.NoError(t, err)
	requireSamples(t, ss[:1], collect(t, c.Iterator(nil)))
	appendAll(mustAppender(t, c), ss[1:])
	requireBytes(t, encode(t, ss).Bytes(), c.Bytes())
}

func TestXORAppenderRejectsBadTail(t *testing.T) {
	valid := encode(t, []testSample{{T: 0, V: 0}, {T: 10, V: 0x0FF0 << 48}}).Bytes() // ends 5 bits into its last byte
	cases := []struct {
		name string
		data []byte
	}{
		{"two stray bytes", append(bytes.Clone(valid), 0, 0)},
		{"stray byte after aligned end", append(append(bytes.Clone(encode(t, []testSample{{T: 1, V: 1}}).Bytes()), 0), 0)},
		{"non-zero padding", func() []byte { b := bytes.Clone(valid); b[len(b)-1] |= 1; return b }()},
		{"non-zero pad byte", append(bytes.Clone(encode(t, []testSample{{T: 1, V: 1}}).Bytes()), 0x10)},
		{"empty chunk with tail", []byte{0, 0, 0, 0}},
		{"truncated", valid[:len(valid)-1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromData(EncXOR, tc.data)
			require.NoError(t, err)
			app, err := c.(*XORChunk).Appender()
			require.Nil(t, app, "got an appender")
			requireCorrupt(t, err)
		})
	}
}

func TestXORCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ss := genScrape(r, 50, 1_700_000_000_000, 2000, randomBits)
	valid := encode(t, ss).Bytes()

	t.Run("every truncation", func(t *testing.T) {
		for n := 2; n < len(valid); n++ {
			c, err := FromData(EncXOR, valid[:n])
			require.NoError(t, err)
			it := c.Iterator(nil)
			i := 0
			for it.Next() != ValNone {
				ts, v := it.At()
				require.Equal(t, ss[i], testSample{T: ts, V: math.Float64bits(v)}, "len %d: sample %d", n, i)
				i++
			}
			requireCorrupt(t, it.Err())
			require.Less(t, i, len(ss), "len %d: decoded all samples from a truncated chunk", n)
			require.False(t, it.Next() != ValNone || it.Seek(math.MinInt64) != ValNone, "iterator moved after an error")
		}
	})

	cases := []struct {
		name string
		data []byte
	}{
		{"header claims more", append([]byte{0x01, 0x00}, valid[2:]...)},
		{"header only", []byte{0x00, 0x05}},
		{"varint overflow", []byte{0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"varint tenth byte too big", []byte{0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"uvarint overflow", append(append([]byte{0x00, 0x02, 0x00}, make([]byte, 8)...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)},
		// '11' leading=31 (11111) sig=63 (111111): 94 bits.
		{"window wider than 64 bits", append(append([]byte{0x00, 0x02, 0x00}, make([]byte, 8)...), 0x01, 0xFF, 0xF8, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromData(EncXOR, tc.data)
			require.NoError(t, err)
			it := c.Iterator(nil)
			for it.Next() != ValNone {
			}
			requireCorrupt(t, it.Err())
			_, err = c.(*XORChunk).Appender()
			requireCorrupt(t, err)
		})
	}
}

func TestFromData(t *testing.T) {
	cases := []struct {
		name string
		enc  Encoding
		data []byte
		want error
	}{
		{"xor", EncXOR, []byte{0, 0}, nil},
		{"histogram", EncHistogram, []byte{0, 0, 0}, nil},
		{"float histogram", EncFloatHistogram, []byte{0, 0, 0}, nil},
		{"short histogram", EncHistogram, []byte{0, 0}, ErrCorrupt},
		{"short float histogram", EncFloatHistogram, nil, ErrCorrupt},
		{"none", EncNone, []byte{0, 0}, ErrUnknownEncoding},
		{"future", Encoding(7), []byte{0, 0}, ErrUnknownEncoding},
		{"nil data", EncXOR, nil, ErrCorrupt},
		{"one byte", EncXOR, []byte{0}, ErrCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromData(tc.enc, tc.data)
			if tc.want == nil {
				require.NoError(t, err)
				require.NotNil(t, c)
				require.Equal(t, tc.enc, c.Encoding())
				require.Zero(t, c.NumSamples())
				return
			}
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, c, "chunk with err %v", err)
		})
	}
}

func TestEncodingString(t *testing.T) {
	for e, want := range map[Encoding]string{EncNone: "none", EncXOR: "XOR", EncHistogram: "histogram", EncFloatHistogram: "floathistogram", EncXOR2: "XOR2", EncHistogramST: "histogramST", EncFloatHistogramST: "floathistogramST", 7: "Encoding(7)", 255: "Encoding(255)"} {
		require.Equal(t, want, e.String(), "%d", uint8(e))
	}
}

func TestNopAndErrIterators(t *testing.T) {
	boom := errors.New("boom")
	for name, tc := range map[string]struct {
		it  Iterator
		err error
	}{"nop": {NewNopIterator(), nil}, "err": {NewErrIterator(boom), boom}} {
		t.Run(name, func(t *testing.T) {
			require.False(t, tc.it.Next() != ValNone || tc.it.Seek(math.MinInt64) != ValNone, "empty iterator advanced")
			require.Equal(t, tc.err, tc.it.Err())
			// Not reusable by a chunk, but accepted as reuse.
			ss := []testSample{{T: 1, V: 2}}
			requireSamples(t, ss, collect(t, encode(t, ss).Iterator(tc.it)))
		})
	}
}

func TestIteratorReuse(t *testing.T) {
	a := encode(t, []testSample{{T: 1, V: 1}, {T: 2, V: 2}, {T: 3, V: 3}})
	b := encode(t, []testSample{{T: 10, V: 10}, {T: 20, V: 20}})
	it := a.Iterator(nil)
	for range 2 {
		require.Equal(t, ValFloat, it.Next(), "short")
	}
	it2 := b.Iterator(it)
	require.Same(t, it, it2, "iterator not reused")
	requireSamples(t, []testSample{{T: 10, V: 10}, {T: 20, V: 20}}, collect(t, it2))
	// Reuse after an error clears the error.
	bad, _ := FromData(EncXOR, []byte{0, 9})
	it3 := bad.Iterator(it2)
	for it3.Next() != ValNone {
	}
	requireCorrupt(t, it3.Err())
	requireSamples(t, []testSample{{T: 1, V: 1}, {T: 2, V: 2}, {T: 3, V: 3}}, collect(t, a.Iterator(it3)))
}

func TestXORCompact(t *testing.T) {
	ss := genScrape(rand.New(rand.NewPCG(1, 1)), 20, 0, 0, gaugeValues)
	c := encode(t, ss)
	// Give it more slack than Compact tolerates (growth may have left less).
	c.w.buf = append(make([]byte, 0, len(c.w.buf)+2*compactSlack), c.w.buf...)
	before := c.Iterator(nil)
	want := bytes.Clone(c.Bytes())
	c.Compact()
	require.Equal(t, len(c.Bytes()), cap(c.Bytes()), "cap after Compact")
	requireBytes(t, want, c.Bytes())
	requireSamples(t, ss, collect(t, before))
	// Appending after Compact still works.
	more := []testSample{{T: ss[len(ss)-1].T + 15000, V: math.Float64bits(1)}}
	app := mustAppender(t, c)
	appendAll(app, more)
	requireSamples(t, append(ss, more...), collect(t, c.Iterator(nil)))
	// Little slack: no copy.
	c2 := &XORChunk{w: bitWriter{buf: make([]byte, headerSize, headerSize+compactSlack)}}
	c2.Compact()
	require.Equal(t, headerSize+compactSlack, cap(c2.Bytes()), "Compact copied a chunk with little slack")
}

func TestXORMaxSamples(t *testing.T) {
	c := NewXORChunk()
	app := mustAppender(t, c)
	for i := range MaxSamples + 10 {
		app.Append(int64(i), float64(i%7))
	}
	require.Equal(t, MaxSamples, c.NumSamples())
	it := c.Iterator(nil)
	n := 0
	for it.Next() != ValNone {
		ts, v := it.At()
		require.Equal(t, int64(n), ts, "sample %d", n)
		require.Equal(t, float64(n%7), v, "sample %d", n)
		n++
	}
	require.NoError(t, it.Err())
	require.Equal(t, MaxSamples, n, "decoded")
}

func TestXORZeroValue(t *testing.T) {
	var c XORChunk
	require.Zero(t, c.NumSamples(), "zero chunk not empty")
	require.False(t, c.Iterator(nil).Next() != ValNone, "zero chunk not empty")
	ss := []testSample{{T: 5, V: 5}, {T: 6, V: 6}}
	appendAll(mustAppender(t, &c), ss)
	requireSamples(t, ss, collect(t, c.Iterator(nil)))
}

func TestXORAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	ss := genScrape(r, 120, 1_700_000_000_000, 100, gaugeValues)

	// Append within capacity allocates nothing.
	c := &XORChunk{w: bitWriter{buf: make([]byte, headerSize, 1<<16)}}
	app := mustAppender(t, c)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		app.Append(int64(i)*15000, float64(i%10))
		i++
	})
	require.Zero(t, allocs, "Append allocs")

	// Iterating with a reused iterator allocates nothing.
	c2 := encode(t, ss)
	it := c2.Iterator(nil)
	allocs = testing.AllocsPerRun(100, func() {
		it = c2.Iterator(it)
		for it.Next() != ValNone {
		}
		if it.Seek(math.MaxInt64) != ValNone {
			panic("unexpected")
		}
	})
	require.Zero(t, allocs, "Iterator reuse + Next allocs")
	require.NoError(t, it.Err())
}
