package tsdb

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/vfs"
)

// BenchmarkWALReplay opens a DB whose WAL holds 1M samples (20,000 series
// × 50 scrapes), with and without snappy.
func BenchmarkWALReplay(b *testing.B) {
	lsets := loadSeries(b, 20000)
	for _, snappy := range []bool{false, true} {
		b.Run(fmt.Sprintf("snappy=%v", snappy), func(b *testing.B) {
			fsys := vfs.NewMemFS()
			o := DefaultOptions()
			o.FS, o.WALCompression = fsys, snappy
			db, err := Open("data", nil, nil, o)
			require.NoError(b, err)
			ingestScrapes(b, db, lsets, 50)
			require.NoError(b, db.Close())
			const samples = 20000 * 50
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				db, err := Open("data", nil, nil, o)
				require.NoError(b, err)
				require.Equal(b, int64(20000), db.Head().NumSeries(), "replayed series")
				require.NoError(b, db.Close())
			}
			b.ReportMetric(float64(samples*b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkAppendWAL is BenchmarkAppendScrape with the WAL on and off
// (isolation on), on the real filesystem.
func BenchmarkAppendWAL(b *testing.B) {
	lsets := loadSeries(b, 20000)
	for _, wal := range []bool{true, false} {
		b.Run(fmt.Sprintf("wal=%v", wal), func(b *testing.B) {
			o := DefaultOptions()
			o.NoWAL = !wal
			db, err := Open(b.TempDir(), nil, nil, o)
			require.NoError(b, err)
			defer db.Close()
			benchScrapes(b, db, lsets)
		})
	}
}

// BenchmarkWALReplayLate opens a DB whose WAL holds a late-heavy head, as
// prom/bench's restart-late phase does: 2,000 series × 480 scrapes (2 h
// at 15 s, four chunks a series), 10 % of them appended 1 to 10 minutes
// late (out-of-order window 30 min). chunks=mapped opens after a clean
// Close, which wrote the closed chunks to the head chunk files, so the
// replay's duplicate checks of late samples meet mapped chunks;
// chunks=none opens the WAL alone (the head chunk files removed).
// cpu-ms/op is the process's CPU time (user and system) per Open, which a
// loaded machine disturbs less than the wall time.
func BenchmarkWALReplayLate(b *testing.B) {
	const (
		series, rounds, target = 2000, 480, 500
		minLag, maxLag         = 4, 40 // rounds
	)
	lsets := loadSeries(b, series)
	type held struct{ i, r int }
	due := make([][]held, rounds+maxLag) // appended in round r, late
	onTime := make([][]bool, rounds)
	for r := range rounds {
		onTime[r] = make([]bool, series)
		for i := range series {
			h := mixHash(uint64(i), uint64(r))
			if h%100 >= 10 {
				onTime[r][i] = true
				continue
			}
			d := minLag + int((h>>32)%(maxLag-minLag+1))
			due[r+d] = append(due[r+d], held{i, r})
		}
	}
	for _, mapped := range []bool{true, false} {
		name := map[bool]string{true: "chunks=mapped", false: "chunks=none"}[mapped]
		b.Run(name, func(b *testing.B) {
			fsys := vfs.NewMemFS()
			o := lateOpts(fsys, 30*time.Minute)
			o.MinBlockDuration, o.MaxBlockDuration = 24*time.Hour, 24*time.Hour // everything stays in the head
			db, err := Open("data", nil, nil, o)
			require.NoError(b, err)
			refs := make([]SeriesRef, series)
			appendOne := func(app Appender, i, r int) {
				ref, err := app.Append(refs[i], lsets[i], int64(r)*15000, float64(r))
				require.NoError(b, err)
				refs[i] = ref
			}
			for r := range due {
				// One commit a round; the late samples after the round's.
				app := db.Appender(ctx)
				for i := 0; r < rounds && i < series; i++ {
					if onTime[r][i] {
						appendOne(app, i, r)
					}
				}
				for _, d := range due[r] {
					appendOne(app, d.i, d.r)
				}
				require.NoError(b, app.Commit())
			}
			// Not every held sample is late: one whose series had no newer
			// sample yet (later rounds held too) is in order.
			late := counterValue(b, db.head.metrics.lateAppended)
			require.Greater(b, late, 0.09*series*rounds)
			require.NoError(b, db.Close())
			// Close writes the head chunk files again.
			dropChunks := func() {
				if !mapped {
					require.NoError(b, fsys.RemoveAll("data/"+headChunksDir))
				}
			}
			dropChunks()
			b.ReportAllocs()
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				cpu0 := processCPU()
				db, err := Open("data", nil, nil, o)
				require.NoError(b, err)
				b.StopTimer()
				cpu += processCPU() - cpu0
				require.Equal(b, late, counterValue(b, db.head.metrics.lateAppended), "late samples replayed")
				require.NoError(b, db.Close())
				dropChunks()
				b.StartTimer()
			}
			b.ReportMetric(float64(series*rounds*b.N)/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
