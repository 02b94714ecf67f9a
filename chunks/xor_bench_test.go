package chunks

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchSeries are realistic 120-sample chunks: 15 s scrapes with a little
// jitter, of the kinds of series a Prometheus server holds.
func benchSeries() map[string][]testSample {
	r := rand.New(rand.NewPCG(1, 2))
	return map[string][]testSample{
		"gauge":    genScrape(r, 120, 1_700_000_000_000, 50, gaugeValues),
		"counter":  genScrape(r, 120, 1_700_000_000_000, 50, counterValues()),
		"constant": genScrape(r, 120, 1_700_000_000_000, 0, constValues(1)),
		"random":   genScrape(r, 120, 1_700_000_000_000, 50, randomBits),
	}
}

func BenchmarkXORAppend(b *testing.B) {
	for name, ss := range benchSeries() {
		vs := make([]float64, len(ss))
		for i, s := range ss {
			vs[i] = math.Float64frombits(s.V)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				c := NewXORChunk()
				app, _ := c.Appender()
				for i, s := range ss {
					app.Append(s.T, vs[i])
				}
				size = len(c.Bytes())
			}
			n := float64(b.N) * float64(len(ss))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/sample")
			b.ReportMetric(float64(size)/float64(len(ss)), "bytes/sample")
		})
	}
}

func BenchmarkXORIterate(b *testing.B) {
	for name, ss := range benchSeries() {
		c := encode(b, ss)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.Bytes())))
			var it Iterator
			var lastT int64
			for b.Loop() {
				it = c.Iterator(it)
				for it.Next() != ValNone {
					lastT, _ = it.At()
				}
			}
			require.NoError(b, it.Err())
			require.Equal(b, ss[len(ss)-1].T, lastT, "last time")
			b.ReportMetric(float64(b.N)*float64(len(ss))/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

func BenchmarkXORSeek(b *testing.B) {
	ss := benchSeries()["gauge"]
	c := encode(b, ss)
	target := ss[len(ss)*3/4].T
	b.ReportAllocs()
	var it Iterator
	for b.Loop() {
		it = c.Iterator(it)
		if it.Seek(target) == ValNone {
			b.Fatal("seek failed")
		}
	}
}

func BenchmarkXORAppender(b *testing.B) {
	// Resuming a full chunk from its bytes (decodes all 120 samples).
	data := encode(b, benchSeries()["gauge"]).Bytes()
	b.ReportAllocs()
	for b.Loop() {
		c, _ := FromData(EncXOR, data)
		if _, err := c.(*XORChunk).Appender(); err != nil {
			b.Fatal(err)
		}
	}
}
