package wlog

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/vfs"
)

// benchRecords returns realistic records: Samples records of 100 samples
// each (about 1.2 KB), as a head commit would log.
func benchRecords(n int) [][]byte {
	rng := rand.New(rand.NewPCG(11, 11))
	var enc record.Encoder
	recs := make([][]byte, n)
	samples := make([]record.RefSample, 100)
	for i := range recs {
		for j := range samples {
			samples[j] = record.RefSample{Ref: uint64(j*7 + i%5), T: 1_700_000_000_000 + int64(i)*15000, V: float64(rng.IntN(1000))}
		}
		recs[i] = enc.Samples(samples, nil)
	}
	return recs
}

func BenchmarkLog(b *testing.B) {
	recs := benchRecords(1000)
	size := 0
	for _, r := range recs {
		size += len(r)
	}
	for _, compression := range []CompressionType{CompressionNone, CompressionSnappy} {
		b.Run(fmt.Sprintf("compression=%s", compression), func(b *testing.B) {
			w, err := Open(nil, nil, vfs.OS(), b.TempDir(), Options{Compression: compression})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			b.SetBytes(int64(size / len(recs)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := w.Log(recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func BenchmarkReader(b *testing.B) {
	recs := benchRecords(1000)
	for _, compression := range []CompressionType{CompressionNone, CompressionSnappy} {
		b.Run(fmt.Sprintf("compression=%s", compression), func(b *testing.B) {
			dir := b.TempDir()
			w, err := Open(nil, nil, vfs.OS(), dir, Options{Compression: compression})
			if err != nil {
				b.Fatal(err)
			}
			size := 0
			for range 20 {
				for _, r := range recs {
					size += len(r)
				}
				if err := w.Log(recs...); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				sr, err := NewSegmentsReader(vfs.OS(), dir)
				if err != nil {
					b.Fatal(err)
				}
				r := NewReader(sr)
				for r.Next() {
					n++
				}
				if err := r.Err(); err != nil {
					b.Fatal(err)
				}
				sr.Close()
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
