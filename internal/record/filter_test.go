package record

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// checkFilterSeries checks FilterSeries on rec against Series: the same
// verdict on whether rec is valid and, if it is, an output that decodes to
// exactly the series Series returns that keep accepts.
func checkFilterSeries(t *testing.T, rec []byte, keep func(uint64) bool) {
	t.Helper()
	var dec Decoder
	prefix := []byte{7, 7}
	want, werr := dec.Series(rec, nil)
	out, total, kept, err := dec.FilterSeries(rec, keep, prefix)
	require.Equal(t, werr == nil, err == nil, "Series: %v, FilterSeries: %v", werr, err)
	require.Equal(t, prefix, out[:len(prefix)], "the prefix is kept")
	if err != nil {
		require.Len(t, out, len(prefix), "nothing appended on error")
		return
	}
	var wantKept []RefSeries
	for _, s := range want {
		if keep(s.Ref) {
			wantKept = append(wantKept, s)
		}
	}
	require.Equal(t, len(want), total)
	require.Equal(t, len(wantKept), kept)
	if kept == 0 {
		require.Len(t, out, len(prefix), "nothing appended when nothing is kept")
		return
	}
	got, err := dec.Series(out[len(prefix):], nil)
	require.NoError(t, err)
	require.Len(t, got, len(wantKept))
	for i := range got {
		require.Equal(t, wantKept[i].Ref, got[i].Ref)
		require.True(t, labels.Equal(wantKept[i].Labels, got[i].Labels), "series %d", i)
	}
}

// TestFilterSeries checks FilterSeries against Series on random records,
// with every share of the series kept, and on the records' damaged forms.
func TestFilterSeries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var enc Encoder
	for range 300 {
		n := rng.IntN(20)
		in := make([]RefSeries, n)
		for i := range in {
			var kv []string
			for l := range rng.IntN(6) {
				kv = append(kv, string(rune('a'+l)), string(make([]byte, rng.IntN(300))))
			}
			in[i] = RefSeries{Ref: rng.Uint64(), Labels: labels.FromStrings(kv...)}
		}
		rec := enc.Series(in, nil)
		mod := uint64(1 + rng.IntN(4))
		keep := func(ref uint64) bool { return ref%mod == 0 }
		checkFilterSeries(t, rec, keep)
		checkFilterSeries(t, rec, func(uint64) bool { return true })
		checkFilterSeries(t, rec, func(uint64) bool { return false })
		// Damage: cut it short, or flip a byte.
		if len(rec) > 1 {
			checkFilterSeries(t, rec[:1+rng.IntN(len(rec)-1)], keep)
			bad := append([]byte(nil), rec...)
			bad[1+rng.IntN(len(bad)-1)] ^= byte(1 + rng.IntN(255))
			checkFilterSeries(t, bad, keep)
		}
	}
	// Unsorted names are refused, as by Series.
	rec := enc.Series([]RefSeries{{Ref: 1, Labels: labels.FromStrings("a", "1", "b", "2")}}, nil)
	i := len(rec) - 3 // the 'b' of the second name
	require.Equal(t, byte('b'), rec[i])
	rec[i] = 'a'
	_, _, _, err := new(Decoder).FilterSeries(rec, func(uint64) bool { return true }, nil)
	require.ErrorContains(t, err, "does not sort after")
}

// FuzzFilterSeries checks FilterSeries against Series on any record.
func FuzzFilterSeries(f *testing.F) {
	f.Add(goldenSeries, uint8(2))
	f.Add([]byte{1}, uint8(1))
	f.Fuzz(func(t *testing.T, rec []byte, mod uint8) {
		m := uint64(mod) + 1
		checkFilterSeries(t, rec, func(ref uint64) bool { return ref%m == 0 })
	})
}
