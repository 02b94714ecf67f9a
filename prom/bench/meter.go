package main

import (
	"runtime"
	"slices"
	"syscall"
	"time"
)

// meter measures a phase: wall time, process CPU time (user + system, so
// the GC and every background goroutine of the store count) and heap
// allocations.
type meter struct {
	wall    time.Time
	cpu     time.Duration
	mallocs uint64
}

// usage is what a meter measured.
type usage struct {
	wall, cpu time.Duration
	mallocs   uint64
}

func startMeter() meter {
	return meter{wall: time.Now(), cpu: cpuTime(), mallocs: mallocs()}
}

func (m meter) stop() usage {
	return usage{wall: time.Since(m.wall), cpu: cpuTime() - m.cpu, mallocs: mallocs() - m.mallocs}
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mallocs is the number of heap objects allocated so far (exact, unlike
// runtime/metrics' allocation counter, which lags behind per-P caches).
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// liveHeap collects garbage and returns the bytes of live heap objects.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// percentile returns the p-th percentile (0..1) of ds by nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
