package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// heapSampleEvery is how often a heapWatch reads the heap. Reading the
// runtime/metrics heap figure does not stop the world, so 5 ms costs
// next to nothing, and a head compaction of the 20kseries corpus takes
// hundreds of milliseconds: its peak is seen to within a few percent.
const heapSampleEvery = 5 * time.Millisecond

// heapObjectsMetric is the bytes of heap objects, live or not yet swept:
// what the Go heap holds at that moment, garbage included, as an
// operator's memory graph shows it.
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// heapWatch samples the heap in a goroutine from start to stop and keeps
// the largest value seen. A heapWatch is used once.
type heapWatch struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  uint64 // written by the sampling goroutine, read after wg.Wait
}

// heapObjects returns the heap objects' bytes now.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: heapObjectsMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchHeap starts sampling.
func watchHeap() *heapWatch {
	w := &heapWatch{stopc: make(chan struct{}), peak: heapObjects()}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(heapSampleEvery)
		defer t.Stop()
		for {
			select {
			case <-w.stopc:
				w.peak = max(w.peak, heapObjects())
				return
			case <-t.C:
				w.peak = max(w.peak, heapObjects())
			}
		}
	}()
	return w
}

// stop ends sampling and returns the peak.
func (w *heapWatch) stop() uint64 {
	close(w.stopc)
	w.wg.Wait()
	return w.peak
}

// rss is the process's resident set, current and peak, from
// /proc/self/status; ok is false where there is no such file.
type rss struct {
	now, peak uint64 // bytes
	file      uint64 // of now, the pages of mapped files (RssFile)
	ok        bool
}

// readRSS reads VmRSS, VmHWM and RssFile.
func readRSS() rss {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return rss{}
	}
	defer f.Close()
	var r rss
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM" && name != "RssFile") {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			r.now, r.ok = kb<<10, true
		case "VmHWM":
			r.peak = kb << 10
		default:
			r.file = kb << 10
		}
	}
	return r
}

// resetRSS returns freed memory to the OS and resets the peak (VmHWM) to
// the current resident set (Linux: writing 5 to /proc/self/clear_refs),
// so that a phase's RSS growth and peak are its own, not an earlier
// phase's leftovers. It returns the resident set after.
func resetRSS() (rss, error) {
	settleCleanups()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return readRSS(), fmt.Errorf("bench: reset peak RSS: %w", err)
	}
	return readRSS(), nil
}

// settleCleanups runs the garbage collector and waits (up to a second
// each time) for the cleanups it queued to have run. A closed isotsdb
// unmaps its files (blocks, head chunk files) in cleanups, once nothing
// reads them; a phase that measured RSS before they ran would count an
// earlier phase's mappings as its own, and see its RSS shrink as they go.
func settleCleanups() {
	for range 2 {
		done := make(chan struct{})
		sentinel := new([64]byte) // not a tiny allocation: its cleanup runs
		runtime.AddCleanup(sentinel, func(ch chan struct{}) { close(ch) }, done)
		sentinel = nil
		runtime.GC()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}
}
