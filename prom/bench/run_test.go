package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSmallRun runs the whole program on a small workload (1,000 series
// and 100 histogram series, 10% of the late phase's samples late, one run
// per configuration) and checks that every figure of the table is
// measured for every configuration and that the head compaction wrote a
// block with exactly the first hour of samples.
func TestSmallRun(t *testing.T) {
	c, err := loadCorpus("../../testdata/20kseries.json", 1000)
	require.NoError(t, err)
	p := params{
		rounds: 240, rwwRounds: 120, compactRounds: 20, readReps: 2,
		appenders: 64, commits: 5, qsBatches: 3, qsPerBatch: 2, histSeries: 100, lateFrac: 0.1,
		tmp: t.TempDir(),
	}
	for _, q := range queries(c) {
		require.GreaterOrEqual(t, q.weight, 1, q.name)
		require.LessOrEqual(t, q.weight, 50, q.name)
	}
	res, err := runAll(c, p, 1, func(s string) { t.Log(s) })
	require.NoError(t, err)
	require.Len(t, res, 4)
	for cfg, fs := range res {
		require.Len(t, fs, 1, "%s", cfg)
		f := fs[0]
		for _, name := range []string{"ingest.cpu", "ingest.rate", "ingest.heap", "stress.cpu", "stress.wall", "hist.cpu"} {
			require.Positive(t, f[name], "%s %s", cfg, name)
		}
		if cfg.isolation {
			for _, name := range []string{"isocost.scrape", "isocost.stress", "isocost.hist", "latecost.scrape"} {
				require.Positive(t, f[name], "%s %s", cfg, name)
			}
		}
		if !cfg.isolation {
			require.NotContains(t, f, "read.rate", "%s runs ingest and stress only", cfg)
			require.NotContains(t, f, "late.cpu", "%s runs ingest and stress only", cfg)
			continue
		}
		for _, name := range []string{"read.rate", "qstart", "rww.ingest", "rww.read", "rww.p99", "compact.wall", "disk.bytes", "hist.read.rate", "hist.disk.bytes", "mixed.cpu", "late.cpu", "late.read.rate", "late.late"} {
			require.Positive(t, f[name], "%s %s", cfg, name)
		}
		// 240 rounds of 1,000 series fill the first 1h block exactly.
		require.Equal(t, float64(240*1000), f["disk.samples"], "%s", cfg)
	}
	var out bytes.Buffer
	report(&out, res, queries(c))
	for _, want := range []string{"CPU per sample", "heap per series after GC", "bytes on disk per sample", "open + close a querier", "isolation cost", "paired blocks", "bytes on disk per histogram sample", "late samples rejected", "out-of-order window cost"} {
		require.Contains(t, out.String(), want)
	}
	require.NotContains(t, out.String(), "NaN")
	require.Equal(t, 1, strings.Count(out.String(), "  samples in blocks"))
	require.Equal(t, 1, strings.Count(out.String(), "  histogram samples in blocks"))
}
