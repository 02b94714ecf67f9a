package record

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
)

// FuzzSeriesRoundTrip checks that any series encodes and decodes to itself.
func FuzzSeriesRoundTrip(f *testing.F) {
	f.Add(uint64(1), "__name__", "up", "job", "a")
	f.Add(uint64(math.MaxUint64), "", "", "b", "")
	f.Fuzz(func(t *testing.T, ref uint64, n1, v1, n2, v2 string) {
		ls := labels.FromStrings(n1, v1)
		if n1 != n2 {
			ls = labels.FromStrings(n1, v1, n2, v2)
		}
		in := []RefSeries{{Ref: ref, Labels: ls}, {Ref: ref ^ 1, Labels: labels.EmptyLabels()}}
		var enc Encoder
		var dec Decoder
		got, err := dec.Series(enc.Series(in, nil), nil)
		require.NoError(t, err, "decode")
		require.Len(t, got, len(in), "got %d series, want %d", len(got), len(in))
		for i := range in {
			require.False(t, got[i].Ref != in[i].Ref || !labels.Equal(got[i].Labels, in[i].Labels), "series %d: got %d %s, want %d %s", i, got[i].Ref, got[i].Labels, in[i].Ref, in[i].Labels)
		}
	})
}

// FuzzSamplesRoundTrip checks that any samples, NaN payloads included,
// encode and decode to themselves.
func FuzzSamplesRoundTrip(f *testing.F) {
	f.Add(uint64(10), int64(1000), uint64(0x3ff8000000000000), uint64(9), int64(1015), uint64(staleNaN))
	f.Add(uint64(math.MaxUint64), int64(math.MinInt64), uint64(0), uint64(0), int64(math.MaxInt64), uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, r1 uint64, t1 int64, v1 uint64, r2 uint64, t2 int64, v2 uint64) {
		in := []RefSample{
			{Ref: r1, T: t1, V: math.Float64frombits(v1)},
			{Ref: r2, T: t2, V: math.Float64frombits(v2)},
			{Ref: r1 + r2, T: t1 - t2, V: math.Float64frombits(v1 ^ v2)},
		}
		var enc Encoder
		var dec Decoder
		got, err := dec.Samples(enc.Samples(in, nil), nil)
		require.NoError(t, err, "decode")
		require.Len(t, got, len(in), "got %d samples, want %d", len(got), len(in))
		for i := range in {
			require.False(t, got[i].Ref != in[i].Ref || got[i].T != in[i].T || math.Float64bits(got[i].V) != math.Float64bits(in[i].V), "sample %d: got %+v, want %+v", i, got[i], in[i])
		}
	})
}

// FuzzSamplesV2RoundTrip checks that any samples with any start
// timestamps encode and decode to themselves in SamplesV2 records.
func FuzzSamplesV2RoundTrip(f *testing.F) {
	f.Add(uint64(10), int64(1000), int64(0), uint64(0x3ff8000000000000), uint64(9), int64(1015), int64(7), uint64(staleNaN))
	f.Add(uint64(math.MaxUint64), int64(math.MinInt64), int64(math.MaxInt64), uint64(0), uint64(0), int64(math.MaxInt64), int64(math.MinInt64), uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, r1 uint64, t1, st1 int64, v1 uint64, r2 uint64, t2, st2 int64, v2 uint64) {
		in := []RefSample{
			{Ref: r1, ST: st1, T: t1, V: math.Float64frombits(v1)},
			{Ref: r2, ST: st2, T: t2, V: math.Float64frombits(v2)},
			{Ref: r2, ST: st2, T: t2 + 1, V: math.Float64frombits(v2)},
			{Ref: r1 + r2, ST: 0, T: t1 - t2, V: math.Float64frombits(v1 ^ v2)},
			{Ref: r1, ST: st1 - st2, T: t1 ^ t2, V: math.Float64frombits(v1)},
		}
		var enc Encoder
		var dec Decoder
		rec := enc.SamplesV2(in, nil)
		require.Equal(t, SamplesV2, RecordType(rec))
		got, err := dec.Samples(rec, nil)
		require.NoError(t, err, "decode")
		require.Len(t, got, len(in), "got %d samples, want %d", len(got), len(in))
		for i := range in {
			require.False(t, got[i].Ref != in[i].Ref || got[i].T != in[i].T || got[i].ST != in[i].ST || math.Float64bits(got[i].V) != math.Float64bits(in[i].V), "sample %d: got %+v, want %+v", i, got[i], in[i])
		}
	})
}

// FuzzTombstonesRoundTrip checks that tombstone intervals encode and decode
// to themselves (one Stone per interval).
func FuzzTombstonesRoundTrip(f *testing.F) {
	f.Add(uint64(5), int64(0), int64(100), uint64(6), int64(-5), int64(5))
	f.Fuzz(func(t *testing.T, r1 uint64, a1, b1 int64, r2 uint64, a2, b2 int64) {
		in := []Stone{
			{Ref: r1, Intervals: tombstones.Intervals{{Mint: a1, Maxt: b1}, {Mint: a2, Maxt: b2}}},
			{Ref: r2, Intervals: tombstones.Intervals{{Mint: b2, Maxt: a1}}},
		}
		var want []Stone
		for _, s := range in {
			for _, iv := range s.Intervals {
				want = append(want, Stone{Ref: s.Ref, Intervals: tombstones.Intervals{iv}})
			}
		}
		var enc Encoder
		var dec Decoder
		got, err := dec.Tombstones(enc.Tombstones(in, nil), nil)
		require.NoError(t, err, "decode")
		require.Len(t, got, len(want), "got %d stones, want %d", len(got), len(want))
		for i := range want {
			require.False(t, got[i].Ref != want[i].Ref || len(got[i].Intervals) != 1 || got[i].Intervals[0] != want[i].Intervals[0], "stone %d: got %+v, want %+v", i, got[i], want[i])
		}
	})
}

// FuzzDecode feeds arbitrary bytes to every decoder. None may panic, and
// whatever decodes must re-encode to something that decodes the same (the
// input itself may use non-minimal varints, so bytes are not compared).
func FuzzDecode(f *testing.F) {
	for _, seed := range [][]byte{goldenSeries, goldenSamples, goldenSamplesV2, goldenTombstones, goldenMetadata, goldenExemplars, {4}, {1}, {2}, {3}, {11}, {200, 3}, {200, 0}, {200, 0xff, 0xff, 0xff, 0xff, 0x0f}, {201, 2}, {201, 0}, {5}, {5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2}, {5, 1}, nil} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		_ = RecordType(rec).String()
		var enc Encoder
		var dec Decoder
		if s, err := dec.Series(rec, nil); err == nil {
			again, err := dec.Series(enc.Series(s, nil), nil)
			require.NoError(t, err, "series re-decode")
			require.Len(t, again, len(s), "series re-decode")
			for i := range s {
				require.False(t, again[i].Ref != s[i].Ref || !labels.Equal(again[i].Labels, s[i].Labels), "series %d changed on re-encoding", i)
			}
		}
		if s, err := dec.Samples(rec, nil); err == nil {
			again, err := dec.Samples(enc.Samples(s, nil), nil)
			require.NoError(t, err, "samples re-decode")
			require.Len(t, again, len(s), "samples re-decode")
			for i := range s {
				require.False(t, again[i].Ref != s[i].Ref || again[i].T != s[i].T || math.Float64bits(again[i].V) != math.Float64bits(s[i].V), "sample %d changed on re-encoding", i)
			}
		}
		if e, err := dec.Exemplars(rec, nil); err == nil {
			again, err := dec.Exemplars(enc.Exemplars(e, nil), nil)
			require.NoError(t, err, "exemplars re-decode")
			requireExemplarsEqual(t, e, again)
		}
		if n, err := dec.CommitGroup(rec); err == nil {
			again, err := dec.CommitGroup(enc.CommitGroup(n, nil))
			require.NoError(t, err, "commit group re-decode")
			require.Equal(t, n, again, "commit group re-decode")
			require.Positive(t, n, "a commit group announces at least one record")
		}
		if n, err := dec.WBLCopy(rec); err == nil {
			again, err := dec.WBLCopy(enc.WBLCopy(n, nil))
			require.NoError(t, err, "WBL copy re-decode")
			require.Equal(t, n, again, "WBL copy re-decode")
			require.Positive(t, n, "a WBL copy record announces at least one record")
		}
		if m, err := dec.MmapMarkers(rec, nil); err == nil {
			again, err := dec.MmapMarkers(enc.MmapMarkers(m, nil), nil)
			require.NoError(t, err, "mmap markers re-decode")
			require.Equal(t, m, again, "mmap markers re-decode")
		}
		if m, err := dec.Metadata(rec, nil); err == nil {
			again, err := dec.Metadata(enc.Metadata(m, nil), nil)
			require.NoError(t, err, "metadata re-decode")
			require.Equal(t, len(m), len(again), "metadata re-decode")
			for i := range m {
				require.Equal(t, m[i], again[i], "metadata entry %d changed on re-encoding", i)
			}
		}
		if s, err := dec.Tombstones(rec, nil); err == nil {
			again, err := dec.Tombstones(enc.Tombstones(s, nil), nil)
			require.NoError(t, err, "tombstones re-decode")
			require.Len(t, again, len(s), "tombstones re-decode")
			for i := range s {
				require.False(t, again[i].Ref != s[i].Ref || again[i].Intervals[0] != s[i].Intervals[0], "tombstone %d changed on re-encoding", i)
			}
		}
	})
}
