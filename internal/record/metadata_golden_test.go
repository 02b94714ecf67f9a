package record

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdata/prom_metadata_records.json holds metadata entries and the
// Metadata record Prometheus's Encoder writes for them; a test in
// prom/storage writes it (-update-records) and checks that Prometheus
// still encodes and decodes it so. TestPromMetadataRecords requires the
// same of ours.

type promMetadataCase struct {
	Name    string        `json:"name"`
	Entries []RefMetadata `json:"entries"`
	Record  string        `json:"record"` // hex
}

func TestPromMetadataRecords(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "prom_metadata_records.json"))
	require.NoError(t, err)
	var cases []promMetadataCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.GreaterOrEqual(t, len(cases), 3)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var enc Encoder
			rec := enc.Metadata(c.Entries, nil)
			require.Equal(t, c.Record, hex.EncodeToString(rec))
			var dec Decoder
			got, err := dec.Metadata(rec, nil)
			require.NoError(t, err)
			if len(c.Entries) == 0 {
				require.Empty(t, got)
				return
			}
			require.Equal(t, c.Entries, got)
		})
	}
}
