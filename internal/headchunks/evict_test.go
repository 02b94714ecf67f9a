package headchunks

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/vfs"
)

// evictFS is a MemFS whose mappings count their Evict calls per mapping.
type evictFS struct {
	*vfs.MemFS
	mu   sync.Mutex
	maps map[string][]*evictMapped // by file base name, in mapping order
}

type evictMapped struct {
	vfs.Mapped
	fs      *evictFS
	evicted int // guarded by fs.mu
}

func (e *evictMapped) Evict() error {
	e.fs.mu.Lock()
	e.evicted++
	e.fs.mu.Unlock()
	return e.Mapped.Evict()
}

func (fs *evictFS) Map(name string) (vfs.Mapped, error) {
	m, err := fs.MemFS.Map(name)
	if err != nil {
		return nil, err
	}
	em := &evictMapped{Mapped: m, fs: fs}
	fs.mu.Lock()
	fs.maps[filepath.Base(name)] = append(fs.maps[filepath.Base(name)], em)
	fs.mu.Unlock()
	return em, nil
}

// evictions returns, per file, the Evict count of each of its mappings.
func (fs *evictFS) evictions() map[string][]int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := map[string][]int{}
	for name, ms := range fs.maps {
		for _, m := range ms {
			out[name] = append(out[name], m.evicted)
		}
	}
	return out
}

// TestTruncateEvictsRemovedFiles checks that Truncate evicts the pages of
// every mapping of each file it removes, old mappings of a file that grew
// included, and of no file it keeps; and that Open evicts each file it
// loaded once, after reading it.
func TestTruncateEvictsRemovedFiles(t *testing.T) {
	fsys := &evictFS{MemFS: vfs.NewMemFS(), maps: map[string][]*evictMapped{}}
	recs := genRecs(t, rand.New(rand.NewPCG(7, 7)), 24, 20)
	for i := range recs {
		recs[i].mint, recs[i].maxt = int64(i*10), int64(i*10+5) // file order is time order
	}
	w, _, err := Open(fsys, testDir, Options{MaxFileSize: 1500}, nil)
	require.NoError(t, err)
	// A Flush after every 2 records: files grow over several flushes and
	// get a mapping each time. Keep a chunk of every mapping reachable.
	var held []chunks.Chunk
	for i := 0; i < len(recs); i += 2 {
		addAll(t, w, recs[i:i+2])
		require.NoError(t, w.Flush())
		c, err := w.Chunk(recs[i].ref)
		require.NoError(t, err)
		held = append(held, c)
	}
	files := w.Files()
	require.GreaterOrEqual(t, files, 3)
	before := fsys.evictions()
	require.Len(t, before, files)
	grew := 0
	for name, ev := range before {
		require.Equal(t, make([]int, len(ev)), ev, "file %s evicted before Truncate", name)
		if len(ev) > 1 {
			grew++
		}
	}
	require.Positive(t, grew, "no file was mapped more than once")

	// Remove every file whose records all end before record 12.
	cut := recs[12]
	seqCut, _ := SplitRef(cut.ref)
	removed, err := w.Truncate(cut.mint)
	require.NoError(t, err)
	require.Positive(t, removed)
	after := fsys.evictions()
	for seq := 1; seq <= files; seq++ {
		ev := after[FileName(seq)]
		want := 0
		if seq <= removed {
			want = 1
			require.Less(t, uint32(seq), seqCut)
		}
		for i, n := range ev {
			require.Equal(t, want, n, "file %d mapping %d", seq, i)
		}
	}
	// The chunks of removed files still read (evicting changes no data).
	for i, c := range held {
		requireSameSamples(t, chunkOf(t, recs[2*i]), c)
	}
	runtime.KeepAlive(held)
	require.NoError(t, w.Close())

	// Open maps each file once and evicts it once it has read it.
	fsys.maps = map[string][]*evictMapped{}
	_, res, _ := openAll(t, fsys, Options{MaxFileSize: 1500})
	require.Equal(t, files-removed, res.Files)
	for name, ev := range fsys.evictions() {
		require.Equal(t, []int{1}, ev, "file %s", name)
	}
}
