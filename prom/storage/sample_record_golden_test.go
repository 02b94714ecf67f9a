package promstorage_test

import (
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/prometheus/tsdb/chunks"
	precord "github.com/prometheus/prometheus/tsdb/record"
	"github.com/stretchr/testify/require"
)

// The float sample WAL records, Samples (2) and SamplesV2 (11, with start
// timestamps), are checked against Prometheus through a golden file, as the
// histogram records are (histogram_record_golden_test.go, whose
// -update-records flag rewrites this file too): this test writes it from
// Prometheus's Encoder and otherwise requires that Prometheus still encodes
// the samples in it to the stored bytes and decodes the stored bytes to
// the samples; the tests of internal/record require the same of ours.

var sampleRecordsFile = filepath.Join("..", "..", "internal", "record", "testdata", "prom_sample_records.json")

// goldenSampleCase is one set of samples and the record Prometheus writes
// for them: a Samples record (start timestamps dropped) unless V2.
type goldenSampleCase struct {
	Name    string                `json:"name"`
	V2      bool                  `json:"v2"`
	Samples []goldenSampleRecSmpl `json:"samples"`
	Record  string                `json:"record"` // hex
}

// goldenSampleRecSmpl is a sample; V holds the value's IEEE-754 bits.
type goldenSampleRecSmpl struct {
	Ref uint64 `json:"ref"`
	ST  int64  `json:"st"`
	T   int64  `json:"t"`
	V   uint64 `json:"v"`
}

func sampleRecordSets() []struct {
	name    string
	samples []goldenSampleRecSmpl
} {
	stale := uint64(staleNaNBits)
	edges := []goldenSampleRecSmpl{
		{Ref: 10, ST: 0, T: 1000, V: math.Float64bits(1.5)},
		{Ref: 9, ST: 0, T: 1015, V: stale},
		{Ref: 300, ST: 7, T: 900, V: math.Float64bits(-2)},
		{Ref: 300, ST: 7, T: 1000, V: 0},
		{Ref: 300, ST: 0, T: 1001, V: math.Float64bits(math.Copysign(0, -1))},
		{Ref: 1, ST: 7, T: 1002, V: math.Float64bits(math.Inf(1))},
		{Ref: math.MaxUint64, ST: math.MinInt64, T: math.MaxInt64, V: math.MaxUint64},
		{Ref: 0, ST: math.MaxInt64, T: math.MinInt64, V: 0x7ff8000000000001},
		{Ref: 5, ST: math.MaxInt64, T: 0, V: 1},
	}
	stFirst := []goldenSampleRecSmpl{
		{Ref: 1 << 40, ST: 1_700_000_000_000, T: 1_700_000_015_000, V: math.Float64bits(3)},
		{Ref: 1<<40 + 1, ST: 1_700_000_000_000, T: 1_700_000_015_001, V: math.Float64bits(4)},
		{Ref: 1<<40 + 2, ST: 1_699_999_000_000, T: 1_700_000_015_002, V: math.Float64bits(5)},
		{Ref: 1<<40 + 3, ST: 1_700_000_000_000, T: 1_700_000_015_003, V: math.Float64bits(6)},
	}
	r := rand.New(rand.NewPCG(11, 2))
	var generated []goldenSampleRecSmpl
	for i := range 60 {
		s := goldenSampleRecSmpl{Ref: uint64(r.IntN(50)), T: 1_700_000_000_000 + int64(i)*15 + r.Int64N(5), V: math.Float64bits(float64(r.IntN(1000)) / 4)}
		switch r.IntN(4) {
		case 0:
		case 1:
			s.ST = 1_699_000_000_000
		case 2:
			s.ST = s.T - r.Int64N(100_000)
		default:
			if i > 0 {
				s.ST = generated[i-1].ST
			}
		}
		generated = append(generated, s)
	}
	return []struct {
		name    string
		samples []goldenSampleRecSmpl
	}{
		{"empty", nil},
		{"one", edges[:1]},
		{"one with st", stFirst[:1]},
		{"edges", edges},
		{"st first", stFirst},
		{"generated", generated},
	}
}

func goldenSampleCases() []goldenSampleCase {
	var cases []goldenSampleCase
	for _, set := range sampleRecordSets() {
		for _, v2 := range []bool{false, true} {
			c := goldenSampleCase{Name: set.name, V2: v2, Samples: set.samples}
			c.Record = hex.EncodeToString(promEncodeSamples(c))
			cases = append(cases, c)
		}
	}
	return cases
}

func promEncodeSamples(c goldenSampleCase) []byte {
	s := make([]precord.RefSample, len(c.Samples))
	for i, x := range c.Samples {
		s[i] = precord.RefSample{Ref: chunks.HeadSeriesRef(x.Ref), ST: x.ST, T: x.T, V: math.Float64frombits(x.V)}
	}
	enc := precord.Encoder{EnableSTStorage: c.V2}
	return enc.Samples(s, nil)
}

// TestSampleRecordGolden checks Prometheus against the golden file (or
// rewrites it with -update-records).
func TestSampleRecordGolden(t *testing.T) {
	if *updateRecords {
		out := []byte("[\n")
		for i, c := range goldenSampleCases() {
			b, err := json.Marshal(c)
			require.NoError(t, err)
			if i > 0 {
				out = append(out, ",\n"...)
			}
			out = append(out, b...)
		}
		out = append(out, "\n]\n"...)
		require.NoError(t, os.WriteFile(sampleRecordsFile, out, 0o644))
	}
	b, err := os.ReadFile(sampleRecordsFile)
	require.NoError(t, err)
	var cases []goldenSampleCase
	require.NoError(t, json.Unmarshal(b, &cases))
	require.Len(t, cases, len(goldenSampleCases()), "golden file out of date: run with -update-records")
	dec := precord.NewDecoder(nil, slog.New(slog.DiscardHandler))
	for _, c := range cases {
		name := c.Name
		if c.V2 {
			name += " v2"
		}
		t.Run(name, func(t *testing.T) {
			rec := promEncodeSamples(c)
			require.Equal(t, c.Record, hex.EncodeToString(rec))
			got, err := dec.Samples(rec, nil)
			require.NoError(t, err)
			require.Len(t, got, len(c.Samples))
			for i, s := range got {
				want := c.Samples[i]
				if !c.V2 {
					want.ST = 0
				}
				require.Equal(t, want, goldenSampleRecSmpl{Ref: uint64(s.Ref), ST: s.ST, T: s.T, V: math.Float64bits(s.V)}, "sample %d", i)
			}
		})
	}
}
