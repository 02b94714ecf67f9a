package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLateSchedule checks the late workload's generator: the same schedule
// every time, about 10% of each round's samples held back, each for 4 to
// 40 rounds (1–10 minutes of 15 s rounds), and every sample of the scrape
// appended exactly once, on time or in a later round.
func TestLateSchedule(t *testing.T) {
	const n, rounds, frac = 1700, 240, 0.1 // 1,700: a partial last target
	ls := newLateSchedule(n, rounds, frac)
	require.Equal(t, ls, newLateSchedule(n, rounds, frac), "deterministic")

	// About 10% late overall and in every round (1,700 series: a round's
	// count is binomial with σ ≈ 12, so ±60 is 5σ).
	require.InDelta(t, frac, float64(ls.late)/float64(n*rounds), 0.005)
	for r := range rounds {
		require.InDelta(t, frac*n, len(ls.held[r]), 60, "round %d", r)
		require.IsIncreasing(t, ls.held[r], "round %d", r)
	}

	// Delays within bounds; every sample appended exactly once, walking
	// the schedule as ingestLate does, target by target.
	require.LessOrEqual(t, ls.totalRounds(), rounds+lateMaxRounds)
	require.NotEmpty(t, ls.due[ls.totalRounds()-1], "no trailing empty rounds")
	appended := make([]int, n*rounds)
	delays := map[int]int{}
	for r := range ls.totalRounds() {
		for lo := 0; lo < n; lo += targetSize {
			hi := min(lo+targetSize, n)
			if r < rounds {
				held := ls.heldIn(r, lo, hi)
				for _, i := range held {
					require.True(t, int(i) >= lo && int(i) < hi)
				}
				for i := lo; i < hi; i++ {
					if len(held) > 0 && int(held[0]) == i {
						held = held[1:]
						continue
					}
					appended[i*rounds+r]++
				}
				require.Empty(t, held, "held back series out of order")
			}
			for _, d := range ls.dueIn(r, lo, hi) {
				require.True(t, int(d.series) >= lo && int(d.series) < hi)
				delay := r - int(d.round)
				require.GreaterOrEqual(t, delay, lateMinRounds)
				require.LessOrEqual(t, delay, lateMaxRounds)
				delays[delay]++
				appended[int(d.series)*rounds+int(d.round)]++
			}
		}
	}
	for k, a := range appended {
		require.Equal(t, 1, a, "series %d round %d", k/rounds, k%rounds)
	}
	require.Len(t, delays, lateMaxRounds-lateMinRounds+1, "every delay occurs")

	// No late fraction, no late samples and no extra rounds.
	none := newLateSchedule(n, rounds, 0)
	require.Zero(t, none.late)
	require.Equal(t, rounds, none.totalRounds())
}

// TestSmallLateRun runs the late phase and the paired cost of the window
// on both stores with 1,000 series. Prometheus must accept every late
// sample; isotsdb's rejections are logged (it rejects them until its head
// accepts late samples). Either way runLate has checked that exactly the
// samples not rejected read back.
func TestSmallLateRun(t *testing.T) {
	c, err := loadCorpus("../../testdata/20kseries.json", 1000)
	require.NoError(t, err)
	p := params{rounds: 240, readReps: 1, lateFrac: 0.1, tmp: t.TempDir()}
	ls := newLateSchedule(len(c.series), p.rounds, p.lateFrac)
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		f, err := runLate(config{k, true}, c, queries(c), ls, p, func(s string) { t.Log(s) })
		require.NoError(t, err, "%s", k)
		for _, name := range []string{"late.cpu", "late.rate", "late.read.rate", "late.late"} {
			require.Positive(t, f[name], "%s %s", k, name)
		}
		require.Equal(t, float64(ls.late), f["late.late"])
		require.LessOrEqual(t, f["late.rejected"], f["late.late"])
		if k == prometheusStore {
			require.Zero(t, f["late.rejected"], "Prometheus rejected late samples")
		}
		t.Logf("%s: %.0f of %.0f late samples rejected", k, f["late.rejected"], f["late.late"])

		p.rounds = 20
		lf, err := runLateCost(k, c, p)
		require.NoError(t, err, "%s", k)
		require.Positive(t, lf["latecost.scrape"], "%s", k)
		p.rounds = 240
	}
}

// TestDigest checks the late variants' read-back check against a store
// written in order: it matches the workload's digest, and a missing
// sample, or one sample with another value, time or series, is caught.
func TestDigest(t *testing.T) {
	c, err := loadCorpus("../../testdata/20kseries.json", 1000)
	require.NoError(t, err)
	const rounds = 10
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		s, err := openStore(k, storeConfig{dir: t.TempDir(), isolation: true, series: c.series})
		require.NoError(t, err)
		_, err = ingest(s, c, make([]uint64, len(c.series)), 0, rounds)
		require.NoError(t, err)
		got, err := readDigest(s, baseTime, maxTime(rounds, c.targets()))
		require.NoError(t, err)
		require.NoError(t, s.close())
		cfg := config{k, true}
		want := workloadDigest(c, rounds)
		require.Equal(t, rounds*len(c.series), want.samples)
		require.NoError(t, checkDigest(cfg, "test", got, want))

		i, r := 700, 3
		tm, v := scrapeTime(i/targetSize, r), c.value(i, r)
		var one digest
		one.add(i, tm, v)
		require.ErrorContains(t, checkDigest(cfg, "test", got, want.minus(one)), "want 9999", "a sample more")
		for _, other := range []uint64{sampleHash(i, tm, v+1), sampleHash(i, tm+1, v), sampleHash(i+1, tm, v)} {
			swapped := want.minus(one) // the sample replaced by another
			swapped.samples++
			swapped.sum += other
			require.ErrorContains(t, checkDigest(cfg, "test", got, swapped), "not their timestamps")
		}
	}
}

// TestLateIntoCutRanges checks what scale-late's short blocks are for:
// with 5 min blocks and samples up to 10 minutes late, late samples land
// in ranges both stores have already cut into a block, and each store
// merges the overlapping block they make with the one there (a block of
// more than one source), without losing or rejecting any.
func TestLateIntoCutRanges(t *testing.T) {
	c, err := loadCorpus("../../testdata/20kseries.json", 100)
	require.NoError(t, err)
	sc := scaleCorpus(c, 1200)
	const rounds = 60
	br := scaleBlockRange(rounds)
	require.Less(t, br, int64(lateMaxRounds)*scrapeEvery, "late samples reach back past a block")
	late := newLateRun(sc, rounds, 0.1)
	for _, k := range []storeKind{isotsdbStore, prometheusStore} {
		s, err := openStore(k, storeConfig{dir: t.TempDir(), isolation: true, series: sc.series, blockRange: br, lateWindow: lateWindow})
		require.NoError(t, err)
		cs, err := ingestCutting(s, sc, make([]uint64, len(sc.series)), rounds, br, late.ls, nil)
		require.NoError(t, err, "%s", k)
		require.Zero(t, cs.late.rejected, "%s", k)
		merged := 0
		for _, b := range s.blocks() {
			raw, err := os.ReadFile(filepath.Join(b.dir, "meta.json"))
			require.NoError(t, err)
			var m struct {
				Compaction struct{ Sources []string }
			}
			require.NoError(t, json.Unmarshal(raw, &m))
			if len(m.Compaction.Sources) > 1 {
				merged++
			}
		}
		require.Positive(t, merged, "%s merged no overlapping block", k)
		got, err := readDigest(s, baseTime, maxTime(rounds, sc.targets()))
		require.NoError(t, err)
		require.NoError(t, checkDigest(config{k, true}, "test", got, late.want))
		require.NoError(t, s.close())
	}
}
