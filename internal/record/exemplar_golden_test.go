package record

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// testdata/prom_exemplar_records.json holds exemplars and the Exemplars
// record Prometheus's Encoder writes for them; a test in prom/storage
// writes it (-update-records) and checks that Prometheus still encodes and
// decodes it so. TestPromExemplarRecords requires the same of ours.

type promExemplarCase struct {
	Name      string             `json:"name"`
	Exemplars []promExemplarJSON `json:"exemplars"`
	Record    string             `json:"record"` // hex
}

// promExemplarJSON is an exemplar; V holds the value's IEEE-754 bits.
type promExemplarJSON struct {
	Ref    uint64   `json:"ref"`
	T      int64    `json:"t"`
	V      uint64   `json:"v"`
	Labels []string `json:"labels"`
}

func TestPromExemplarRecords(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "prom_exemplar_records.json"))
	require.NoError(t, err)
	var cases []promExemplarCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.GreaterOrEqual(t, len(cases), 3)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			es := make([]RefExemplar, len(c.Exemplars))
			for i, x := range c.Exemplars {
				es[i] = RefExemplar{Ref: x.Ref, T: x.T, V: math.Float64frombits(x.V), Labels: labels.FromStrings(x.Labels...)}
			}
			var enc Encoder
			rec := enc.Exemplars(es, nil)
			require.Equal(t, c.Record, hex.EncodeToString(rec))
			var dec Decoder
			got, err := dec.Exemplars(rec, nil)
			require.NoError(t, err)
			requireExemplarsEqual(t, es, got)
		})
	}
}
