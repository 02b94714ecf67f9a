package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// TestHistWorkload checks the generated histograms: valid, of schema 3
// with about 20 populated buckets, counts that never go down, a new bucket
// now and then, and the same value for both stores.
func TestHistWorkload(t *testing.T) {
	hw := newHistWorkload(200, 4)
	require.Len(t, hw.series, 200)
	lo, hi := hw.target(3)
	require.Equal(t, 150, lo)
	require.Equal(t, 200, hi)
	grew, buckets := 0, 0
	for j := range hw.series {
		prev := hw.value(j, 0)
		for r := 1; r < 240; r++ {
			h := hw.value(j, r)
			require.NoError(t, h.Validate(), "series %d round %d", j, r)
			require.Equal(t, int32(histSchema), h.Schema)
			require.GreaterOrEqual(t, h.Count, prev.Count)
			require.GreaterOrEqual(t, h.Sum, prev.Sum)
			old := map[int32]uint64{}
			for b := range prev.PositiveBucketSeq() {
				old[b.Index] = b.Count
			}
			n, added := 0, 0
			for b := range h.PositiveBucketSeq() {
				n++
				if c, ok := old[b.Index]; ok {
					require.GreaterOrEqual(t, b.Count, c, "series %d round %d bucket %d", j, r, b.Index)
				} else {
					added++
				}
			}
			require.Len(t, old, n-added, "series %d round %d: a bucket disappeared", j, r)
			grew += added
			buckets += n
			require.True(t, h.Equals(promstorage.FromPromHistogram(promstorage.ToPromHistogram(h))))
			prev = h
		}
		require.True(t, hw.value(j, 7).Equals(hw.value(j, 7)), "values depend on (series, round) only")
	}
	mean := float64(buckets) / float64(200*239)
	require.InDelta(t, 20.5, mean, 1.5, "populated buckets per histogram")
	require.Positive(t, grew, "buckets appear now and then")
	require.Less(t, grew, 200*239/20, "but rarely")
}

// TestSmallHistogramRun runs the histogram phases on a small workload (100
// histogram series among 1,000 float series, one run per configuration)
// and checks that every histogram figure is measured, that the block holds
// exactly the first hour of histograms and that the table shows the rows.
func TestSmallHistogramRun(t *testing.T) {
	c, err := loadCorpus("../../testdata/20kseries.json", 1000)
	require.NoError(t, err)
	p := params{rounds: 240, rwwRounds: 120, compactRounds: 20, readReps: 2, histSeries: 100, tmp: t.TempDir()}
	hw := newHistWorkload(p.histSeries, c.targets())
	res := map[config][]figures{}
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		for _, iso := range []bool{true, false} {
			cfg := config{k, iso}
			f, err := runHistograms(cfg, c, hw, p, iso)
			require.NoError(t, err, "%s", cfg)
			for _, name := range []string{"hist.cpu", "hist.rate", "hist.allocs", "hist.heap"} {
				require.Positive(t, f[name], "%s %s", cfg, name)
			}
			if !iso {
				require.NotContains(t, f, "hist.read.rate", "%s runs the histogram ingest only", cfg)
				res[cfg] = []figures{f}
				continue
			}
			for _, name := range []string{"hist.read.rate", "hist.read.p50", "hist.compact.cpu", "hist.disk.bytes", "hist.read.block.rate", "mixed.cpu", "mixed.rate"} {
				require.Positive(t, f[name], "%s %s", cfg, name)
			}
			// 240 rounds of 100 histogram series fill the first 1h block exactly.
			require.Equal(t, float64(240*100), f["hist.disk.samples"], "%s", cfg)
			pf, err := runHistIsolationCost(k, c, hw, params{rounds: 4, tmp: p.tmp})
			require.NoError(t, err, "%s", cfg)
			require.Positive(t, pf["isocost.hist"], "%s", cfg)
			for name, v := range pf {
				f[name] = v
			}
			res[cfg] = []figures{f}
		}
	}
	var out bytes.Buffer
	report(&out, res, queries(c))
	t.Log("\n" + out.String())
	for _, want := range []string{"ingest CPU per histogram sample", "read histogram samples/s (head", "bytes on disk per histogram sample", "mixed scrape CPU per sample, paired blocks", "histogram CPU per sample, whole runs"} {
		require.Contains(t, out.String(), want)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "histogram") || strings.Contains(line, "mixed") {
			require.NotContains(t, line, "NaN")
		}
	}
}

// TestHistRoundTrip checks that both stores read back every histogram
// written, each with the count it was written with.
func TestHistRoundTrip(t *testing.T) {
	c, err := loadCorpus("../../testdata/20kseries.json", 1000)
	require.NoError(t, err)
	hw := newHistWorkload(30, c.targets())
	const rounds = 20
	var want uint64
	for j := range hw.series {
		for r := range rounds {
			want += hw.value(j, r).Count
		}
	}
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		s, err := openStore(k, storeConfig{dir: t.TempDir(), isolation: true, hseries: hw.series})
		require.NoError(t, err)
		_, n, _, err := ingestHist(s, c, hw, nil, make([]uint64, len(hw.series)), 0, rounds)
		require.NoError(t, err)
		require.Equal(t, rounds*len(hw.series), n)
		series, samples, err := s.queryHistograms(histQuery, baseTime, maxTime(rounds, hw.targets))
		require.NoError(t, err, "%s", k)
		require.Equal(t, len(hw.series), series, "%s", k)
		require.Equal(t, n, samples, "%s", k)
		var sink float64
		switch s := s.(type) {
		case *isoStore:
			sink = s.sink
		case *promStore:
			sink = s.sink
		}
		require.Equal(t, float64(want), sink, "%s: the sum of the counts read", k)
		require.NoError(t, s.close())
	}
}
