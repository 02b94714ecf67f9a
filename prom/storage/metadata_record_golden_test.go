package promstorage_test

import (
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/prometheus/tsdb/chunks"
	precord "github.com/prometheus/prometheus/tsdb/record"
	"github.com/stretchr/testify/require"
)

// Metadata WAL records (6) are checked against Prometheus through a golden
// file like the sample records (sample_record_golden_test.go): this test
// writes it from Prometheus's Encoder with -update-records and otherwise
// requires that Prometheus still encodes the entries in it to the stored
// bytes and decodes the stored bytes to the entries; TestPromMetadataRecords
// in internal/record requires the same of ours.

var metadataRecordsFile = filepath.Join("..", "..", "internal", "record", "testdata", "prom_metadata_records.json")

// goldenMetadataCase is a list of metadata entries and the Metadata record
// Prometheus writes for them.
type goldenMetadataCase struct {
	Name    string                `json:"name"`
	Entries []goldenMetadataEntry `json:"entries"`
	Record  string                `json:"record"` // hex
}

type goldenMetadataEntry struct {
	Ref  uint64 `json:"ref"`
	Type uint8  `json:"type"`
	Unit string `json:"unit"`
	Help string `json:"help"`
}

func goldenMetadataCases() []goldenMetadataCase {
	sets := []struct {
		name    string
		entries []goldenMetadataEntry
	}{
		{"empty", nil},
		{"one", []goldenMetadataEntry{{Ref: 1, Type: uint8(precord.Counter), Unit: "seconds", Help: "Total seconds."}}},
		{"every type", []goldenMetadataEntry{
			{Ref: 0, Type: uint8(precord.UnknownMT)},
			{Ref: 127, Type: uint8(precord.Counter)},
			{Ref: 128, Type: uint8(precord.Gauge), Unit: "bytes"},
			{Ref: 300, Type: uint8(precord.HistogramSample), Help: "Latency."},
			{Ref: 1 << 32, Type: uint8(precord.GaugeHistogram)},
			{Ref: 1 << 40, Type: uint8(precord.Summary), Unit: "s", Help: "h"},
			{Ref: 1<<63 + 5, Type: uint8(precord.Info), Help: "ünïcödé ✓"},
			{Ref: ^uint64(0), Type: uint8(precord.Stateset), Help: "line one\nline \"two\" \\ three"},
		}},
		{"long help", []goldenMetadataEntry{{Ref: 9, Type: uint8(precord.Gauge), Help: string(make([]byte, 300))}}},
	}
	var cases []goldenMetadataCase
	for _, s := range sets {
		c := goldenMetadataCase{Name: s.name, Entries: s.entries}
		c.Record = hex.EncodeToString(promEncodeMetadata(c))
		cases = append(cases, c)
	}
	return cases
}

func promEncodeMetadata(c goldenMetadataCase) []byte {
	m := make([]precord.RefMetadata, len(c.Entries))
	for i, e := range c.Entries {
		m[i] = precord.RefMetadata{Ref: chunks.HeadSeriesRef(e.Ref), Type: e.Type, Unit: e.Unit, Help: e.Help}
	}
	var enc precord.Encoder
	return enc.Metadata(m, nil)
}

// TestMetadataRecordGolden checks Prometheus against the golden file (or
// rewrites it with -update-records).
func TestMetadataRecordGolden(t *testing.T) {
	if *updateRecords {
		out := []byte("[\n")
		for i, c := range goldenMetadataCases() {
			b, err := json.Marshal(c)
			require.NoError(t, err)
			if i > 0 {
				out = append(out, ",\n"...)
			}
			out = append(out, b...)
		}
		out = append(out, "\n]\n"...)
		require.NoError(t, os.WriteFile(metadataRecordsFile, out, 0o644))
	}
	b, err := os.ReadFile(metadataRecordsFile)
	require.NoError(t, err)
	var cases []goldenMetadataCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.Len(t, cases, len(goldenMetadataCases()), "golden file out of date: run with -update-records")
	dec := precord.NewDecoder(nil, slog.New(slog.DiscardHandler))
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			rec := promEncodeMetadata(c)
			require.Equal(t, c.Record, hex.EncodeToString(rec))
			require.Equal(t, precord.Metadata, dec.Type(rec))
			got, err := dec.Metadata(rec, nil)
			require.NoError(t, err)
			require.Len(t, got, len(c.Entries))
			for i, m := range got {
				require.Equal(t, c.Entries[i], goldenMetadataEntry{Ref: uint64(m.Ref), Type: m.Type, Unit: m.Unit, Help: m.Help}, "entry %d", i)
			}
		})
	}
}
