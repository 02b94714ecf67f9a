package remote

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// FuzzReadSegment: readSegment over arbitrary bytes, from an arbitrary
// offset, never panics, reports records in increasing order after the
// offset, and returns an offset no smaller than the one it was given.
func FuzzReadSegment(f *testing.F) {
	dir := f.TempDir()
	w, err := wlog.Open(nil, nil, vfs.OS(), dir, wlog.Options{})
	if err != nil {
		f.Fatal(err)
	}
	for i := range 20 {
		rec := make([]byte, 1+i*5000)
		rec[0] = 2
		if err := w.Log(rec); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(wlog.SegmentName(dir, 0))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, uint32(0))
	f.Add(seed, uint32(5015))
	f.Add(seed[:40000], uint32(12))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0}, uint32(3))
	f.Fuzz(func(t *testing.T, data []byte, off uint32) {
		path := filepath.Join(t.TempDir(), "seg")
		if err := os.WriteFile(path, data, 0o666); err != nil {
			t.Fatal(err)
		}
		start := int64(off) % (int64(len(data)) + 1)
		prev := start
		last, _ := readSegment(path, start, func(rec []byte, end int64) error {
			if end <= prev {
				t.Fatalf("record ends at %d, after %d", end, prev)
			}
			prev = end
			return nil
		})
		if last < start || last != prev {
			t.Fatalf("returned %d, start %d, last record end %d", last, start, prev)
		}
	})
}
