package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"

	"github.com/oklog/ulid/v2"
)

// heapMetrics sum to the heap in use (MemStats.HeapInuse): bytes in spans
// that hold objects, live or not yet swept, plus those spans' free slots.
var heapMetrics = [...]string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
}

// heapInUse returns the bytes of heap in use now. Unlike
// runtime.ReadMemStats it does not stop the world.
func heapInUse() uint64 {
	var s [len(heapMetrics)]metrics.Sample
	for i, name := range heapMetrics {
		s[i].Name = name
	}
	metrics.Read(s[:])
	var sum uint64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindUint64 {
			sum += x.Value.Uint64()
		}
	}
	return sum
}

// heapInUseAfterGC collects garbage and returns the heap in use: the live
// heap, plus fragmentation. It collects twice: a sync.Pool's contents
// survive one collection (as its victim cache), so after one the pools of
// an earlier run in the process (tests run several) would still count, and
// a baseline taken then could exceed the heap of the run measured.
func heapInUseAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	return heapInUse()
}

// diskUsage is what a data dir holds, by kind.
type diskUsage struct {
	total       int64
	walBytes    int64
	walSegments int // segment files in wal/, checkpoints not counted
	checkpoints int // wal/checkpoint.N directories
	blockBytes  int64
	blocks      int // directories named by a ULID
	otherBytes  int64
}

// measureDisk walks dir and sums the sizes of its regular files.
func measureDisk(dir string) (diskUsage, error) {
	var u diskUsage
	// Background compaction may remove files while the walk runs: a file
	// that is gone no longer counts.
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if d.IsDir() {
			switch {
			case len(parts) == 1 && isULID(parts[0]):
				u.blocks++
			case len(parts) == 2 && parts[0] == "wal" && strings.HasPrefix(parts[1], "checkpoint."):
				u.checkpoints++
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		size := info.Size()
		u.total += size
		switch {
		case parts[0] == "wal":
			u.walBytes += size
			if len(parts) == 2 {
				u.walSegments++
			}
		case len(parts) > 1 && isULID(parts[0]):
			u.blockBytes += size
		default:
			u.otherBytes += size
		}
		return nil
	})
	if err != nil {
		return diskUsage{}, fmt.Errorf("measure data dir: %w", err)
	}
	return u, nil
}

func isULID(name string) bool {
	_, err := ulid.ParseStrict(name)
	return err == nil
}

// describe says what is on disk, e.g. "wal: 2 segments; no blocks".
func (u diskUsage) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wal: %s", plural(u.walSegments, "segment"))
	if u.checkpoints > 0 {
		fmt.Fprintf(&b, " + %s", plural(u.checkpoints, "checkpoint"))
	}
	if u.blocks == 0 {
		b.WriteString("; no blocks")
	} else {
		fmt.Fprintf(&b, "; %s", plural(u.blocks, "block"))
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
