package tsdb

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// peakHeap samples the bytes of heap objects (garbage not yet swept
// included, as a memory graph shows them) every millisecond until stop is
// called, which returns the largest value seen.
type peakHeap struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  uint64 // written by the sampling goroutine until wg is done
}

func heapObjectBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func watchPeakHeap() *peakHeap {
	p := &peakHeap{stopc: make(chan struct{}), peak: heapObjectBytes()}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				p.peak = max(p.peak, heapObjectBytes())
				return
			case <-t.C:
				p.peak = max(p.peak, heapObjectBytes())
			}
		}
	}()
	return p
}

func (p *peakHeap) stop() uint64 {
	close(p.stopc)
	p.wg.Wait()
	return p.peak
}

// BenchmarkCompactHead writes the oldest block range of a head of n series
// (the 20kseries corpus replicated under distinct instances) into a block
// on disk, as the prom/bench scale phase does: 10-minute blocks, a scrape
// every 15 s, 64 scrapes, so the block holds 40 samples of every series.
// It reports the peak heap during the compaction over the live heap just
// before ("peak-B"), the figure issue 17 compares with Prometheus's, and
// the bytes allocated; with wal=true, the WAL's checkpoint and truncation
// are part of it, as in a real DB. TSDB_BENCH_1M=1 adds a million series.
func BenchmarkCompactHead(b *testing.B) {
	base := loadSeries(b, 20000)
	sizes := []int{20000, 200000}
	if os.Getenv("TSDB_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000) // some 4 GiB of heap and minutes
	}
	for _, n := range sizes {
		lsets := make([]labels.Labels, 0, n)
		for i := range n {
			bl := labels.NewBuilder(base[i%len(base)])
			bl.Set("instance", fmt.Sprintf("host-%d:9100", i/500))
			lsets = append(lsets, bl.Labels())
		}
		for _, wal := range []bool{false, true} {
			b.Run(fmt.Sprintf("series=%d/wal=%v", n, wal), func(b *testing.B) {
				const rounds, every = 64, 15000
				var peak, allocs float64
				b.ReportAllocs()
				b.StopTimer()
				for range b.N {
					o := DefaultOptions()
					o.FS = vfs.OS()
					o.MinBlockDuration = 10 * time.Minute
					o.NoWAL = !wal
					db, err := Open(b.TempDir(), nil, nil, o)
					if err != nil {
						b.Fatal(err)
					}
					// Hold cmtx so that the background loop does not compact
					// before the measured call.
					if err := db.cmtx.lock(ctx); err != nil {
						b.Fatal(err)
					}
					refs := make([]SeriesRef, n)
					// One commit per target of 500 series, as scrapes
					// commit (the WAL's records are then of a scrape's
					// size, as the checkpoint meets them in use).
					for r := range rounds {
						for t := 0; t < n; t += 500 {
							app := db.Appender(ctx)
							for i := t; i < min(n, t+500); i++ {
								if refs[i], err = app.Append(refs[i], lsets[i], int64(r)*every, scrapeValue(i, r)); err != nil {
									b.Fatal(err)
								}
							}
							if err := app.Commit(); err != nil {
								b.Fatal(err)
							}
						}
					}
					runtime.GC()
					runtime.GC()
					var ms0, ms1 runtime.MemStats
					runtime.ReadMemStats(&ms0)
					before := heapObjectBytes()
					w := watchPeakHeap()
					b.StartTimer()
					err = db.compactHead(ctx)
					b.StopTimer()
					p := w.stop()
					runtime.ReadMemStats(&ms1)
					if err != nil {
						b.Fatal(err)
					}
					peak += float64(p - before)
					allocs += float64(ms1.TotalAlloc - ms0.TotalAlloc)
					db.cmtx.unlock()
					if err := db.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(peak/float64(b.N), "peak-B")
				b.ReportMetric(allocs/float64(b.N), "compact-B")
			})
		}
	}
}
