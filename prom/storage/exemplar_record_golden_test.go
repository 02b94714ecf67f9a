package promstorage_test

import (
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunks"
	precord "github.com/prometheus/prometheus/tsdb/record"
	"github.com/stretchr/testify/require"
)

// The Exemplars WAL record (4) is checked against Prometheus through a
// golden file, as the sample records are: this test writes it from
// Prometheus's Encoder (-update-records) and otherwise requires that
// Prometheus still encodes the exemplars in it to the stored bytes and
// decodes the stored bytes to the exemplars; internal/record's
// TestPromExemplarRecords requires the same of ours.

var exemplarRecordsFile = filepath.Join("..", "..", "internal", "record", "testdata", "prom_exemplar_records.json")

// goldenExemplarCase is one set of exemplars and the record Prometheus
// writes for them.
type goldenExemplarCase struct {
	Name      string               `json:"name"`
	Exemplars []goldenExemplarRecE `json:"exemplars"`
	Record    string               `json:"record"` // hex
}

// goldenExemplarRecE is an exemplar; V holds the value's IEEE-754 bits and
// Labels the label pairs, sorted by name.
type goldenExemplarRecE struct {
	Ref    uint64   `json:"ref"`
	T      int64    `json:"t"`
	V      uint64   `json:"v"`
	Labels []string `json:"labels"`
}

func exemplarRecordSets() []goldenExemplarCase {
	edges := []goldenExemplarRecE{
		{Ref: 10, T: 1000, V: math.Float64bits(1.5), Labels: []string{"trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"}},
		{Ref: 9, T: 1015, V: staleNaNBits, Labels: nil},
		{Ref: 300, T: 900, V: math.Float64bits(-2), Labels: []string{"span_id", "00f067aa0ba902b7", "trace_id", "x"}},
		{Ref: math.MaxUint64, T: math.MaxInt64, V: math.MaxUint64, Labels: []string{"a", "ü"}},
		{Ref: 0, T: math.MinInt64, V: 0x7ff8000000000001, Labels: []string{"", ""}},
	}
	r := rand.New(rand.NewPCG(16, 4))
	var generated []goldenExemplarRecE
	for i := range 40 {
		e := goldenExemplarRecE{Ref: uint64(r.IntN(50)), T: 1_700_000_000_000 + int64(i)*15 + r.Int64N(5), V: math.Float64bits(float64(r.IntN(1000)) / 8)}
		if r.IntN(3) > 0 {
			e.Labels = []string{"trace_id", strconv.FormatUint(r.Uint64(), 16)}
		}
		generated = append(generated, e)
	}
	return []goldenExemplarCase{
		{Name: "empty"},
		{Name: "one", Exemplars: edges[:1]},
		{Name: "edges", Exemplars: edges},
		{Name: "generated", Exemplars: generated},
	}
}

func promEncodeExemplars(c goldenExemplarCase) []byte {
	es := make([]precord.RefExemplar, len(c.Exemplars))
	for i, x := range c.Exemplars {
		es[i] = precord.RefExemplar{Ref: chunks.HeadSeriesRef(x.Ref), T: x.T, V: math.Float64frombits(x.V), Labels: plabels.FromStrings(x.Labels...)}
	}
	var enc precord.Encoder
	return enc.Exemplars(es, nil)
}

// TestExemplarRecordGolden checks Prometheus against the golden file (or
// rewrites it with -update-records).
func TestExemplarRecordGolden(t *testing.T) {
	if *updateRecords {
		out := []byte("[\n")
		for i, c := range exemplarRecordSets() {
			c.Record = hex.EncodeToString(promEncodeExemplars(c))
			b, err := json.Marshal(c)
			require.NoError(t, err)
			if i > 0 {
				out = append(out, ",\n"...)
			}
			out = append(out, b...)
		}
		out = append(out, "\n]\n"...)
		require.NoError(t, os.WriteFile(exemplarRecordsFile, out, 0o644))
	}
	b, err := os.ReadFile(exemplarRecordsFile)
	require.NoError(t, err)
	var cases []goldenExemplarCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.Len(t, cases, len(exemplarRecordSets()), "golden file out of date: run with -update-records")
	dec := precord.NewDecoder(nil, slog.New(slog.DiscardHandler))
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			rec := promEncodeExemplars(c)
			require.Equal(t, c.Record, hex.EncodeToString(rec))
			got, err := dec.Exemplars(rec, nil)
			require.NoError(t, err)
			require.Len(t, got, len(c.Exemplars))
			for i, e := range got {
				want := c.Exemplars[i]
				require.Equal(t, want.Ref, uint64(e.Ref), "exemplar %d", i)
				require.Equal(t, want.T, e.T, "exemplar %d", i)
				require.Equal(t, want.V, math.Float64bits(e.V), "exemplar %d", i)
				require.Equal(t, plabels.FromStrings(want.Labels...).String(), e.Labels.String(), "exemplar %d", i)
			}
		})
	}
}
