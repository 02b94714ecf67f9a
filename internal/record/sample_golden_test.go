package record

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdata/prom_sample_records.json holds float samples and the Samples or
// SamplesV2 record Prometheus's Encoder writes for them; a test in
// prom/storage writes it (-update-records) and checks that Prometheus
// still encodes and decodes it so. TestPromSampleRecords requires the same
// of ours.

type promSampleCase struct {
	Name    string             `json:"name"`
	V2      bool               `json:"v2"`
	Samples []promSampleRecord `json:"samples"`
	Record  string             `json:"record"` // hex
}

// promSampleRecord is a sample; V holds the value's IEEE-754 bits.
type promSampleRecord struct {
	Ref uint64 `json:"ref"`
	ST  int64  `json:"st"`
	T   int64  `json:"t"`
	V   uint64 `json:"v"`
}

func TestPromSampleRecords(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "prom_sample_records.json"))
	require.NoError(t, err)
	var cases []promSampleCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.NotEmpty(t, cases)
	types := map[Type]bool{}
	for _, c := range cases {
		name := c.Name
		if c.V2 {
			name += " v2"
		}
		t.Run(name, func(t *testing.T) {
			s := make([]RefSample, len(c.Samples))
			for i, x := range c.Samples {
				s[i] = RefSample{Ref: x.Ref, ST: x.ST, T: x.T, V: math.Float64frombits(x.V)}
			}
			var enc Encoder
			var rec []byte
			if c.V2 {
				rec = enc.SamplesV2(s, nil)
			} else {
				rec = enc.Samples(s, nil)
				for i := range s {
					s[i].ST = 0 // Samples records store none
				}
			}
			require.Equal(t, c.Record, hex.EncodeToString(rec))
			types[RecordType(rec)] = true
			var dec Decoder
			got, err := dec.Samples(rec, nil)
			require.NoError(t, err)
			requireSamplesEqual(t, s, got)
		})
	}
	require.True(t, types[Samples] && types[SamplesV2], "golden file lacks Samples or SamplesV2 records")
}
