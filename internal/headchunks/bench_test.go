package headchunks

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunktest"
	"github.com/isotsdb/tsdb/vfs"
)

// BenchmarkAddFlush measures adding a typical head chunk (120 scraped
// float samples) and flushing it, on the OS file system, with a Flush
// after every chunk, every 100 or every 8,192 (the head maps chunks in
// batches of that many).
func BenchmarkAddFlush(b *testing.B) {
	r := rand.New(rand.NewPCG(18, 18))
	cs := make([]chunks.Chunk, 64)
	for i := range cs {
		ss := chunktest.GenScrape(r, 120, int64(i)*1_800_000, 50, chunktest.GaugeValues)
		c := chunks.NewXORChunk()
		app, err := c.Appender()
		require.NoError(b, err)
		chunktest.AppendAll(app, ss)
		c.Compact()
		cs[i] = c
	}
	for _, batch := range []int{1, 100, 8192} {
		b.Run(fmt.Sprintf("flush_every=%d", batch), func(b *testing.B) {
			w, _, err := Open(vfs.OS(), filepath.Join(b.TempDir(), "chunks_head"), Options{}, nil)
			require.NoError(b, err)
			b.ReportAllocs()
			b.SetBytes(recordSize(len(cs[0].Bytes())))
			i := 0
			for b.Loop() {
				c := cs[i%len(cs)]
				if batch > 100 && i%batch == 0 {
					// As the head does before a batch.
					var n int64
					for k := range batch {
						n += RecordSize(len(cs[(i+k)%len(cs)].Bytes()))
					}
					w.Grow(n)
				}
				if _, err := w.Add(uint64(1+i%1000), int64(i), int64(i)+1, c); err != nil {
					b.Fatal(err)
				}
				i++
				if i%batch == 0 {
					if err := w.Flush(); err != nil {
						b.Fatal(err)
					}
				}
			}
			require.NoError(b, w.Close())
		})
	}
}
