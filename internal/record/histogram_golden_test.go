package record

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
)

// testdata/prom_histogram_records.json holds histogram samples and the
// records Prometheus's Encoder writes for them; a test in prom/storage
// writes it (-update-records) and checks that Prometheus still encodes and
// decodes it so. TestPromHistogramRecords requires the same of ours, so
// the two write identical bytes and read each other's records identically.
// The file's layout is described with the types below.

// promRecordCase: for V1 (types 7 to 10) Records are the exponential record
// ("" if all samples use custom buckets) and the custom-bucket record of
// the samples split off; for V2 (12, 13) the one record.
type promRecordCase struct {
	Name    string             `json:"name"`
	Float   bool               `json:"float"`
	V2      bool               `json:"v2"`
	Samples []promRecordSample `json:"samples"`
	Records []string           `json:"records"`
}

type promRecordSample struct {
	Ref uint64         `json:"ref"`
	ST  int64          `json:"st"`
	T   int64          `json:"t"`
	H   promRecordHist `json:"h"`
}

// promRecordHist: floats are IEEE-754 bits. ZeroCount and Count are
// integers for integer histograms and bits for float ones; PosDeltas and
// NegDeltas are the integer buckets, PosCounts and NegCounts the float ones.
type promRecordHist struct {
	Hint          uint8      `json:"hint"`
	Schema        int32      `json:"schema"`
	ZeroThreshold uint64     `json:"zt"`
	ZeroCount     uint64     `json:"zc"`
	Count         uint64     `json:"count"`
	Sum           uint64     `json:"sum"`
	PosSpans      [][2]int64 `json:"pos_spans"`
	NegSpans      [][2]int64 `json:"neg_spans"`
	PosDeltas     []int64    `json:"pos_deltas"`
	NegDeltas     []int64    `json:"neg_deltas"`
	PosCounts     []uint64   `json:"pos_counts"`
	NegCounts     []uint64   `json:"neg_counts"`
	CustomValues  []uint64   `json:"custom_values"`
}

func goldenSpans(in [][2]int64) []histogram.Span {
	var out []histogram.Span
	for _, s := range in {
		out = append(out, histogram.Span{Offset: int32(s[0]), Length: uint32(s[1])})
	}
	return out
}

func goldenFloats(in []uint64) []float64 {
	var out []float64
	for _, b := range in {
		out = append(out, math.Float64frombits(b))
	}
	return out
}

func (g promRecordHist) histogram() *histogram.Histogram {
	return &histogram.Histogram{
		CounterResetHint: histogram.CounterResetHint(g.Hint), Schema: g.Schema,
		ZeroThreshold: math.Float64frombits(g.ZeroThreshold), ZeroCount: g.ZeroCount, Count: g.Count,
		Sum: math.Float64frombits(g.Sum), PositiveSpans: goldenSpans(g.PosSpans), NegativeSpans: goldenSpans(g.NegSpans),
		PositiveBuckets: g.PosDeltas, NegativeBuckets: g.NegDeltas, CustomValues: goldenFloats(g.CustomValues),
	}
}

func (g promRecordHist) floatHistogram() *histogram.FloatHistogram {
	return &histogram.FloatHistogram{
		CounterResetHint: histogram.CounterResetHint(g.Hint), Schema: g.Schema,
		ZeroThreshold: math.Float64frombits(g.ZeroThreshold), ZeroCount: math.Float64frombits(g.ZeroCount),
		Count: math.Float64frombits(g.Count), Sum: math.Float64frombits(g.Sum),
		PositiveSpans: goldenSpans(g.PosSpans), NegativeSpans: goldenSpans(g.NegSpans),
		PositiveBuckets: goldenFloats(g.PosCounts), NegativeBuckets: goldenFloats(g.NegCounts),
		CustomValues: goldenFloats(g.CustomValues),
	}
}

func TestPromHistogramRecords(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "prom_histogram_records.json"))
	require.NoError(t, err)
	var cases []promRecordCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.NotEmpty(t, cases)
	types := map[Type]bool{}
	for _, c := range cases {
		name := c.Name
		if c.Float {
			name += " float"
		}
		if c.V2 {
			name += " v2"
		}
		t.Run(name, func(t *testing.T) {
			var enc Encoder
			var dec Decoder
			if c.Float {
				s := make([]RefFloatHistogramSample, len(c.Samples))
				for i, x := range c.Samples {
					s[i] = RefFloatHistogramSample{Ref: x.Ref, ST: x.ST, T: x.T, FH: x.H.floatHistogram()}
				}
				var recs [][]byte
				if c.V2 {
					recs = [][]byte{enc.FloatHistogramSamplesV2(s, nil)}
				} else {
					rec, custom := enc.FloatHistogramSamples(s, nil)
					recs = [][]byte{rec, enc.CustomBucketsFloatHistogramSamples(custom, nil)}
				}
				want := [][]RefFloatHistogramSample{s}
				if !c.V2 {
					exp, cb := splitCustom(s, (*RefFloatHistogramSample).customBuckets)
					want = [][]RefFloatHistogramSample{exp, cb}
				}
				require.Len(t, recs, len(c.Records))
				for i, rec := range recs {
					require.Equal(t, c.Records[i], hex.EncodeToString(rec), "record %d", i)
					if len(rec) == 0 {
						require.Empty(t, want[i])
						continue
					}
					types[RecordType(rec)] = true
					got, err := dec.FloatHistogramSamples(rec, nil)
					require.NoError(t, err)
					requireSameFloatHistSamples(t, want[i], got, c.V2)
				}
				return
			}
			s := make([]RefHistogramSample, len(c.Samples))
			for i, x := range c.Samples {
				s[i] = RefHistogramSample{Ref: x.Ref, ST: x.ST, T: x.T, H: x.H.histogram()}
			}
			var recs [][]byte
			if c.V2 {
				recs = [][]byte{enc.HistogramSamplesV2(s, nil)}
			} else {
				rec, custom := enc.HistogramSamples(s, nil)
				recs = [][]byte{rec, enc.CustomBucketsHistogramSamples(custom, nil)}
			}
			want := [][]RefHistogramSample{s}
			if !c.V2 {
				exp, cb := splitCustom(s, (*RefHistogramSample).customBuckets)
				want = [][]RefHistogramSample{exp, cb}
			}
			require.Len(t, recs, len(c.Records))
			for i, rec := range recs {
				require.Equal(t, c.Records[i], hex.EncodeToString(rec), "record %d", i)
				if len(rec) == 0 {
					require.Empty(t, want[i])
					continue
				}
				types[RecordType(rec)] = true
				got, err := dec.HistogramSamples(rec, nil)
				require.NoError(t, err)
				requireSameHistSamples(t, want[i], got, c.V2)
			}
		})
	}
	for _, typ := range []Type{HistogramSamples, FloatHistogramSamples, CustomBucketsHistogramSamples,
		CustomBucketsFloatHistogramSamples, HistogramSamplesV2, FloatHistogramSamplesV2} {
		require.True(t, types[typ], "no %s record in the golden file", typ)
	}
}
