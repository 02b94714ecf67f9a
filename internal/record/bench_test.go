package record

import (
	"fmt"
	"testing"

	"github.com/isotsdb/tsdb/histogram"
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

// benchHistograms returns n exponential histograms of 20 buckets in two
// spans, one sample per series.
func benchHistograms(n int) []RefHistogramSample {
	s := make([]RefHistogramSample, n)
	for i := range s {
		buckets := make([]int64, 20)
		for j := range buckets {
			buckets[j] = int64((i+j)%5) - 2
		}
		buckets[0] = int64(10 + i%7)
		s[i] = RefHistogramSample{Ref: uint64(1000 + i), T: 1_700_000_000_000 + int64(i%7), H: &histogram.Histogram{
			Schema: 3, ZeroThreshold: 1e-128, ZeroCount: uint64(i % 3), Count: uint64(200 + i), Sum: float64(i) * 1.5,
			PositiveSpans:   []histogram.Span{{Offset: -3, Length: 12}, {Offset: 4, Length: 8}},
			PositiveBuckets: buckets,
		}}
	}
	return s
}

func BenchmarkEncodeHistograms(b *testing.B) {
	var enc Encoder
	s := benchHistograms(1000)
	buf, _ := enc.HistogramSamples(s, nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = enc.HistogramSamples(s, buf[:0])
	}
	b.ReportMetric(float64(len(buf))/float64(len(s)), "bytes/sample")
}

func BenchmarkDecodeHistograms(b *testing.B) {
	var enc Encoder
	var dec Decoder
	rec, _ := enc.HistogramSamples(benchHistograms(1000), nil)
	out := make([]RefHistogramSample, 0, 1000)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = dec.HistogramSamples(rec, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeFloatHistograms(b *testing.B) {
	var enc Encoder
	s := toFloatSamples(benchHistograms(1000))
	buf, _ := enc.FloatHistogramSamples(s, nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = enc.FloatHistogramSamples(s, buf[:0])
	}
	b.ReportMetric(float64(len(buf))/float64(len(s)), "bytes/sample")
}

func BenchmarkDecodeFloatHistograms(b *testing.B) {
	var enc Encoder
	var dec Decoder
	rec, _ := enc.FloatHistogramSamples(toFloatSamples(benchHistograms(1000)), nil)
	out := make([]RefFloatHistogramSample, 0, 1000)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = dec.FloatHistogramSamples(rec, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
