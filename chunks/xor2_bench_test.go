package chunks

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchSTs are the start timestamps of the XOR2 benchmarks: none, one
// constant cumulative start, and each sample's previous time (delta
// temporality).
func benchSTs(ss []testSample) map[string][]int64 {
	constant, previous := make([]int64, len(ss)), make([]int64, len(ss))
	for i, s := range ss {
		constant[i] = ss[0].T - 3_600_000
		previous[i] = s.T - 15_000
		if i > 0 {
			previous[i] = ss[i-1].T
		}
	}
	return map[string][]int64{"none": make([]int64, len(ss)), "constant": constant, "previous": previous}
}

func BenchmarkXOR2Append(b *testing.B) {
	for name, ss := range benchSeries() {
		vs := make([]float64, len(ss))
		for i, s := range ss {
			vs[i] = math.Float64frombits(s.V)
		}
		for stName, sts := range benchSTs(ss) {
			b.Run(name+"/st="+stName, func(b *testing.B) {
				b.ReportAllocs()
				var size int
				for b.Loop() {
					c := NewXOR2Chunk()
					app, _ := c.XOR2Appender()
					for i, s := range ss {
						app.AppendST(sts[i], s.T, vs[i])
					}
					size = len(c.Bytes())
				}
				n := float64(b.N) * float64(len(ss))
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/sample")
				b.ReportMetric(float64(size)/float64(len(ss)), "bytes/sample")
			})
		}
	}
}

func BenchmarkXOR2Iterate(b *testing.B) {
	for name, ss := range benchSeries() {
		for stName, sts := range benchSTs(ss) {
			c := encodeXOR2(b, withST(ss, sts))
			b.Run(name+"/st="+stName, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.Bytes())))
				var it Iterator
				var lastT, lastST int64
				for b.Loop() {
					it = c.Iterator(it)
					for it.Next() != ValNone {
						lastT, _ = it.At()
						lastST = it.(*XOR2Iterator).AtST()
					}
				}
				require.NoError(b, it.Err())
				require.Equal(b, ss[len(ss)-1].T, lastT, "last time")
				require.Equal(b, sts[len(sts)-1], lastST, "last start time")
				b.ReportMetric(float64(b.N)*float64(len(ss))/b.Elapsed().Seconds(), "samples/s")
			})
		}
	}
}
