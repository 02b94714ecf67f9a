package record

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/labels"
)

// goldenExemplars is the Exemplars record of wantExemplars, byte by byte
// as Prometheus's format has it (base ref and time be64, then per
// exemplar ref and time deltas as varints, value bits be64, labels).
var goldenExemplars = []byte{
	0x04,
	0, 0, 0, 0, 0, 0, 0, 10, // base ref 10
	0, 0, 0, 0, 0, 0, 0x03, 0xe8, // base time 1000
	// {ref 10, t 1000, v 1.5, trace_id="ab"}
	0x00, 0x00,
	0x3f, 0xf8, 0, 0, 0, 0, 0, 0,
	0x01, 0x08, 't', 'r', 'a', 'c', 'e', '_', 'i', 'd', 0x02, 'a', 'b',
	// {ref 9 (delta -1 -> 0x01), t 1015 (delta 15 -> 0x1e), v -2, no labels}
	0x01, 0x1e,
	0xc0, 0, 0, 0, 0, 0, 0, 0,
	0x00,
}

var wantExemplars = []RefExemplar{
	{Ref: 10, T: 1000, V: 1.5, Labels: labels.FromStrings("trace_id", "ab")},
	{Ref: 9, T: 1015, V: -2, Labels: labels.EmptyLabels()},
}

func requireExemplarsEqual(t *testing.T, want, got []RefExemplar) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Ref, got[i].Ref, "exemplar %d", i)
		require.Equal(t, want[i].T, got[i].T, "exemplar %d", i)
		require.Equal(t, math.Float64bits(want[i].V), math.Float64bits(got[i].V), "exemplar %d", i)
		require.True(t, labels.Equal(want[i].Labels, got[i].Labels), "exemplar %d: labels %s, want %s", i, got[i].Labels, want[i].Labels)
	}
}

func TestGoldenExemplars(t *testing.T) {
	var enc Encoder
	require.Equal(t, goldenExemplars, enc.Exemplars(wantExemplars, nil))
	var dec Decoder
	got, err := dec.Exemplars(goldenExemplars, nil)
	require.NoError(t, err)
	requireExemplarsEqual(t, wantExemplars, got)
	require.Equal(t, Exemplars, RecordType(goldenExemplars))
}

func TestExemplarsEmptyAndWrongType(t *testing.T) {
	var enc Encoder
	var dec Decoder
	require.Equal(t, []byte{0x04}, enc.Exemplars(nil, nil))
	got, err := dec.Exemplars([]byte{0x04}, nil)
	require.NoError(t, err)
	require.Empty(t, got)
	_, err = dec.Exemplars(goldenSamples, nil)
	require.ErrorIs(t, err, ErrWrongType)
	_, err = dec.Exemplars(nil, nil)
	require.ErrorIs(t, err, ErrWrongType)
	// And the other decoders refuse an Exemplars record.
	_, err = dec.Samples(goldenExemplars, nil)
	require.ErrorIs(t, err, ErrWrongType)
}

// TestExemplarsUnsortedLabels: a record whose exemplar labels are not in
// name order (Prometheus writes them as they came) decodes, sorted.
func TestExemplarsUnsortedLabels(t *testing.T) {
	rec := []byte{0x04, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x02, 0x01, 'z', 0x01, '1', 0x01, 'a', 0x01, '2'}
	var dec Decoder
	got, err := dec.Exemplars(rec, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, `{a="2", z="1"}`, got[0].Labels.String())
}

// TestExemplarsCorrupt: every truncation of the golden record and a few
// lies about sizes are reported as corruption, leave out unchanged and
// allocate nothing outsized.
func TestExemplarsCorrupt(t *testing.T) {
	var dec Decoder
	prefix := []RefExemplar{{Ref: 1}}
	// The golden record is 51 bytes: type, base (16), a first exemplar of
	// 23 bytes and a second of 11. Cut after the base or after the first
	// exemplar, it decodes (to fewer exemplars); cut anywhere else, it is
	// corrupt.
	require.Len(t, goldenExemplars, 51)
	for n := 2; n < len(goldenExemplars); n++ {
		out, err := dec.Exemplars(goldenExemplars[:n], prefix)
		switch n {
		case 17, 40:
			require.NoError(t, err, "cut at %d", n)
			require.Len(t, out, 1+(n-17)/23, "cut at %d", n)
		default:
			require.ErrorIs(t, err, corrupt.ErrCorrupt, "cut at %d", n)
			require.Len(t, out, 1, "cut at %d", n)
		}
	}
	huge := append(append([]byte(nil), goldenExemplars[:17+2+8]...), 0xff, 0xff, 0xff, 0xff, 0x0f)
	_, err := dec.Exemplars(huge, nil)
	require.ErrorIs(t, err, corrupt.ErrCorrupt)
	longName := append(append([]byte(nil), goldenExemplars[:17+2+8]...), 0x01, 0x7f, 'x')
	_, err = dec.Exemplars(longName, nil)
	require.ErrorIs(t, err, corrupt.ErrCorrupt)
}

func TestExemplarsExtremeValues(t *testing.T) {
	in := []RefExemplar{
		{Ref: math.MaxUint64, T: math.MaxInt64, V: math.Float64frombits(staleNaN), Labels: labels.FromStrings("a", "b")},
		{Ref: 0, T: math.MinInt64, V: math.Inf(-1), Labels: labels.FromStrings("trace_id", "ü", "span_id", "")},
		{Ref: 1 << 63, T: 0, V: math.Copysign(0, -1)},
	}
	var enc Encoder
	var dec Decoder
	got, err := dec.Exemplars(enc.Exemplars(in, nil), nil)
	require.NoError(t, err)
	requireExemplarsEqual(t, in, got)
}

// TestExemplarLabelsDoNotAliasRecord: decoded labels survive the record
// buffer being overwritten.
func TestExemplarLabelsDoNotAliasRecord(t *testing.T) {
	rec := append([]byte(nil), goldenExemplars...)
	var dec Decoder
	got, err := dec.Exemplars(rec, nil)
	require.NoError(t, err)
	clear(rec)
	require.Equal(t, "ab", got[0].Labels.Get("trace_id"))
}

// FuzzExemplarsRoundTrip checks that any exemplars encode and decode to
// themselves.
func FuzzExemplarsRoundTrip(f *testing.F) {
	f.Add(uint64(10), int64(1000), uint64(0x3ff8000000000000), "trace_id", "ab", uint64(9), int64(1015))
	f.Add(uint64(math.MaxUint64), int64(math.MinInt64), uint64(staleNaN), "", "", uint64(0), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, r1 uint64, t1 int64, v1 uint64, name, value string, r2 uint64, t2 int64) {
		ls := labels.EmptyLabels()
		if name != "" && value != "" {
			ls = labels.FromStrings(name, value)
		}
		in := []RefExemplar{
			{Ref: r1, T: t1, V: math.Float64frombits(v1), Labels: ls},
			{Ref: r2, T: t2, V: math.Float64frombits(^v1)},
			{Ref: r1 - r2, T: t1 ^ t2, V: 1, Labels: ls},
		}
		var enc Encoder
		var dec Decoder
		got, err := dec.Exemplars(enc.Exemplars(in, nil), nil)
		require.NoError(t, err)
		requireExemplarsEqual(t, in, got)
	})
}

// FuzzExemplarsDecode feeds arbitrary bytes to the exemplar decoder: it
// never panics, fails with a corruption or wrong-type error only, and
// what decodes re-encodes to something that decodes the same.
func FuzzExemplarsDecode(f *testing.F) {
	for _, seed := range [][]byte{goldenExemplars, {4}, {4, 0}, nil, goldenSamples} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		var dec Decoder
		var enc Encoder
		got, err := dec.Exemplars(rec, nil)
		if err != nil {
			require.True(t, errors.Is(err, ErrWrongType) || errors.Is(err, corrupt.ErrCorrupt), "unexpected error %v", err)
			return
		}
		again, err := dec.Exemplars(enc.Exemplars(got, nil), nil)
		require.NoError(t, err, "re-decode")
		requireExemplarsEqual(t, got, again)
	})
}
