package record

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/corrupt"
)

// goldenMetadata is a Metadata record as Prometheus lays it out: for each
// entry the ref as a uvarint, the type byte, the field count 2, then
// "UNIT" and the unit, "HELP" and the help, each a uvarint length and the
// bytes.
var goldenMetadata = mustHex("06" +
	"05" + "01" + "02" + "04554e4954" + "0173" + "0448454c50" + "0168" + // ref 5, counter, unit "s", help "h"
	"ac02" + "02" + "02" + "04554e4954" + "00" + "0448454c50" + "00") // ref 300, gauge, empty

var goldenMetadataEntries = []RefMetadata{
	{Ref: 5, Type: MetricTypeCounter, Unit: "s", Help: "h"},
	{Ref: 300, Type: MetricTypeGauge},
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestGoldenMetadata(t *testing.T) {
	var enc Encoder
	require.Equal(t, hex.EncodeToString(goldenMetadata), hex.EncodeToString(enc.Metadata(goldenMetadataEntries, nil)))
	require.Equal(t, Metadata, RecordType(goldenMetadata))
	var dec Decoder
	got, err := dec.Metadata(goldenMetadata, nil)
	require.NoError(t, err)
	require.Equal(t, goldenMetadataEntries, got)
}

func TestMetadataEmptyRecord(t *testing.T) {
	var enc Encoder
	rec := enc.Metadata(nil, nil)
	require.Equal(t, []byte{byte(Metadata)}, rec)
	var dec Decoder
	got, err := dec.Metadata(rec, nil)
	require.NoError(t, err)
	require.Empty(t, got)
}

// TestMetadataFields: the decoder skips fields it does not know, takes the
// last of a repeated one, leaves a missing one empty and keeps a type byte
// it has no name for.
func TestMetadataFields(t *testing.T) {
	rec := []byte{byte(Metadata), 7, 42, 4}
	rec = appendString(appendString(rec, "NEW"), "x")
	rec = appendString(appendString(rec, metaFieldHelp), "first")
	rec = appendString(appendString(rec, metaFieldHelp), "second")
	rec = appendString(appendString(rec, ""), "")
	rec = append(rec, 8, MetricTypeInfo, 0) // ref 8: no fields
	var dec Decoder
	got, err := dec.Metadata(rec, nil)
	require.NoError(t, err)
	require.Equal(t, []RefMetadata{{Ref: 7, Type: 42, Help: "second"}, {Ref: 8, Type: MetricTypeInfo}}, got)
}

func TestMetadataDecodeCorrupt(t *testing.T) {
	cases := map[string][]byte{
		"no type byte":      {byte(Metadata), 5},
		"no field count":    {byte(Metadata), 5, 1},
		"count beyond data": {byte(Metadata), 5, 1, 3, 0, 0},
		"huge count":        {byte(Metadata), 5, 1, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"truncated value":   append(appendString([]byte{byte(Metadata), 5, 1, 1}, metaFieldUnit), 3, 'a'),
		"overlong ref":      {byte(Metadata), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"torn golden":       goldenMetadata[:len(goldenMetadata)-1],
	}
	for name, rec := range cases {
		t.Run(name, func(t *testing.T) {
			var dec Decoder
			out := []RefMetadata{{Ref: 1}}
			got, err := dec.Metadata(rec, out)
			require.Error(t, err)
			require.True(t, errors.Is(err, corrupt.ErrCorrupt), "%v", err)
			require.Equal(t, out, got, "output must be unchanged on error")
		})
	}
	var dec Decoder
	_, err := dec.Metadata(goldenSamples, nil)
	require.ErrorIs(t, err, ErrWrongType)
	_, err = dec.Metadata(nil, nil)
	require.ErrorIs(t, err, ErrWrongType)
}

// TestMetadataDoesNotAliasRecord: the strings survive the record's buffer
// being overwritten (the WAL reader reuses it).
func TestMetadataDoesNotAliasRecord(t *testing.T) {
	rec := append([]byte(nil), goldenMetadata...)
	var dec Decoder
	got, err := dec.Metadata(rec, nil)
	require.NoError(t, err)
	clear(rec)
	require.Equal(t, goldenMetadataEntries, got)
}

// FuzzMetadataRoundTrip checks that any metadata encodes and decodes to
// itself.
func FuzzMetadataRoundTrip(f *testing.F) {
	f.Add(uint64(5), uint8(1), "seconds", "Total time.", uint64(1<<40), uint8(255), "", "")
	f.Fuzz(func(t *testing.T, r1 uint64, t1 uint8, u1, h1 string, r2 uint64, t2 uint8, u2, h2 string) {
		in := []RefMetadata{{Ref: r1, Type: t1, Unit: u1, Help: h1}, {Ref: r2, Type: t2, Unit: u2, Help: h2}}
		var enc Encoder
		var dec Decoder
		rec := enc.Metadata(in, nil)
		require.Equal(t, Metadata, RecordType(rec))
		got, err := dec.Metadata(rec, nil)
		require.NoError(t, err)
		require.Equal(t, in, got)
	})
}

// FuzzMetadataDecode feeds arbitrary bytes to the Metadata decoder: it
// must not panic, an error must be a wrong type or corruption, and what
// decodes must re-encode to something that decodes the same.
func FuzzMetadataDecode(f *testing.F) {
	for _, seed := range [][]byte{goldenMetadata, {6}, {6, 1, 2, 0}, {6, 1, 2, 9}, nil} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		var enc Encoder
		var dec Decoder
		m, err := dec.Metadata(rec, nil)
		if err != nil {
			require.True(t, errors.Is(err, ErrWrongType) || errors.Is(err, corrupt.ErrCorrupt), "%v", err)
			return
		}
		again, err := dec.Metadata(enc.Metadata(m, nil), nil)
		require.NoError(t, err)
		require.Equal(t, len(m), len(again))
		for i := range m {
			require.Equal(t, m[i], again[i])
		}
	})
}
