package record

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/corrupt"
)

// sameFloat compares bits, so that NaNs compare and -0 differs from 0.
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, sameFloat)
}

// sameHistogram reports whether a and b are equal field by field, floats bit
// for bit; nil and empty slices are equal.
func sameHistogram(a, b *histogram.Histogram) bool {
	return a.CounterResetHint == b.CounterResetHint && a.Schema == b.Schema &&
		sameFloat(a.ZeroThreshold, b.ZeroThreshold) && a.ZeroCount == b.ZeroCount &&
		a.Count == b.Count && sameFloat(a.Sum, b.Sum) &&
		slices.Equal(a.PositiveSpans, b.PositiveSpans) && slices.Equal(a.NegativeSpans, b.NegativeSpans) &&
		slices.Equal(a.PositiveBuckets, b.PositiveBuckets) && slices.Equal(a.NegativeBuckets, b.NegativeBuckets) &&
		sameFloats(a.CustomValues, b.CustomValues)
}

// sameFloatHistogram is sameHistogram for float histograms.
func sameFloatHistogram(a, b *histogram.FloatHistogram) bool {
	return a.CounterResetHint == b.CounterResetHint && a.Schema == b.Schema &&
		sameFloat(a.ZeroThreshold, b.ZeroThreshold) && sameFloat(a.ZeroCount, b.ZeroCount) &&
		sameFloat(a.Count, b.Count) && sameFloat(a.Sum, b.Sum) &&
		slices.Equal(a.PositiveSpans, b.PositiveSpans) && slices.Equal(a.NegativeSpans, b.NegativeSpans) &&
		sameFloats(a.PositiveBuckets, b.PositiveBuckets) && sameFloats(a.NegativeBuckets, b.NegativeBuckets) &&
		sameFloats(a.CustomValues, b.CustomValues)
}

// requireSameHistSamples compares samples; withST says whether the start
// timestamps were stored (V2) or must decode as 0 (V1).
func requireSameHistSamples(t *testing.T, want, got []RefHistogramSample, withST bool) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Ref, got[i].Ref, "sample %d", i)
		require.Equal(t, want[i].T, got[i].T, "sample %d", i)
		if withST {
			require.Equal(t, want[i].ST, got[i].ST, "sample %d", i)
		} else {
			require.Zero(t, got[i].ST, "sample %d", i)
		}
		require.True(t, sameHistogram(want[i].H, got[i].H), "sample %d:\nwant %+v\ngot  %+v", i, want[i].H, got[i].H)
	}
}

func requireSameFloatHistSamples(t *testing.T, want, got []RefFloatHistogramSample, withST bool) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Ref, got[i].Ref, "sample %d", i)
		require.Equal(t, want[i].T, got[i].T, "sample %d", i)
		if withST {
			require.Equal(t, want[i].ST, got[i].ST, "sample %d", i)
		} else {
			require.Zero(t, got[i].ST, "sample %d", i)
		}
		require.True(t, sameFloatHistogram(want[i].FH, got[i].FH), "sample %d:\nwant %+v\ngot  %+v", i, want[i].FH, got[i].FH)
	}
}

// testHistograms covers exponential and custom-bucket schemas, NaN and
// stale sums, empty and zero-length spans, negative buckets and every hint.
func testHistograms() map[string]*histogram.Histogram {
	return map[string]*histogram.Histogram{
		"exponential": {
			Schema: 3, ZeroThreshold: 0.001, ZeroCount: 2, Count: 20, Sum: 42.5,
			PositiveSpans:   []histogram.Span{{Offset: -2, Length: 3}, {Offset: 1, Length: 2}},
			PositiveBuckets: []int64{1, 1, -1, 0, 2},
			NegativeSpans:   []histogram.Span{{Offset: 0, Length: 1}},
			NegativeBuckets: []int64{3},
		},
		"custom buckets": {
			CounterResetHint: histogram.NotCounterReset, Schema: histogram.CustomBucketsSchema, Count: 4, Sum: 7,
			PositiveSpans:   []histogram.Span{{Offset: 0, Length: 3}},
			PositiveBuckets: []int64{1, 2, -1},
			CustomValues:    []float64{1, 2.5, 10},
		},
		"custom buckets none": {
			CounterResetHint: histogram.GaugeType, Schema: histogram.CustomBucketsSchema,
		},
		"stale sum": {
			CounterResetHint: histogram.CounterReset, Schema: 0, Sum: math.Float64frombits(staleNaN),
		},
		"nan sum empty slices": {
			CounterResetHint: histogram.GaugeType, Schema: -4, Count: 1, Sum: math.NaN(),
			PositiveSpans: []histogram.Span{}, PositiveBuckets: []int64{}, NegativeSpans: []histogram.Span{}, NegativeBuckets: []int64{},
		},
		"negative only zero-length span": {
			Schema: 8, ZeroThreshold: math.Copysign(0, -1), Count: 5, Sum: -12.25,
			NegativeSpans:   []histogram.Span{{Offset: math.MinInt32, Length: 0}, {Offset: math.MaxInt32, Length: 2}},
			NegativeBuckets: []int64{math.MaxInt64, math.MinInt64},
		},
		"extreme counts": {
			Schema: 1, ZeroCount: math.MaxUint64, Count: math.MaxUint64, Sum: math.Inf(-1),
			PositiveSpans:   []histogram.Span{{Offset: 5, Length: math.MaxUint32}},
			PositiveBuckets: []int64{-1},
		},
	}
}

// testHistogramSamples returns samples of every test histogram, in a fixed
// order, with refs and timestamps that move both ways and start timestamps
// exercising every V2 marker.
func testHistogramSamples() []RefHistogramSample {
	hs := testHistograms()
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	slices.Sort(names)
	sts := []int64{0, 900, 900, 0, 950, 950, 800, -5}
	var s []RefHistogramSample
	for i, n := range names {
		s = append(s, RefHistogramSample{
			Ref: uint64(100 + 37*(i%3) - 5*i), ST: sts[i%len(sts)], T: 1000 + int64(i*15) - int64(i%2)*40, H: hs[n],
		})
	}
	s = append(s, RefHistogramSample{Ref: math.MaxUint64, ST: math.MinInt64, T: math.MaxInt64, H: hs["exponential"]})
	s = append(s, RefHistogramSample{Ref: 0, ST: math.MaxInt64, T: math.MinInt64, H: hs["custom buckets"]})
	return s
}

func toFloatSamples(s []RefHistogramSample) []RefFloatHistogramSample {
	out := make([]RefFloatHistogramSample, len(s))
	for i := range s {
		out[i] = RefFloatHistogramSample{Ref: s[i].Ref, ST: s[i].ST, T: s[i].T, FH: s[i].H.ToFloat()}
	}
	return out
}

// splitCustom orders samples as a V1 round trip returns them: exponential
// ones first, then custom-bucket ones.
func splitCustom[S any](s []S, custom func(*S) bool) (exp, cb []S) {
	for i := range s {
		if custom(&s[i]) {
			cb = append(cb, s[i])
		} else {
			exp = append(exp, s[i])
		}
	}
	return exp, cb
}

func TestHistogramRecordRoundTrip(t *testing.T) {
	in := testHistogramSamples()
	var enc Encoder
	var dec Decoder

	t.Run("v1", func(t *testing.T) {
		wantExp, wantCB := splitCustom(in, (*RefHistogramSample).customBuckets)
		rec, custom := enc.HistogramSamples(in, nil)
		require.Equal(t, HistogramSamples, RecordType(rec))
		requireSameHistSamples(t, wantCB, custom, true)
		got, err := dec.HistogramSamples(rec, nil)
		require.NoError(t, err)
		requireSameHistSamples(t, wantExp, got, false)

		rec = enc.CustomBucketsHistogramSamples(custom, nil)
		require.Equal(t, CustomBucketsHistogramSamples, RecordType(rec))
		got, err = dec.HistogramSamples(rec, nil)
		require.NoError(t, err)
		requireSameHistSamples(t, wantCB, got, false)
	})
	t.Run("v2", func(t *testing.T) {
		rec := enc.HistogramSamplesV2(in, nil)
		require.Equal(t, HistogramSamplesV2, RecordType(rec))
		got, err := dec.HistogramSamples(rec, nil)
		require.NoError(t, err)
		requireSameHistSamples(t, in, got, true)
	})

	fin := toFloatSamples(in)
	t.Run("float v1", func(t *testing.T) {
		wantExp, wantCB := splitCustom(fin, (*RefFloatHistogramSample).customBuckets)
		rec, custom := enc.FloatHistogramSamples(fin, nil)
		require.Equal(t, FloatHistogramSamples, RecordType(rec))
		requireSameFloatHistSamples(t, wantCB, custom, true)
		got, err := dec.FloatHistogramSamples(rec, nil)
		require.NoError(t, err)
		requireSameFloatHistSamples(t, wantExp, got, false)

		rec = enc.CustomBucketsFloatHistogramSamples(custom, nil)
		require.Equal(t, CustomBucketsFloatHistogramSamples, RecordType(rec))
		got, err = dec.FloatHistogramSamples(rec, nil)
		require.NoError(t, err)
		requireSameFloatHistSamples(t, wantCB, got, false)
	})
	t.Run("float v2", func(t *testing.T) {
		rec := enc.FloatHistogramSamplesV2(fin, nil)
		require.Equal(t, FloatHistogramSamplesV2, RecordType(rec))
		got, err := dec.FloatHistogramSamples(rec, nil)
		require.NoError(t, err)
		requireSameFloatHistSamples(t, fin, got, true)
	})
}

// TestHistogramRecordEachCase round-trips every test histogram alone, so a
// failure names the case.
func TestHistogramRecordEachCase(t *testing.T) {
	for name, h := range testHistograms() {
		t.Run(name, func(t *testing.T) {
			var enc Encoder
			var dec Decoder
			in := []RefHistogramSample{{Ref: 7, ST: 3, T: 11, H: h}}
			rec, custom := enc.HistogramSamples(in, nil)
			if h.UsesCustomBuckets() {
				require.Empty(t, rec)
				rec = enc.CustomBucketsHistogramSamples(custom, nil)
			} else {
				require.Empty(t, custom)
			}
			got, err := dec.HistogramSamples(rec, nil)
			require.NoError(t, err)
			requireSameHistSamples(t, in, got, false)
			got, err = dec.HistogramSamples(enc.HistogramSamplesV2(in, nil), nil)
			require.NoError(t, err)
			requireSameHistSamples(t, in, got, true)

			fin := toFloatSamples(in)
			frec, fcustom := enc.FloatHistogramSamples(fin, nil)
			if h.UsesCustomBuckets() {
				frec = enc.CustomBucketsFloatHistogramSamples(fcustom, nil)
			}
			fgot, err := dec.FloatHistogramSamples(frec, nil)
			require.NoError(t, err)
			requireSameFloatHistSamples(t, fin, fgot, false)
			fgot, err = dec.FloatHistogramSamples(enc.FloatHistogramSamplesV2(fin, nil), nil)
			require.NoError(t, err)
			requireSameFloatHistSamples(t, fin, fgot, true)
		})
	}
}

func TestHistogramRecordEmptyLists(t *testing.T) {
	var enc Encoder
	var dec Decoder
	h := testHistograms()["nan sum empty slices"]
	got, err := dec.HistogramSamples(enc.HistogramSamplesV2([]RefHistogramSample{{H: h}}, nil), nil)
	require.NoError(t, err)
	require.Nil(t, got[0].H.PositiveSpans)
	require.Nil(t, got[0].H.PositiveBuckets)
	require.Nil(t, got[0].H.CustomValues)
}

func TestHistogramRecordSplit(t *testing.T) {
	var enc Encoder
	hs := testHistograms()
	cb := []RefHistogramSample{{Ref: 1, T: 1, H: hs["custom buckets"]}, {Ref: 2, T: 2, H: hs["custom buckets none"]}}
	prefix := []byte("prefix")

	// Only custom buckets: nothing appended.
	rec, custom := enc.HistogramSamples(cb, prefix)
	require.Equal(t, []byte("prefix"), rec)
	require.Len(t, custom, 2)
	frec, fcustom := enc.FloatHistogramSamples(toFloatSamples(cb), prefix)
	require.Equal(t, []byte("prefix"), frec)
	require.Len(t, fcustom, 2)

	// The base ref and time come from the first sample even if it is split off.
	mixed := append(slices.Clone(cb[:1]), RefHistogramSample{Ref: 5, T: 10, H: hs["exponential"]})
	rec, custom = enc.HistogramSamples(mixed, nil)
	require.Len(t, custom, 1)
	require.Equal(t, be64(1), rec[1:9])
	require.Equal(t, be64(1), rec[9:17])
	require.Equal(t, []byte{0x08, 0x12}, rec[17:19]) // deltas 4 and 9, zig-zag

	// No custom buckets: nothing split off.
	_, custom = enc.HistogramSamples(mixed[1:], nil)
	require.Nil(t, custom)
}

func TestHistogramRecordEmpty(t *testing.T) {
	var enc Encoder
	var dec Decoder
	rec, custom := enc.HistogramSamples(nil, nil)
	require.Equal(t, []byte{byte(HistogramSamples)}, rec)
	require.Nil(t, custom)
	frec, fcustom := enc.FloatHistogramSamples(nil, nil)
	require.Equal(t, []byte{byte(FloatHistogramSamples)}, frec)
	require.Nil(t, fcustom)
	require.Equal(t, []byte{byte(CustomBucketsHistogramSamples)}, enc.CustomBucketsHistogramSamples(nil, nil))
	require.Equal(t, []byte{byte(CustomBucketsFloatHistogramSamples)}, enc.CustomBucketsFloatHistogramSamples(nil, nil))
	require.Equal(t, []byte{byte(HistogramSamplesV2)}, enc.HistogramSamplesV2(nil, nil))
	require.Equal(t, []byte{byte(FloatHistogramSamplesV2)}, enc.FloatHistogramSamplesV2(nil, nil))

	for _, rec := range [][]byte{{7}, {9}, {12}, cat([]byte{7}, be64(1), be64(2))} {
		got, err := dec.HistogramSamples(rec, nil)
		require.NoError(t, err, "%v", rec)
		require.Empty(t, got)
	}
	for _, rec := range [][]byte{{8}, {10}, {13}, cat([]byte{10}, be64(1), be64(2))} {
		got, err := dec.FloatHistogramSamples(rec, nil)
		require.NoError(t, err, "%v", rec)
		require.Empty(t, got)
	}
}

func TestHistogramRecordWrongType(t *testing.T) {
	var dec Decoder
	for _, rec := range [][]byte{nil, {2}, {8}, {10}, {11}, {13}, {255}} {
		_, err := dec.HistogramSamples(rec, nil)
		require.ErrorIs(t, err, ErrWrongType, "%v", rec)
	}
	for _, rec := range [][]byte{nil, {2}, {7}, {9}, {11}, {12}, {255}} {
		_, err := dec.FloatHistogramSamples(rec, nil)
		require.ErrorIs(t, err, ErrWrongType, "%v", rec)
	}
}

func TestHistogramRecordAppends(t *testing.T) {
	var enc Encoder
	var dec Decoder
	in := testHistogramSamples()
	prev := []RefHistogramSample{{Ref: 99, H: &histogram.Histogram{}}}
	got, err := dec.HistogramSamples(enc.HistogramSamplesV2(in, nil), prev)
	require.NoError(t, err)
	requireSameHistSamples(t, append(prev, in...), got, true)
}

// hdrV1 is a type byte, base ref 1 and base time 2 and a first entry with
// zero deltas; the histogram follows.
func hdrV1(typ Type) []byte { return cat([]byte{byte(typ)}, be64(1), be64(2), []byte{0, 0}) }

// histHead is an integer histogram's fields up to the lists: hint 0,
// schema 0, zero threshold, zero count 0, count 0, sum.
var histHead = cat([]byte{0, 0}, be64(0), []byte{0, 0}, be64(0))

// floatHistHead is histHead for float histograms.
var floatHistHead = cat([]byte{0, 0}, be64(0), be64(0), be64(0), be64(0))

func TestHistogramRecordCorrupt(t *testing.T) {
	var enc Encoder
	valid := enc.CustomBucketsHistogramSamples(testHistogramSamples()[:3], nil)
	validV2 := enc.HistogramSamplesV2(testHistogramSamples(), nil)
	withByte := func(b []byte, i int, v byte) []byte {
		c := slices.Clone(b)
		c[i] = v
		return c
	}
	huge := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01} // 2^42
	for _, tc := range []struct {
		name  string
		float bool
		rec   []byte
	}{
		{"short base", false, cat([]byte{7}, be64(1), be64(2))[:12]},
		{"truncated", false, valid[:len(valid)-1]},
		{"trailing byte", false, cat(valid, []byte{0})},
		{"v2 trailing byte", false, cat(validV2, []byte{0})},
		{"v2 truncated", false, validV2[:len(validV2)-2]},
		{"bad hint", false, cat(hdrV1(7), []byte{4}, histHead[1:], []byte{0, 0, 0, 0})},
		{"schema overflow", false, cat(hdrV1(7), []byte{0, 0x80, 0x80, 0x80, 0x80, 0x20}, histHead[2:], []byte{0, 0, 0, 0})},
		{"span count beyond record", false, cat(hdrV1(7), histHead, huge, []byte{0, 0, 0})},
		{"short span", false, cat(hdrV1(7), histHead, []byte{2, 0, 1, 0}, []byte{0, 0, 0})},
		{"span offset overflow", false, cat(hdrV1(7), histHead, []byte{1, 0x80, 0x80, 0x80, 0x80, 0x20, 1}, []byte{0, 0, 0})},
		{"span length overflow", false, cat(hdrV1(7), histHead, []byte{1, 0, 0x80, 0x80, 0x80, 0x80, 0x10}, []byte{0, 0, 0})},
		{"bucket count beyond record", false, cat(hdrV1(7), histHead, []byte{0, 0}, huge, []byte{0})},
		{"bucket varint truncated", false, cat(hdrV1(7), histHead, []byte{0, 0, 1, 0x80})},
		{"custom values beyond record", false, cat(hdrV1(9), []byte{0, 0x69}, histHead[2:], []byte{0, 0, 0, 0, 2}, be64(1))},
		{"varint overflow", false, cat([]byte{7}, be64(1), be64(2), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
		{"v2 bad marker", false, withByte(enc.HistogramSamplesV2(testHistogramSamples()[:2], nil), len(enc.HistogramSamplesV2(testHistogramSamples()[:1], nil))+2, 3)},
		{"float truncated", true, cat(hdrV1(8), floatHistHead[:20])},
		{"float bucket count beyond record", true, cat(hdrV1(8), floatHistHead, []byte{0, 0, 2}, be64(1), []byte{0})},
		{"float trailing byte", true, cat(hdrV1(8), floatHistHead, []byte{0, 0, 0, 0}, []byte{0})},
		{"float v2 truncated", true, cat([]byte{13, 0, 0, 0}, floatHistHead, []byte{0, 0, 0})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dec Decoder
			var err error
			if tc.float {
				prev := []RefFloatHistogramSample{{Ref: 99}}
				var got []RefFloatHistogramSample
				got, err = dec.FloatHistogramSamples(tc.rec, prev)
				require.Len(t, got, 1)
			} else {
				prev := []RefHistogramSample{{Ref: 99}}
				var got []RefHistogramSample
				got, err = dec.HistogramSamples(tc.rec, prev)
				require.Len(t, got, 1)
			}
			require.ErrorIs(t, err, corrupt.ErrCorrupt)
			_, off, ok := corrupt.Locate(err)
			require.True(t, ok)
			require.Positive(t, off)
			require.LessOrEqual(t, off, int64(len(tc.rec)))
		})
	}
}

// TestHistogramRecordTruncations cuts valid records at every length: each
// cut either fails as corruption or, where it falls on an entry boundary,
// decodes a prefix of the samples.
func TestHistogramRecordTruncations(t *testing.T) {
	var enc Encoder
	var dec Decoder
	in := testHistogramSamples()
	v1 := enc.CustomBucketsHistogramSamples(in, nil)
	v2 := enc.HistogramSamplesV2(in, nil)
	fin := toFloatSamples(in)
	fv1 := enc.CustomBucketsFloatHistogramSamples(fin, nil)
	fv2 := enc.FloatHistogramSamplesV2(fin, nil)
	for _, full := range [][]byte{v1, v2} {
		for n := 1; n < len(full); n++ {
			got, err := dec.HistogramSamples(full[:n], nil)
			if err != nil {
				require.ErrorIs(t, err, corrupt.ErrCorrupt)
				require.Empty(t, got)
				continue
			}
			requireSameHistSamples(t, in[:len(got)], got, full[0] == byte(HistogramSamplesV2))
		}
	}
	for _, full := range [][]byte{fv1, fv2} {
		for n := 1; n < len(full); n++ {
			got, err := dec.FloatHistogramSamples(full[:n], nil)
			if err != nil {
				require.ErrorIs(t, err, corrupt.ErrCorrupt)
				require.Empty(t, got)
				continue
			}
			requireSameFloatHistSamples(t, fin[:len(got)], got, full[0] == byte(FloatHistogramSamplesV2))
		}
	}
}

func TestHistogramDecodedDoesNotAliasRecord(t *testing.T) {
	var enc Encoder
	var dec Decoder
	in := testHistogramSamples()
	rec := enc.HistogramSamplesV2(in, nil)
	got, err := dec.HistogramSamples(rec, nil)
	require.NoError(t, err)
	for i := range rec {
		rec[i] = 0xff
	}
	requireSameHistSamples(t, in, got, true)
}

func TestHistogramEncoderDoesNotAllocate(t *testing.T) {
	var enc Encoder
	in, _ := splitCustom(testHistogramSamples(), (*RefHistogramSample).customBuckets)
	fin := toFloatSamples(in)
	buf := make([]byte, 0, 1<<14)
	for name, f := range map[string]func(){
		"histograms":         func() { buf, _ = enc.HistogramSamples(in, buf[:0]) },
		"float histograms":   func() { buf, _ = enc.FloatHistogramSamples(fin, buf[:0]) },
		"histograms v2":      func() { buf = enc.HistogramSamplesV2(in, buf[:0]) },
		"custom buckets":     func() { buf = enc.CustomBucketsHistogramSamples(in, buf[:0]) },
		"float histograms 2": func() { buf = enc.FloatHistogramSamplesV2(fin, buf[:0]) },
	} {
		require.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}
