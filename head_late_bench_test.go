package tsdb

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/vfs"
)

// BenchmarkQueryHeadLate is BenchmarkQueryHead with the out-of-order
// window on and a tenth of the samples (every tenth series' in each
// round, rotating) delivered late, four scrapes after their time, in the
// commit of a later round: reads merge them from late chunks and open
// buffers. late=0 is the same workload delivered in order.
func BenchmarkQueryHeadLate(b *testing.B) {
	lsets := loadSeries(b, 20000)
	for _, late := range []bool{false, true} {
		b.Run(fmt.Sprintf("late=%v", late), func(b *testing.B) {
			o := benchOptions(true)
			o.OutOfOrderTimeWindow = time.Hour
			db, _ := openTestDB(b, o)
			refs := make([]SeriesRef, len(lsets))
			const rounds, lag = 240, 4
			for round := 0; round < rounds+lag; round++ {
				app := db.Appender(ctx)
				for i, l := range lsets {
					held := late && (i+round)%10 == 0
					if round < rounds && !held {
						ref, err := app.Append(refs[i], l, int64(round)*15000, float64(round))
						require.NoError(b, err)
						refs[i] = ref
					}
					if r := round - lag; late && r >= 0 && (i+r)%10 == 0 {
						ref, err := app.Append(refs[i], l, int64(r)*15000, float64(r))
						require.NoError(b, err)
						refs[i] = ref
					}
				}
				require.NoError(b, app.Commit())
			}
			if want, got := 1500*rounds*b.N, benchReadHosts(b, db); got != want {
				b.Fatalf("read %d samples, want %d", got, want)
			}
		})
	}
}

// BenchmarkAppendLate measures ingest with the out-of-order window off or
// on (30 minutes) and a share of the samples late, as prom/bench's late
// phase does: 5,000 series in commits of a target's 500, 240 rounds 15 s
// apart, and with late=10% each sample held back with probability 1/10
// (decided by a hash of the series and the round) and appended 4 to 40
// rounds (1 to 10 minutes) later, in its target's commit of that round.
// window=on/late=0% against window=off/late=0% is the cost of the window
// itself. One op is the whole workload on a new DB on disk; cpu-ns/sample is the
// process's CPU time (user and system, so the GC counts) per sample.
func BenchmarkAppendLate(b *testing.B) {
	const (
		series, target, rounds = 5000, 500, 240
		minLag, maxLag         = 4, 40
	)
	lsets := loadSeries(b, series)
	for _, c := range []struct {
		window bool
		late   int // percent
	}{{false, 0}, {true, 0}, {true, 10}} {
		b.Run(fmt.Sprintf("window=%v/late=%d%%", c.window, c.late), func(b *testing.B) {
			// due[r] are the samples appended in round r: series i's of
			// round lagged[i], ascending by series.
			type held struct{ i, r int }
			due := make([][]held, rounds+maxLag)
			onTime := make([][]bool, rounds)
			for r := range rounds {
				onTime[r] = make([]bool, series)
				for i := range series {
					h := mixHash(uint64(i), uint64(r))
					if int(h%100) >= c.late {
						onTime[r][i] = true
						continue
					}
					d := minLag + int((h>>32)%(maxLag-minLag+1))
					due[r+d] = append(due[r+d], held{i, r})
				}
			}
			for _, d := range due {
				slices.SortFunc(d, func(x, y held) int { return cmp.Or(x.i-y.i, x.r-y.r) })
			}
			b.ReportAllocs()
			var cpu time.Duration
			samples := 0
			for b.Loop() {
				b.StopTimer()
				o := benchOptions(true)
				if c.window {
					o.OutOfOrderTimeWindow = 30 * time.Minute
				}
				// On disk, as prom/bench writes: the WAL's writes go to the
				// page cache (the in-memory FS would copy its file as it grows).
				o.FS = vfs.OS()
				db, err := Open(b.TempDir(), nil, nil, o)
				require.NoError(b, err)
				refs := make([]SeriesRef, series)
				runtime.GC()
				cpu0 := processCPU()
				b.StartTimer()
				for r := range due {
					for lo := 0; lo < series; lo += target {
						app := db.Appender(ctx)
						n := 0
						for i := lo; r < rounds && i < lo+target; i++ {
							if !onTime[r][i] {
								continue
							}
							ref, err := app.Append(refs[i], lsets[i], int64(r)*15000, float64(r))
							if err != nil {
								b.Fatal(err)
							}
							refs[i], n = ref, n+1
						}
						d := due[r]
						j, _ := slices.BinarySearchFunc(d, lo, func(x held, i int) int { return x.i - i })
						for ; j < len(d) && d[j].i < lo+target; j++ {
							i, r0 := d[j].i, d[j].r
							ref, err := app.Append(refs[i], lsets[i], int64(r0)*15000, float64(r0))
							if err != nil {
								b.Fatal(err)
							}
							refs[i], n = ref, n+1
						}
						if n == 0 {
							require.NoError(b, app.Rollback())
							continue
						}
						require.NoError(b, app.Commit())
						samples += n
					}
				}
				b.StopTimer()
				cpu += processCPU() - cpu0
				require.NoError(b, db.Close())
				b.StartTimer()
			}
			if want := series * rounds * b.N; samples != want {
				b.Fatalf("appended %d samples, want %d", samples, want)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(samples), "cpu-ns/sample")
		})
	}
}

// mixHash is a 64-bit mix of a and b (splitmix64's finalizer).
func mixHash(a, b uint64) uint64 {
	x := a*0x9e3779b97f4a7c15 ^ b*0xbf58476d1ce4e5b9
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
