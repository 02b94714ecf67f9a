package chunkseg

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunktest"
	"github.com/isotsdb/tsdb/vfs"
)

// benchMetas returns 20,000 chunks of 120 samples of realistic scrapes
// (about 2.5 MiB of records) and their total record size.
func benchMetas(b *testing.B) ([]chunks.Meta, int64) {
	r := rand.New(rand.NewPCG(8, 8))
	metas := make([]chunks.Meta, 20_000)
	var total int64
	for i := range metas {
		var ss []chunktest.Sample
		if i%2 == 0 {
			ss = chunktest.GenScrape(r, 120, 1_700_000_000_000, 50, chunktest.GaugeValues)
		} else {
			ss = chunktest.GenScrape(r, 120, 1_700_000_000_000, 0, chunktest.CounterValues())
		}
		c := encode(b, ss)
		c.Compact()
		metas[i] = chunks.Meta{Chunk: c, MinTime: ss[0].T, MaxTime: ss[len(ss)-1].T}
		total += recordSize(len(c.Bytes()))
	}
	return metas, total
}

// BenchmarkSegmentWrite writes a block's worth of chunks and closes the
// writer (which syncs) per iteration; MB/s counts record bytes.
func BenchmarkSegmentWrite(b *testing.B) {
	metas, total := benchMetas(b)
	for _, fsName := range []string{"memfs", "os"} {
		b.Run(fsName, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(total)
			root := b.TempDir()
			for i := 0; b.Loop(); i++ {
				var fsys vfs.FS = vfs.NewMemFS()
				if fsName == "os" {
					fsys = vfs.OS()
				}
				w, err := NewSegmentWriter(fsys, filepath.Join(root, fmt.Sprint(i), "chunks"))
				if err != nil {
					b.Fatal(err)
				}
				if err := w.WriteChunks(metas...); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSegmentRead reads every chunk of a mapped block by reference
// (bounds and checksum checks, no decoding); MB/s counts record bytes.
func BenchmarkSegmentRead(b *testing.B) {
	metas, total := benchMetas(b)
	dir := filepath.Join(b.TempDir(), "chunks")
	w, err := NewSegmentWriter(vfs.OS(), dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.WriteChunks(metas...); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	rd, err := NewSegmentReader(vfs.OS(), dir)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()

	b.ReportAllocs()
	b.SetBytes(total)
	for b.Loop() {
		for _, m := range metas {
			if _, err := rd.Chunk(m.Ref); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(metas)), "ns/chunk")
}
