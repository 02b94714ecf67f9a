package chunks

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestXORTimes checks XORTimes.Index against decoding, on chunks of every
// kind of sample, looked up after every append (so the index resumes the
// decoder at every bit offset) and after bursts of appends, at the times
// of the samples and between them.
func TestXORTimes(t *testing.T) {
	const seed = 20261206
	r := rand.New(rand.NewPCG(seed, 9))
	cases := map[string][]testSample{
		"regular scrape gauge": genScrape(r, 120, 1_700_000_000_000, 0, gaugeValues),
		"jittered counter":     genScrape(r, 120, 1_700_000_000_000, 200, counterValues()),
		"constant":             genScrape(r, 240, 0, 0, constValues(42)),
		"special values":       genScrape(r, 200, 1_000, 10, specialValues),
		"random bits":          genScrape(r, 300, 0, 7000, randomBits),
		"negative times":       genScrape(r, 120, -10_000_000, 100, gaugeValues),
	}
	for name, ss := range cases {
		at := make(map[int64]int, len(ss))
		for j, smp := range ss {
			at[smp.T] = j
		}
		for _, burst := range []int{1, 7, len(ss)} {
			c := NewXORChunk()
			app, err := c.XORAppender()
			require.NoError(t, err)
			var x XORTimes
			for k := 0; k < len(ss); {
				for end := min(k+burst, len(ss)); k < end; k++ {
					app.Append(ss[k].T, math.Float64frombits(ss[k].V))
				}
				// Every time appended so far, and the times just around
				// them (the generators' times are strictly increasing).
				for j := range k {
					for _, d := range []int64{-1, 0, 1} {
						want, wantFound := at[ss[j].T+d]
						wantFound = wantFound && want < k
						i, found, ok := x.Index(c, ss[j].T+d)
						require.True(t, ok, "%s burst %d: not indexed (seed %d)", name, burst, seed)
						require.Equal(t, wantFound, found, "%s burst %d: found %d after %d samples (seed %d)", name, burst, ss[j].T+d, k, seed)
						if found {
							require.Equal(t, want, i, "%s burst %d: index of %d (seed %d)", name, burst, ss[j].T+d, seed)
						}
					}
				}
			}
			// The whole chunk against decoding it.
			for j := range ss {
				want, _ := decodeIndex(t, c, ss[j].T)
				i, found, ok := x.Index(c, ss[j].T)
				require.True(t, ok && found)
				require.Equal(t, want, i)
			}
			// Compact moves the bytes; the index stays right.
			c.Compact()
			i, found, ok := x.Index(c, ss[len(ss)-1].T)
			require.True(t, ok && found)
			require.Equal(t, len(ss)-1, i)
		}
	}
}

// decodeIndex is the reference for XORTimes.Index: the position of the
// sample of c at t by decoding c.
func decodeIndex(t *testing.T, c *XORChunk, ts int64) (int, bool) {
	it := c.Iterator(nil)
	for i := 0; it.Next() != ValNone; i++ {
		if it.AtT() == ts {
			return i, true
		}
	}
	require.NoError(t, it.Err())
	return 0, false
}

// TestXORTimesChunks checks that XORTimes starts over when asked about
// another chunk, and after Reset, and that an empty chunk has nothing.
func TestXORTimesChunks(t *testing.T) {
	a, b := encode(t, genScrape(rand.New(rand.NewPCG(1, 1)), 50, 0, 0, gaugeValues)), encode(t, genScrape(rand.New(rand.NewPCG(2, 2)), 50, 7_500, 0, gaugeValues))
	var x XORTimes
	_, found, ok := x.Index(NewXORChunk(), 0)
	require.True(t, ok)
	require.False(t, found)
	i, found, ok := x.Index(a, 15_000)
	require.True(t, ok && found)
	require.Equal(t, 1, i)
	_, found, ok = x.Index(b, 15_000)
	require.True(t, ok)
	require.False(t, found, "b has no sample at 15000")
	i, found, _ = x.Index(b, 7_500+15_000*3)
	require.True(t, found)
	require.Equal(t, 3, i)
	x.Reset()
	i, found, _ = x.Index(a, 15_000*49)
	require.True(t, found)
	require.Equal(t, 49, i)
	var zero XORChunk
	_, found, ok = x.Index(&zero, 0)
	require.True(t, ok)
	require.False(t, found)
}

// TestXORTimesCannotIndex checks that chunks XORTimes cannot index are
// reported so: samples more than math.MaxUint32 ms apart, times that do
// not increase, and undecodable bytes.
func TestXORTimesCannotIndex(t *testing.T) {
	wide := encode(t, []testSample{{T: 0}, {T: 1}, {T: math.MaxUint32 + 1}})
	var x XORTimes
	i, found, ok := x.Index(wide, 1)
	require.True(t, ok && found, "decoded up to 1 only")
	require.Equal(t, 1, i)
	_, _, ok = x.Index(wide, math.MaxUint32+1)
	require.False(t, ok, "samples 2^32 ms apart")
	_, _, ok = x.Index(wide, 1)
	require.False(t, ok, "not indexable stays so")

	// Decreasing times: Append does not check them.
	dec := encode(t, []testSample{{T: 10}, {T: 20}, {T: 15}})
	_, _, ok = x.Index(dec, 21)
	require.False(t, ok, "decreasing times")

	c, err := FromData(EncXOR, []byte{0, 3, 0x02})
	require.NoError(t, err)
	_, _, ok = x.Index(c.(*XORChunk), 1)
	require.False(t, ok, "truncated chunk")

	// A good chunk afterwards is indexed again.
	good := encode(t, []testSample{{T: 5}, {T: 6}})
	i, found, ok = x.Index(good, 6)
	require.True(t, ok && found)
	require.Equal(t, 1, i)
}

// TestXORAppenderNumSamples checks that the sample count an XORAppender
// keeps matches the chunk's header: after appends, for an appender
// resumed on the chunk, and at MaxSamples, where Append is ignored.
func TestXORAppenderNumSamples(t *testing.T) {
	c := NewXORChunk()
	app, err := c.XORAppender()
	require.NoError(t, err)
	require.Equal(t, 0, app.NumSamples())
	for i := range MaxSamples {
		app.Append(int64(i), float64(i%7))
		if i%4099 == 0 {
			require.Equal(t, c.NumSamples(), app.NumSamples())
			resumed, err := c.XORAppender()
			require.NoError(t, err)
			require.Equal(t, i+1, resumed.NumSamples())
			app = resumed
		}
	}
	require.Equal(t, MaxSamples, app.NumSamples())
	app.Append(MaxSamples, 1)
	require.Equal(t, MaxSamples, app.NumSamples())
	require.Equal(t, MaxSamples, c.NumSamples())
}

// fileChunk is an XOR chunk read in place from bytes that never change, as
// a chunk of a head chunk file is: another type than XORChunk.
type fileChunk struct{ b []byte }

func (c *fileChunk) Bytes() []byte                    { return c.b }
func (c *fileChunk) Encoding() Encoding               { return EncXOR }
func (c *fileChunk) NumSamples() int                  { return int(c.b[0])<<8 | int(c.b[1]) }
func (c *fileChunk) Iterator(reuse Iterator) Iterator { return XORIterator(c.b, reuse) }
func (c *fileChunk) Compact()                         {}

// TestXORTimesOtherChunks checks XORTimes on chunks of other types than
// XORChunk: an XOR chunk read from fixed bytes is indexed like the
// XORChunk it was copied from (every time, and the ones between), and a
// chunk of another encoding cannot be indexed.
func TestXORTimesOtherChunks(t *testing.T) {
	ss := genScrape(rand.New(rand.NewPCG(3, 3)), 120, 1_700_000_000_000, 300, counterValues())
	src := encode(t, ss)
	c := &fileChunk{b: slices.Clone(src.Bytes())}
	var x XORTimes
	for j := len(ss) - 1; j >= 0; j-- { // newest first: one extend, then lookups below it
		for _, d := range []int64{-1, 0, 1} {
			want, wantFound := decodeIndex(t, src, ss[j].T+d)
			i, found, ok := x.Index(c, ss[j].T+d)
			require.True(t, ok)
			require.Equal(t, wantFound, found, "time %d", ss[j].T+d)
			if found {
				require.Equal(t, want, i)
			}
		}
	}
	require.Equal(t, Chunk(c), x.Chunk())

	h := NewXOR2Chunk()
	_, _, ok := x.Index(h, ss[0].T)
	require.False(t, ok, "an XOR2 chunk is not indexed")
	i, found, ok := x.Index(c, ss[5].T)
	require.True(t, ok && found, "indexed again after another encoding")
	require.Equal(t, 5, i)
}
