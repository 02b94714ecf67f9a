package promstorage_test

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	phistogram "github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/tsdb/chunks"
	precord "github.com/prometheus/prometheus/tsdb/record"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// The histogram WAL records (types 7 to 10, 12 and 13) are checked against
// Prometheus through a golden file: this test writes it (with
// -update-records) from Prometheus's tsdb/record Encoder and otherwise
// requires that Prometheus still encodes the samples in it to the stored
// bytes and decodes the stored bytes to the samples. The tests of
// internal/record, which this module may not import, require the same of
// our Encoder and Decoder, so both write identical bytes and read each
// other's records identically.

var updateRecords = flag.Bool("update-records", false, "rewrite "+histogramRecordsFile+" with Prometheus's encoder")

var histogramRecordsFile = filepath.Join("..", "..", "internal", "record", "testdata", "prom_histogram_records.json")

// goldenRecordCase is one set of samples and the records Prometheus writes
// for them. For V1 (types 7 to 10), Records are the exponential record (""
// when Prometheus writes none because all samples use custom buckets) and
// the custom-bucket record of the samples split off; the first decodes to
// the exponential samples, the second to the custom-bucket ones, start
// timestamps as 0. For V2 (12, 13) Records is the one record, decoding to
// all samples with their start timestamps.
type goldenRecordCase struct {
	Name    string               `json:"name"`
	Float   bool                 `json:"float"`
	V2      bool                 `json:"v2"`
	Samples []goldenRecordSample `json:"samples"`
	Records []string             `json:"records"` // hex
}

type goldenRecordSample struct {
	Ref uint64           `json:"ref"`
	ST  int64            `json:"st"`
	T   int64            `json:"t"`
	H   goldenRecordHist `json:"h"`
}

// goldenRecordHist holds a histogram of either kind; floats are their
// IEEE-754 bits, so every NaN survives. Integer histograms use ZeroCount,
// Count, PosDeltas and NegDeltas as integers; float histograms the same
// counts as bits and PosCounts and NegCounts.
type goldenRecordHist struct {
	Hint          uint8      `json:"hint"`
	Schema        int32      `json:"schema"`
	ZeroThreshold uint64     `json:"zt"`
	ZeroCount     uint64     `json:"zc"`
	Count         uint64     `json:"count"`
	Sum           uint64     `json:"sum"`
	PosSpans      [][2]int64 `json:"pos_spans,omitempty"`
	NegSpans      [][2]int64 `json:"neg_spans,omitempty"`
	PosDeltas     []int64    `json:"pos_deltas,omitempty"`
	NegDeltas     []int64    `json:"neg_deltas,omitempty"`
	PosCounts     []uint64   `json:"pos_counts,omitempty"`
	NegCounts     []uint64   `json:"neg_counts,omitempty"`
	CustomValues  []uint64   `json:"custom_values,omitempty"`
}

func spansToGolden(spans []phistogram.Span) [][2]int64 {
	var out [][2]int64
	for _, s := range spans {
		out = append(out, [2]int64{int64(s.Offset), int64(s.Length)})
	}
	return out
}

func spansFromGolden(spans [][2]int64) []phistogram.Span {
	var out []phistogram.Span
	for _, s := range spans {
		out = append(out, phistogram.Span{Offset: int32(s[0]), Length: uint32(s[1])})
	}
	return out
}

func bitsOf(fs []float64) []uint64 {
	var out []uint64
	for _, f := range fs {
		out = append(out, math.Float64bits(f))
	}
	return out
}

func floatsOf(bs []uint64) []float64 {
	var out []float64
	for _, b := range bs {
		out = append(out, math.Float64frombits(b))
	}
	return out
}

func histToGolden(h *phistogram.Histogram) goldenRecordHist {
	return goldenRecordHist{
		Hint: uint8(h.CounterResetHint), Schema: h.Schema, ZeroThreshold: math.Float64bits(h.ZeroThreshold),
		ZeroCount: h.ZeroCount, Count: h.Count, Sum: math.Float64bits(h.Sum),
		PosSpans: spansToGolden(h.PositiveSpans), NegSpans: spansToGolden(h.NegativeSpans),
		PosDeltas: slices.Clone(h.PositiveBuckets), NegDeltas: slices.Clone(h.NegativeBuckets),
		CustomValues: bitsOf(h.CustomValues),
	}
}

func floatHistToGolden(h *phistogram.FloatHistogram) goldenRecordHist {
	return goldenRecordHist{
		Hint: uint8(h.CounterResetHint), Schema: h.Schema, ZeroThreshold: math.Float64bits(h.ZeroThreshold),
		ZeroCount: math.Float64bits(h.ZeroCount), Count: math.Float64bits(h.Count), Sum: math.Float64bits(h.Sum),
		PosSpans: spansToGolden(h.PositiveSpans), NegSpans: spansToGolden(h.NegativeSpans),
		PosCounts: bitsOf(h.PositiveBuckets), NegCounts: bitsOf(h.NegativeBuckets),
		CustomValues: bitsOf(h.CustomValues),
	}
}

func histFromGolden(g goldenRecordHist) *phistogram.Histogram {
	return &phistogram.Histogram{
		CounterResetHint: phistogram.CounterResetHint(g.Hint), Schema: g.Schema,
		ZeroThreshold: math.Float64frombits(g.ZeroThreshold), ZeroCount: g.ZeroCount, Count: g.Count,
		Sum: math.Float64frombits(g.Sum), PositiveSpans: spansFromGolden(g.PosSpans), NegativeSpans: spansFromGolden(g.NegSpans),
		PositiveBuckets: slices.Clone(g.PosDeltas), NegativeBuckets: slices.Clone(g.NegDeltas),
		CustomValues: floatsOf(g.CustomValues),
	}
}

func floatHistFromGolden(g goldenRecordHist) *phistogram.FloatHistogram {
	return &phistogram.FloatHistogram{
		CounterResetHint: phistogram.CounterResetHint(g.Hint), Schema: g.Schema,
		ZeroThreshold: math.Float64frombits(g.ZeroThreshold), ZeroCount: math.Float64frombits(g.ZeroCount),
		Count: math.Float64frombits(g.Count), Sum: math.Float64frombits(g.Sum),
		PositiveSpans: spansFromGolden(g.PosSpans), NegativeSpans: spansFromGolden(g.NegSpans),
		PositiveBuckets: floatsOf(g.PosCounts), NegativeBuckets: floatsOf(g.NegCounts),
		CustomValues: floatsOf(g.CustomValues),
	}
}

// recordTestSamples returns n samples mixing exponential, custom-bucket
// and gauge histograms from histGen with the edge cases, refs that move
// both ways and start timestamps that exercise every V2 marker.
func recordTestSamples(seed uint64, n int) []goldenRecordSample {
	r := rand.New(rand.NewPCG(seed, 12))
	gens := []*histGen{
		newHistGen(seed, false, false), newHistGen(seed+1, true, false),
		newHistGen(seed+2, false, true), newHistGen(seed+3, true, true),
	}
	edges := recordEdgeHistograms()
	s := make([]goldenRecordSample, n)
	var prevST int64
	for i := range s {
		var h *histogram.Histogram
		t := int64(1_700_000_000_000 + r.IntN(1_000_000) - 500_000)
		if r.IntN(10) == 0 {
			h = edges[r.IntN(len(edges))]
		} else {
			t, h = gens[r.IntN(len(gens))].Next()
		}
		var st int64
		switch r.IntN(4) {
		case 0:
		case 1:
			st = prevST
		default:
			st = t - int64(r.IntN(100_000))
		}
		prevST = st
		ref := uint64(r.IntN(5000))
		if r.IntN(20) == 0 {
			ref = r.Uint64()
		}
		s[i] = goldenRecordSample{Ref: ref, ST: st, T: t, H: histToGolden(promstorage.ToPromHistogram(h))}
	}
	return s
}

// recordEdgeHistograms are valid-format histograms the generator does not
// make: empty but non-nil slices, NaN sums, negative-only buckets, zero
// spans, extreme counts and offsets, custom buckets without buckets.
func recordEdgeHistograms() []*histogram.Histogram {
	return []*histogram.Histogram{
		{Schema: 0, Sum: math.NaN(), PositiveSpans: []histogram.Span{}, PositiveBuckets: []int64{}, NegativeSpans: []histogram.Span{}, NegativeBuckets: []int64{}},
		{CounterResetHint: histogram.CounterReset, Schema: -4, Sum: math.Float64frombits(staleNaNBits)},
		{CounterResetHint: histogram.NotCounterReset, Schema: 8, ZeroThreshold: math.Copysign(0, -1), Count: math.MaxUint64, ZeroCount: math.MaxUint64,
			NegativeSpans:   []histogram.Span{{Offset: math.MinInt32, Length: 0}, {Offset: math.MaxInt32, Length: 2}},
			NegativeBuckets: []int64{math.MaxInt64, math.MinInt64}},
		{CounterResetHint: histogram.GaugeType, Schema: histogram.CustomBucketsSchema, Sum: math.Inf(1)},
		{Schema: histogram.CustomBucketsSchema, Count: 3, Sum: 1,
			PositiveSpans: []histogram.Span{{Offset: 1, Length: 2}}, PositiveBuckets: []int64{1, 1},
			CustomValues: []float64{math.Inf(-1), -0.5, 1e300}},
	}
}

func recordEdgeSamples() []goldenRecordSample {
	var s []goldenRecordSample
	for i, h := range recordEdgeHistograms() {
		s = append(s, goldenRecordSample{Ref: uint64(i * 7), ST: int64(i % 2), T: int64(i * 1000), H: histToGolden(promstorage.ToPromHistogram(h))})
	}
	last := len(s) - 1
	return append(s,
		goldenRecordSample{Ref: math.MaxUint64, ST: math.MinInt64, T: math.MaxInt64, H: s[0].H},
		goldenRecordSample{Ref: 0, ST: math.MaxInt64, T: math.MinInt64, H: s[last].H},
	)
}

// asFloat turns the samples' integer histograms into float ones.
func asFloat(s []goldenRecordSample) []goldenRecordSample {
	out := slices.Clone(s)
	for i := range out {
		out[i].H = floatHistToGolden(histFromGolden(s[i].H).ToFloat(nil))
	}
	return out
}

func toPromHistSamples(s []goldenRecordSample) []precord.RefHistogramSample {
	out := make([]precord.RefHistogramSample, len(s))
	for i, x := range s {
		out[i] = precord.RefHistogramSample{Ref: chunks.HeadSeriesRef(x.Ref), ST: x.ST, T: x.T, H: histFromGolden(x.H)}
	}
	return out
}

func toPromFloatHistSamples(s []goldenRecordSample) []precord.RefFloatHistogramSample {
	out := make([]precord.RefFloatHistogramSample, len(s))
	for i, x := range s {
		out[i] = precord.RefFloatHistogramSample{Ref: chunks.HeadSeriesRef(x.Ref), ST: x.ST, T: x.T, FH: floatHistFromGolden(x.H)}
	}
	return out
}

// promEncodeRecords encodes c's samples with Prometheus's Encoder as the
// case's Records describe.
func promEncodeRecords(c goldenRecordCase) [][]byte {
	var enc precord.Encoder
	enc.EnableSTStorage = c.V2
	if c.Float {
		rec, custom := enc.FloatHistogramSamples(toPromFloatHistSamples(c.Samples), nil)
		if c.V2 {
			return [][]byte{rec}
		}
		return [][]byte{rec, enc.CustomBucketsFloatHistogramSamples(custom, nil)}
	}
	rec, custom := enc.HistogramSamples(toPromHistSamples(c.Samples), nil)
	if c.V2 {
		return [][]byte{rec}
	}
	return [][]byte{rec, enc.CustomBucketsHistogramSamples(custom, nil)}
}

// wantDecoded returns the samples each of c's records must decode to.
func wantDecoded(c goldenRecordCase) [][]goldenRecordSample {
	if c.V2 {
		return [][]goldenRecordSample{c.Samples}
	}
	var exp, cb []goldenRecordSample
	for _, x := range c.Samples {
		x.ST = 0
		if x.H.Schema == histogram.CustomBucketsSchema {
			cb = append(cb, x)
		} else {
			exp = append(exp, x)
		}
	}
	return [][]goldenRecordSample{exp, cb}
}

// promDecodeRecord decodes rec with Prometheus's Decoder into golden form.
func promDecodeRecord(t *testing.T, rec []byte, float bool) []goldenRecordSample {
	t.Helper()
	dec := precord.NewDecoder(nil, slog.New(slog.DiscardHandler))
	var out []goldenRecordSample
	if float {
		s, err := dec.FloatHistogramSamples(rec, nil)
		require.NoError(t, err)
		for _, x := range s {
			out = append(out, goldenRecordSample{Ref: uint64(x.Ref), ST: x.ST, T: x.T, H: floatHistToGolden(x.FH)})
		}
		return out
	}
	s, err := dec.HistogramSamples(rec, nil)
	require.NoError(t, err)
	for _, x := range s {
		out = append(out, goldenRecordSample{Ref: uint64(x.Ref), ST: x.ST, T: x.T, H: histToGolden(x.H)})
	}
	return out
}

func goldenRecordCases() []goldenRecordCase {
	sets := []struct {
		name    string
		samples []goldenRecordSample
	}{
		{"empty", nil},
		{"edges", recordEdgeSamples()},
		{"custom only", recordEdgeSamples()[3:5]},
		{"one", recordTestSamples(1, 1)},
		{"generated 7", recordTestSamples(7, 25)},
		{"generated 8", recordTestSamples(8, 25)},
		{"generated 9", recordTestSamples(9, 25)},
	}
	var cases []goldenRecordCase
	for _, set := range sets {
		for _, float := range []bool{false, true} {
			for _, v2 := range []bool{false, true} {
				c := goldenRecordCase{Name: set.name, Float: float, V2: v2, Samples: set.samples}
				if float {
					c.Samples = asFloat(set.samples)
				}
				for _, rec := range promEncodeRecords(c) {
					c.Records = append(c.Records, hex.EncodeToString(rec))
				}
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// TestHistogramRecordGolden checks Prometheus against the golden file (or
// rewrites it with -update-records).
func TestHistogramRecordGolden(t *testing.T) {
	if *updateRecords {
		// One case per line keeps diffs readable.
		out := []byte("[\n")
		for i, c := range goldenRecordCases() {
			b, err := json.Marshal(c)
			require.NoError(t, err)
			if i > 0 {
				out = append(out, ",\n"...)
			}
			out = append(out, b...)
		}
		out = append(out, "\n]\n"...)
		require.NoError(t, os.WriteFile(histogramRecordsFile, out, 0o644))
	}
	b, err := os.ReadFile(histogramRecordsFile)
	require.NoError(t, err)
	var cases []goldenRecordCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.Len(t, cases, len(goldenRecordCases()), "golden file out of date: run with -update-records")
	for _, c := range cases {
		name := c.Name
		if c.Float {
			name += " float"
		}
		if c.V2 {
			name += " v2"
		}
		t.Run(name, func(t *testing.T) {
			recs := promEncodeRecords(c)
			want := wantDecoded(c)
			require.Len(t, c.Records, len(recs))
			for i, rec := range recs {
				require.Equal(t, c.Records[i], hex.EncodeToString(rec), "record %d", i)
				if len(rec) == 0 {
					require.Empty(t, want[i])
					continue
				}
				got := promDecodeRecord(t, rec, c.Float)
				require.Len(t, got, len(want[i]))
				for j := range got {
					requireSameGoldenSample(t, want[i][j], got[j])
				}
			}
		})
	}
}

// requireSameGoldenSample compares two samples, treating nil and empty
// lists alike.
func requireSameGoldenSample(t *testing.T, want, got goldenRecordSample) {
	t.Helper()
	norm := func(s goldenRecordSample) goldenRecordSample {
		h := &s.H
		for _, p := range []*[][2]int64{&h.PosSpans, &h.NegSpans} {
			if len(*p) == 0 {
				*p = nil
			}
		}
		for _, p := range []*[]int64{&h.PosDeltas, &h.NegDeltas} {
			if len(*p) == 0 {
				*p = nil
			}
		}
		for _, p := range []*[]uint64{&h.PosCounts, &h.NegCounts, &h.CustomValues} {
			if len(*p) == 0 {
				*p = nil
			}
		}
		return s
	}
	require.Equal(t, norm(want), norm(got))
}
