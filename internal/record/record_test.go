package record

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// staleNaN is Prometheus's stale marker: a NaN with a payload that must
// survive encoding bit for bit.
const staleNaN = 0x7ff0000000000002

func be64(v uint64) []byte {
	return []byte{byte(v >> 56), byte(v >> 48), byte(v >> 40), byte(v >> 32), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// The golden records below are built by hand from the format description
// (type byte; series: be64 ref, uvarint count, uvarint-prefixed strings;
// samples: be64 base ref, be64 base time, then per sample varint ref delta,
// varint time delta, be64 value bits; tombstones: be64 ref, varint mint,
// varint maxt per interval). Varints are zig-zag: -1 -> 0x01, 15 -> 0x1e.

var goldenSeries = cat(
	[]byte{0x01},
	be64(1), []byte{0x02}, // ref 1, two labels
	[]byte{0x08}, []byte("__name__"), []byte{0x02}, []byte("up"),
	[]byte{0x03}, []byte("job"), []byte{0x01}, []byte("a"),
	be64(1<<40+7), []byte{0x00}, // ref 2^40+7, no labels
)

var goldenSamples = cat(
	[]byte{0x02},
	be64(10), be64(1000), // base ref and time
	[]byte{0x00, 0x00}, be64(0x3ff8000000000000), // ref 10, t 1000, 1.5
	[]byte{0x01, 0x1e}, be64(staleNaN), // ref 9 (-1), t 1015 (+15), stale NaN
	[]byte{0xc4, 0x04, 0xc7, 0x01}, be64(0xc000000000000000), // ref 300 (+290), t 900 (-100), -2
)

var goldenTombstones = cat(
	[]byte{0x03},
	be64(5), []byte{0x00}, []byte{0xc8, 0x01}, // ref 5 [0, 100]
	be64(5), []byte{0x90, 0x03}, []byte{0xd8, 0x04}, // ref 5 [200, 300]
	be64(6), []byte{0x09}, []byte{0x0a}, // ref 6 [-5, 5]
)

// goldenSamplesV2 is a Prometheus SamplesV2 record: first sample as varints
// (ref, t, st) + value; later ones as ref delta to the previous sample, t
// delta to the first, a start-time marker (0 none, 1 same, 2 explicit +
// varint delta to the first st) and the value.
var goldenSamplesV2 = cat(
	[]byte{0x0b},
	[]byte{0x14, 0xd0, 0x0f, 0x00}, be64(0x3ff8000000000000), // ref 10, t 1000, st 0, 1.5
	[]byte{0x01, 0x1e, 0x00}, be64(staleNaN), // ref 9, t 1015, no st
	[]byte{0xc6, 0x04, 0xc7, 0x01, 0x02, 0x0e}, be64(0xc000000000000000), // ref 300, t 900, st 7, -2
	[]byte{0x00, 0x00, 0x01}, be64(0), // ref 300, t 1000, same st, 0
)

var (
	wantSeries = []RefSeries{
		{Ref: 1, Labels: labels.FromStrings("__name__", "up", "job", "a")},
		{Ref: 1<<40 + 7, Labels: labels.EmptyLabels()},
	}
	wantSamples = []RefSample{
		{Ref: 10, T: 1000, V: 1.5},
		{Ref: 9, T: 1015, V: math.Float64frombits(staleNaN)},
		{Ref: 300, T: 900, V: -2},
	}
	wantStones = []Stone{
		{Ref: 5, Intervals: tombstones.Intervals{{Mint: 0, Maxt: 100}}},
		{Ref: 5, Intervals: tombstones.Intervals{{Mint: 200, Maxt: 300}}},
		{Ref: 6, Intervals: tombstones.Intervals{{Mint: -5, Maxt: 5}}},
	}
)

func requireSeriesEqual(t *testing.T, want, got []RefSeries) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Ref, got[i].Ref, "series %d", i)
		require.True(t, labels.Equal(want[i].Labels, got[i].Labels), "series %d: want %s, got %s", i, want[i].Labels, got[i].Labels)
	}
}

// requireSamplesEqual compares values by their bits, so NaNs compare.
func requireSamplesEqual(t *testing.T, want, got []RefSample) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Ref, got[i].Ref, "sample %d", i)
		require.Equal(t, want[i].T, got[i].T, "sample %d", i)
		require.Equal(t, want[i].ST, got[i].ST, "sample %d", i)
		require.Equal(t, math.Float64bits(want[i].V), math.Float64bits(got[i].V), "sample %d", i)
	}
}

func TestGoldenSeries(t *testing.T) {
	var enc Encoder
	require.Equal(t, goldenSeries, enc.Series(wantSeries, nil))
	var dec Decoder
	got, err := dec.Series(goldenSeries, nil)
	require.NoError(t, err)
	requireSeriesEqual(t, wantSeries, got)
}

func TestGoldenSamples(t *testing.T) {
	var enc Encoder
	require.Equal(t, goldenSamples, enc.Samples(wantSamples, nil))
	var dec Decoder
	got, err := dec.Samples(goldenSamples, nil)
	require.NoError(t, err)
	requireSamplesEqual(t, wantSamples, got)
	require.Equal(t, uint64(staleNaN), math.Float64bits(got[1].V))
}

func TestGoldenSamplesV2(t *testing.T) {
	want := []RefSample{
		{Ref: 10, T: 1000, V: 1.5},
		{Ref: 9, T: 1015, V: math.Float64frombits(staleNaN)},
		{Ref: 300, ST: 7, T: 900, V: -2},
		{Ref: 300, ST: 7, T: 1000, V: 0},
	}
	var enc Encoder
	require.Equal(t, goldenSamplesV2, enc.SamplesV2(want, nil))
	var dec Decoder
	got, err := dec.Samples(goldenSamplesV2, nil)
	require.NoError(t, err)
	requireSamplesEqual(t, want, got)
	// Appending to samples decoded earlier starts a new record's deltas.
	got, err = dec.Samples(goldenSamplesV2, got)
	require.NoError(t, err)
	requireSamplesEqual(t, append(append([]RefSample(nil), want...), want...), got)
}

func TestGoldenTombstones(t *testing.T) {
	var enc Encoder
	in := []Stone{
		{Ref: 5, Intervals: tombstones.Intervals{{Mint: 0, Maxt: 100}, {Mint: 200, Maxt: 300}}},
		{Ref: 7}, // no intervals: encodes to nothing
		{Ref: 6, Intervals: tombstones.Intervals{{Mint: -5, Maxt: 5}}},
	}
	require.Equal(t, goldenTombstones, enc.Tombstones(in, nil))
	var dec Decoder
	got, err := dec.Tombstones(goldenTombstones, nil)
	require.NoError(t, err)
	require.Equal(t, wantStones, got)
}

func TestEmptyRecords(t *testing.T) {
	var enc Encoder
	var dec Decoder
	require.Equal(t, []byte{0x01}, enc.Series(nil, nil))
	require.Equal(t, []byte{0x02}, enc.Samples(nil, nil))
	require.Equal(t, []byte{0x03}, enc.Tombstones(nil, nil))

	s, err := dec.Series([]byte{0x01}, nil)
	require.NoError(t, err)
	require.Empty(t, s)
	smp, err := dec.Samples([]byte{0x02}, nil)
	require.NoError(t, err)
	require.Empty(t, smp)
	smp, err = dec.Samples([]byte{0x0b}, nil)
	require.NoError(t, err)
	require.Empty(t, smp)
	st, err := dec.Tombstones([]byte{0x03}, nil)
	require.NoError(t, err)
	require.Empty(t, st)
}

func TestRecordType(t *testing.T) {
	for _, tc := range []struct {
		rec  []byte
		want Type
		name string
	}{
		{nil, Unknown, "unknown"},
		{[]byte{0}, Unknown, "unknown"},
		{[]byte{1, 9}, Series, "series"},
		{[]byte{2}, Samples, "samples"},
		{[]byte{3}, Tombstones, "tombstones"},
		{[]byte{4}, Exemplars, "exemplars"},
		{[]byte{5}, MmapMarkers, "mmap_markers"},
		{[]byte{6}, Metadata, "metadata"},
		{[]byte{7}, HistogramSamples, "histogram_samples"},
		{[]byte{8}, FloatHistogramSamples, "float_histogram_samples"},
		{[]byte{9}, CustomBucketsHistogramSamples, "custom_buckets_histogram_samples"},
		{[]byte{10}, CustomBucketsFloatHistogramSamples, "custom_buckets_float_histogram_samples"},
		{[]byte{11}, SamplesV2, "samples_v2"},
		{[]byte{12}, HistogramSamplesV2, "histogram_samples_v2"},
		{[]byte{13}, FloatHistogramSamplesV2, "float_histogram_samples_v2"},
		{[]byte{14}, MinValidTime, "min_valid_time"},
		{[]byte{15}, Unknown, "unknown"},
		{[]byte{255}, Unknown, "unknown"},
	} {
		require.Equal(t, tc.want, RecordType(tc.rec), "%v", tc.rec)
		require.Equal(t, tc.name, RecordType(tc.rec).String())
	}
}

func TestDecodeWrongType(t *testing.T) {
	var dec Decoder
	_, err := dec.Series(goldenSamples, nil)
	require.ErrorIs(t, err, ErrWrongType)
	_, err = dec.Samples(goldenSeries, nil)
	require.ErrorIs(t, err, ErrWrongType)
	_, err = dec.Tombstones(nil, nil)
	require.ErrorIs(t, err, ErrWrongType)
	_, err = dec.Samples([]byte{byte(HistogramSamples)}, nil)
	require.ErrorIs(t, err, ErrWrongType)
}

func TestDecodeCorrupt(t *testing.T) {
	withByte := func(b []byte, i int, v byte) []byte {
		c := append([]byte(nil), b...)
		c[i] = v
		return c
	}
	for _, tc := range []struct {
		name string
		rec  []byte
		dec  func(d *Decoder, rec []byte) error
	}{
		{"series truncated ref", goldenSeries[:5], decSeries},
		{"series truncated label", goldenSeries[:15], decSeries},
		{"series string past end", withByte(goldenSeries, 10, 0x7f), decSeries},
		{"series label count too large", cat([]byte{1}, be64(1), []byte{0xff, 0xff, 0x03}), decSeries},
		{"series unsorted labels", cat([]byte{1}, be64(1), []byte{2, 1, 'b', 0, 1, 'a', 0}), decSeries},
		{"series duplicate names", cat([]byte{1}, be64(1), []byte{2, 1, 'a', 0, 1, 'a', 0}), decSeries},
		{"series varint overflow", cat([]byte{1}, be64(1), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), decSeries},
		{"samples short base", goldenSamples[:9], decSamples},
		{"samples truncated value", goldenSamples[:len(goldenSamples)-1], decSamples},
		{"samples truncated varint", cat(goldenSamples[:17], []byte{0x80}), decSamples},
		{"samplesv2 bad marker", withByte(goldenSamplesV2, 1+4+8+2, 7), decSamples},
		{"samplesv2 truncated", goldenSamplesV2[:len(goldenSamplesV2)-3], decSamples},
		{"tombstones truncated", goldenTombstones[:len(goldenTombstones)-1], decStones},
		{"tombstones short ref", goldenTombstones[:4], decStones},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			require.ErrorIs(t, tc.dec(&d, tc.rec), corrupt.ErrCorrupt)
		})
	}
}

func decSeries(d *Decoder, rec []byte) error {
	out := []RefSeries{{Ref: 99}}
	got, err := d.Series(rec, out)
	if err != nil && (len(got) != 1 || got[0].Ref != 99) {
		panic("Series did not return out unchanged on error")
	}
	return err
}

func decSamples(d *Decoder, rec []byte) error {
	out := []RefSample{{Ref: 99}}
	got, err := d.Samples(rec, out)
	if err != nil && (len(got) != 1 || got[0].Ref != 99) {
		panic("Samples did not return out unchanged on error")
	}
	return err
}

func decStones(d *Decoder, rec []byte) error {
	out := []Stone{{Ref: 99}}
	got, err := d.Tombstones(rec, out)
	if err != nil && (len(got) != 1 || got[0].Ref != 99) {
		panic("Tombstones did not return out unchanged on error")
	}
	return err
}

func TestDecodeAppends(t *testing.T) {
	var dec Decoder
	prev := []RefSample{{Ref: 1, T: 2, V: 3}}
	got, err := dec.Samples(goldenSamples, prev)
	require.NoError(t, err)
	requireSamplesEqual(t, append([]RefSample{{Ref: 1, T: 2, V: 3}}, wantSamples...), got)
}

func TestSeriesLabelsDoNotAliasRecord(t *testing.T) {
	rec := append([]byte(nil), goldenSeries...)
	var dec Decoder
	got, err := dec.Series(rec, nil)
	require.NoError(t, err)
	for i := range rec {
		rec[i] = 'X'
	}
	requireSeriesEqual(t, wantSeries, got)
}

func TestSamplesExtremeDeltas(t *testing.T) {
	in := []RefSample{
		{Ref: math.MaxUint64, T: math.MinInt64, V: math.Inf(1)},
		{Ref: 0, T: math.MaxInt64, V: math.Copysign(0, -1)},
		{Ref: 1 << 63, T: 0, V: math.Float64frombits(0x7ff8dead0000beef)},
	}
	var enc Encoder
	var dec Decoder
	got, err := dec.Samples(enc.Samples(in, nil), nil)
	require.NoError(t, err)
	requireSamplesEqual(t, in, got)
}

func TestEncoderDoesNotAllocate(t *testing.T) {
	var enc Encoder
	series := []RefSeries{{Ref: 1, Labels: labels.FromStrings("__name__", "up", "job", "a", "instance", "localhost:9090")}}
	samples := make([]RefSample, 100)
	for i := range samples {
		samples[i] = RefSample{Ref: uint64(i), T: int64(i * 15000), V: float64(i)}
	}
	stones := []Stone{{Ref: 1, Intervals: tombstones.Intervals{{Mint: 1, Maxt: 2}, {Mint: 5, Maxt: 9}}}}
	buf := make([]byte, 0, 1<<14)
	for name, f := range map[string]func(){
		"series":     func() { buf = enc.Series(series, buf[:0]) },
		"samples":    func() { buf = enc.Samples(samples, buf[:0]) },
		"tombstones": func() { buf = enc.Tombstones(stones, buf[:0]) },
	} {
		require.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}
