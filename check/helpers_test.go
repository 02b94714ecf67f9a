package check_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	tsdb "github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

const (
	dbDir = "data"
	// baseTime is the first sample's time: 2024-01-01T00:00:00Z.
	baseTime = int64(1704067200000)
	// step is the scrape interval of the test data.
	step = int64(15000)
)

var (
	templateOnce sync.Once
	templateFS   *vfs.MemFS
	templateErr  error
)

// testDB returns a MemFS holding a closed database in dbDir: 20 series
// scraped every 15 s for 3 h, cut into 10-minute blocks and compacted,
// with a deletion in one block, then 500 more series for 4 minutes in
// the head, so that the WAL has a checkpoint and a few segments. Each call
// returns an independent copy of one database written once.
func testDB(t *testing.T) *vfs.MemFS {
	t.Helper()
	fsys, err := testDBCopy()
	require.NoError(t, err)
	return fsys
}

// testDBCopy is testDB for callers without a *testing.T.
func testDBCopy() (*vfs.MemFS, error) {
	templateOnce.Do(func() { templateFS, templateErr = writeTestDB() })
	if templateErr != nil {
		return nil, templateErr
	}
	return templateFS.Crash(), nil
}

func writeTestDB() (*vfs.MemFS, error) {
	fsys := vfs.NewMemFS()
	opts := tsdb.DefaultOptions()
	opts.FS = fsys
	opts.MinBlockDuration = 10 * time.Minute
	opts.WALSegmentSize = 32 << 10 // one page: many segments, and checkpoints
	db, err := tsdb.Open(dbDir, nil, nil, opts)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	for round := int64(0); round < 3*3600*1000/step; round++ {
		app := db.Appender(ctx)
		for i := range 20 {
			lset := labels.FromStrings("__name__", []string{"up", "requests_total"}[i%2],
				"job", []string{"api", "db"}[i/10], "instance", fmt.Sprintf("host-%d", i))
			if _, err := app.Append(0, lset, baseTime+round*step, float64(round*int64(i))); err != nil {
				return nil, err
			}
		}
		if err := app.Commit(); err != nil {
			return nil, err
		}
	}
	if err := db.Compact(ctx); err != nil {
		return nil, err
	}
	// Tombstones in a block.
	if err := db.Delete(ctx, baseTime+5*60*1000, baseTime+7*60*1000, labels.MustNewMatcher(labels.MatchEqual, "instance", "host-3")); err != nil {
		return nil, err
	}
	// A few WAL segments' worth of data that stays in the head: 500 more
	// series for 4 minutes, which keeps the head's span below the 1.5
	// block ranges that would start a compaction.
	end := baseTime + 3*3600*1000
	for round := int64(0); round < 4*60*1000/step; round++ {
		app := db.Appender(ctx)
		for i := range 500 {
			lset := labels.FromStrings("__name__", "tail", "job", "tail", "instance", fmt.Sprintf("host-%d", 100+i))
			if _, err := app.Append(0, lset, end+round*step, float64(round)); err != nil {
				return nil, err
			}
		}
		if err := app.Commit(); err != nil {
			return nil, err
		}
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	fsys.SyncAll()
	return fsys, nil
}

// runCheck checks dbDir on fsys and fails the test on an error return.
func runCheck(t *testing.T, fsys vfs.FS) *check.Report {
	t.Helper()
	rep, err := check.Dir(fsys, dbDir)
	require.NoError(t, err)
	return rep
}

// problems returns the problems of severity s as strings.
func problems(rep *check.Report, s check.Severity) []string {
	var out []string
	for _, p := range rep.Problems {
		if p.Severity == s {
			out = append(out, p.String())
		}
	}
	return out
}

// requireProblem fails unless rep has a problem of severity s whose path
// ends in pathSuffix and whose text contains every one of contains.
func requireProblem(t *testing.T, rep *check.Report, s check.Severity, pathSuffix string, contains ...string) check.Problem {
	t.Helper()
	for _, p := range rep.Problems {
		if p.Severity != s || !strings.HasSuffix(filepath.ToSlash(p.Path), pathSuffix) {
			continue
		}
		ok := true
		for _, c := range contains {
			ok = ok && strings.Contains(p.String(), c)
		}
		if ok {
			return p
		}
	}
	require.Failf(t, "problem not found", "want %v in %s with %q; got:\n%s", s, pathSuffix, contains, reportText(rep))
	return check.Problem{}
}

func reportText(rep *check.Report) string {
	var b strings.Builder
	for _, p := range rep.Problems {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// blocks returns the block directories of dbDir, oldest first.
func blocks(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	ents, err := fsys.ReadDir(dbDir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if _, err := ulid.ParseStrict(e.Name()); err == nil && e.IsDir() {
			out = append(out, filepath.Join(dbDir, e.Name()))
		}
	}
	require.NotEmpty(t, out)
	return out
}

// flip inverts the byte at off of the file at path.
func flip(t *testing.T, fsys *vfs.MemFS, path string, off int) {
	t.Helper()
	b, err := fsys.ReadFile(path)
	require.NoError(t, err)
	require.Less(t, off, len(b), "%s has %d bytes", path, len(b))
	b[off] ^= 0xff
	require.NoError(t, fsys.WriteFile(path, b, 0o666))
}

// rewrite replaces the file at path by f of its contents.
func rewrite(t *testing.T, fsys *vfs.MemFS, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := fsys.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, fsys.WriteFile(path, f(b), 0o666))
}

// walSegments returns the paths of the WAL segments, in order.
func walSegments(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	ents, err := fsys.ReadDir(filepath.Join(dbDir, "wal"))
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if !e.IsDir() && len(e.Name()) == 8 {
			out = append(out, filepath.Join(dbDir, "wal", e.Name()))
		}
	}
	return out
}

// handSeries is a series of a hand-built block: its samples and the
// chunk range the index claims for its single chunk.
type handSeries struct {
	lset             labels.Labels
	ts               []int64
	minTime, maxTime int64
}

// writeHandBlock writes a block with one XOR chunk per series straight
// with the format packages, so that its index can say what a DB never
// would.
func writeHandBlock(t *testing.T, fsys vfs.FS, mint, maxt int64, series []handSeries) string {
	t.Helper()
	cs := make([]chunkSeries, len(series))
	for i, s := range series {
		c := chunks.NewXORChunk()
		app, err := c.Appender()
		require.NoError(t, err)
		for _, ts := range s.ts {
			app.Append(ts, 1)
		}
		cs[i] = chunkSeries{lset: s.lset, chunk: c, minTime: s.minTime, maxTime: s.maxTime}
	}
	dir, _ := writeChunkBlock(t, fsys, mint, maxt, cs, true)
	return dir
}

// chunkSeries is a series of a hand-built block: its single chunk, of any
// encoding, and the chunk range the index claims for it.
type chunkSeries struct {
	lset             labels.Labels
	chunk            chunks.Chunk
	minTime, maxTime int64
}

// writeChunkBlock writes a block of one chunk per series with the format
// packages, and returns its directory and the chunk reference of each
// series. Its meta.json counts what it holds; with split set it also
// splits the samples into float and histogram samples, as writers since
// native histograms do.
func writeChunkBlock(t *testing.T, fsys vfs.FS, mint, maxt int64, series []chunkSeries, split bool) (string, []uint64) {
	t.Helper()
	id := ulid.MustNew(uint64(mint), strings.NewReader(strings.Repeat("x", 16)))
	dir := filepath.Join(dbDir, id.String())
	cw, err := chunkseg.NewSegmentWriter(fsys, filepath.Join(dir, "chunks"))
	require.NoError(t, err)
	metas := make([]chunks.Meta, len(series))
	syms := map[string]bool{}
	var floats, hists int
	for i, s := range series {
		metas[i] = chunks.Meta{Chunk: s.chunk, MinTime: s.minTime, MaxTime: s.maxTime}
		s.lset.Range(func(l labels.Label) { syms[l.Name], syms[l.Value] = true, true })
		if s.chunk.Encoding() == chunks.EncXOR {
			floats += s.chunk.NumSamples()
		} else {
			hists += s.chunk.NumSamples()
		}
	}
	require.NoError(t, cw.WriteChunks(metas...))
	require.NoError(t, cw.Close())
	iw, err := index.NewWriter(fsys, filepath.Join(dir, "index"))
	require.NoError(t, err)
	var sorted []string
	for s := range syms {
		sorted = append(sorted, s)
	}
	slices.Sort(sorted)
	for _, s := range sorted {
		require.NoError(t, iw.AddSymbol(s))
	}
	refs := make([]uint64, len(series))
	for i, s := range series {
		refs[i] = metas[i].Ref
		require.NoError(t, iw.AddSeries(uint64(i+1), s.lset, index.ChunkMeta{Ref: metas[i].Ref, MinTime: s.minTime, MaxTime: s.maxTime}))
	}
	require.NoError(t, iw.Close())
	_, err = tombstones.WriteFile(fsys, dir, tombstones.NewMemTombstones())
	require.NoError(t, err)
	stats := map[string]any{"numSeries": len(series), "numChunks": len(series), "numSamples": floats + hists}
	if split {
		// Zero counts are omitted, as the writers omit them.
		if floats > 0 {
			stats["numFloatSamples"] = floats
		}
		if hists > 0 {
			stats["numHistogramSamples"] = hists
		}
	}
	meta := map[string]any{
		"ulid": id.String(), "minTime": mint, "maxTime": maxt, "version": 1,
		"stats":      stats,
		"compaction": map[string]any{"level": 1, "sources": []string{id.String()}},
	}
	b, err := json.Marshal(meta)
	require.NoError(t, err)
	f, err := fsys.Create(filepath.Join(dir, "meta.json"))
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return dir, refs
}

// postingsList returns the encoding of a postings list section holding
// refs: length, count, the references and the CRC-32C.
func postingsList(refs ...uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+4*len(refs)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(refs)))
	for _, r := range refs {
		b = binary.BigEndian.AppendUint32(b, r)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[4:], crc32.MakeTable(crc32.Castagnoli)))
}
