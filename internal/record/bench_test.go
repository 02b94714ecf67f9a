package record

import (
	"fmt"
	"testing"

	"github.com/isotsdb/tsdb/labels"
)

func benchSamples(n int) []RefSample {
	s := make([]RefSample, n)
	for i := range s {
		s[i] = RefSample{Ref: uint64(1000 + i), T: 1_700_000_000_000 + int64(i%7), V: float64(i) * 1.5}
	}
	return s
}

func benchSeries(n int) []RefSeries {
	s := make([]RefSeries, n)
	for i := range s {
		s[i] = RefSeries{Ref: uint64(1000 + i), Labels: labels.FromStrings(
			"__name__", "http_requests_total", "instance", fmt.Sprintf("host-%d:9100", i),
			"job", "node", "method", "GET", "status", "200")}
	}
	return s
}

func BenchmarkEncodeSamples(b *testing.B) {
	var enc Encoder
	s := benchSamples(1000)
	buf := enc.Samples(s, nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = enc.Samples(s, buf[:0])
	}
	b.ReportMetric(float64(len(buf))/float64(len(s)), "bytes/sample")
}

func BenchmarkDecodeSamples(b *testing.B) {
	var enc Encoder
	var dec Decoder
	rec := enc.Samples(benchSamples(1000), nil)
	out := make([]RefSample, 0, 1000)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = dec.Samples(rec, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeSeries(b *testing.B) {
	var enc Encoder
	s := benchSeries(100)
	buf := enc.Series(s, nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = enc.Series(s, buf[:0])
	}
}

func BenchmarkDecodeSeries(b *testing.B) {
	var enc Encoder
	var dec Decoder
	rec := enc.Series(benchSeries(100), nil)
	out := make([]RefSeries, 0, 100)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = dec.Series(rec, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
