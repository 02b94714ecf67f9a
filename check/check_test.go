package check_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestCleanDB(t *testing.T) {
	fsys := testDB(t)
	rep := runCheck(t, fsys)
	require.NoError(t, rep.Err())
	var warnings []string
	for _, w := range problems(rep, check.Warning) {
		// Delete does not (yet) update numTombstones in meta.json, which
		// Prometheus does; the checker warns about that.
		if !strings.Contains(w, "tombstones, the tombstones file holds") {
			warnings = append(warnings, w)
		}
	}
	require.Empty(t, warnings, "a cleanly closed DB has nothing to warn about")

	require.NotEmpty(t, rep.Blocks)
	var samples, tombs uint64
	for _, b := range rep.Blocks {
		require.Equal(t, uint64(20), b.Series, b.Dir)
		require.NotZero(t, b.Chunks, b.Dir)
		require.Less(t, b.MinTime, b.MaxTime)
		samples += b.Samples
		tombs += b.Tombstones
	}
	require.NotZero(t, samples)
	require.NotZero(t, tombs, "the test DB deleted a range in a block")
	require.NotEmpty(t, rep.WAL.Checkpoint, "the test DB's WAL has a checkpoint")
	require.GreaterOrEqual(t, rep.WAL.LastSegment, rep.WAL.FirstSegment)
	require.NotZero(t, rep.WAL.Records)
	require.Equal(t, 0, rep.Count(check.Error))
}

func TestNotTSDB(t *testing.T) {
	fsys := vfs.NewMemFS()
	_, err := check.Dir(fsys, "nope")
	require.ErrorIs(t, err, check.ErrNotTSDB)

	require.NoError(t, fsys.MkdirAll("empty/sub", 0o777))
	_, err = check.Dir(fsys, "empty")
	require.ErrorIs(t, err, check.ErrNotTSDB)
	require.ErrorContains(t, err, "no wal directory and no block")
}

// TestCorruption damages one file of the test DB per case and checks that
// the problem is found, with the right severity, file and description.
func TestCorruption(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage changes fsys and returns the path (suffix) the problem
		// must name.
		damage   func(t *testing.T, fsys *vfs.MemFS) string
		severity check.Severity
		contains []string
	}{
		{
			name: "index symbol table",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "index")
				flip(t, fsys, p, 5+8+1) // header, then length and count, then the first symbol's length
				return p
			},
			severity: check.Error,
			contains: []string{"index does not open", "at offset 5", "checksum"},
		},
		{
			name: "index series entry",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[1], "index")
				ref := firstSeriesRef(t, fsys, p)
				flip(t, fsys, p, int(ref*16)+3)
				return p
			},
			severity: check.Error,
			contains: []string{"does not decode", "checksum"},
		},
		{
			name: "chunk data",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "chunks", "000001")
				flip(t, fsys, p, 8+4) // inside the first chunk's data
				return p
			},
			severity: check.Error,
			contains: []string{"at offset 8", "series {", "does not read", "checksum"},
		},
		{
			name: "chunk file header",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "chunks", "000001")
				flip(t, fsys, p, 1)
				return p
			},
			severity: check.Error,
			contains: []string{"at offset 0", "magic"},
		},
		{
			name: "meta.json ulid",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				b := blocks(t, fsys)[0]
				p := filepath.Join(b, "meta.json")
				id := filepath.Base(b)
				other := id[:25] + string("0123456789ABCDEFGHJKMNPQRSTVWXYZ"[(strings.IndexByte("0123456789ABCDEFGHJKMNPQRSTVWXYZ", id[25])+1)%32])
				rewrite(t, fsys, p, func(b []byte) []byte { return bytes.Replace(b, []byte(id), []byte(other), 1) })
				return p
			},
			severity: check.Error,
			contains: []string{"differs from the directory name"},
		},
		{
			name: "meta.json syntax",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "meta.json")
				rewrite(t, fsys, p, func(b []byte) []byte {
					i := bytes.IndexByte(b, ':')
					b[i] = ';'
					return b
				})
				return p
			},
			severity: check.Error,
			contains: []string{"bad meta.json", "at offset"},
		},
		{
			name: "meta.json stats",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "meta.json")
				rewrite(t, fsys, p, func(b []byte) []byte {
					return replaceJSONField(t, b, "numSeries", "20", "21")
				})
				return p
			},
			severity: check.Error,
			contains: []string{"stats say 21 series, the block holds 20"},
		},
		{
			name: "meta.json version",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "meta.json")
				rewrite(t, fsys, p, func(b []byte) []byte {
					return replaceJSONField(t, b, "version", "1", "2")
				})
				return p
			},
			severity: check.Error,
			contains: []string{"version 2, want 1"},
		},
		{
			name: "tombstones",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "tombstones")
				flip(t, fsys, p, 0)
				return p
			},
			severity: check.Error,
			contains: []string{"tombstones do not decode", "magic"},
		},
		{
			name: "tombstones with intervals",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := tombstonesWithData(t, fsys)
				flip(t, fsys, p, 6) // an entry
				return p
			},
			severity: check.Error,
			contains: []string{"tombstones do not decode"},
		},
		{
			name: "wal segment in the middle",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				segs := walSegments(t, fsys)
				p := segs[len(segs)-2]
				flip(t, fsys, p, 7+2) // data of the first fragment
				return p
			},
			severity: check.Error,
			contains: []string{"followed by valid records", "at offset 0"},
		},
		{
			name: "wal checkpoint",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := checkpointSegment(t, fsys)
				flip(t, fsys, p, 7+2)
				return p
			},
			severity: check.Error,
			contains: []string{"checkpoint is damaged"},
		},
		{
			name: "wal torn tail",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := lastSegmentWithData(t, fsys)
				rewrite(t, fsys, p, func(b []byte) []byte {
					end := len(bytes.TrimRight(b, "\x00"))
					return b[:end-3] // the last record loses its end
				})
				return p
			},
			severity: check.Warning,
			contains: []string{"torn tail"},
		},
		{
			name: "wal missing segment",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				segs := walSegments(t, fsys)
				require.GreaterOrEqual(t, len(segs), 3)
				require.NoError(t, fsys.Remove(segs[len(segs)-2]))
				return filepath.Join(dbDir, "wal")
			},
			severity: check.Error,
			contains: []string{"are missing"},
		},
		{
			name: "postings list missing a series",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "index")
				refs := seriesRefs(t, fsys, p, labels.MustNewMatcher(labels.MatchEqual, "instance", "host-7"))
				other := seriesRefs(t, fsys, p, labels.MustNewMatcher(labels.MatchEqual, "instance", "host-8"))
				rewrite(t, fsys, p, func(b []byte) []byte {
					old := postingsList(uint32(refs[0]))
					require.Equal(t, 1, bytes.Count(b, old))
					return bytes.Replace(b, old, postingsList(uint32(other[0])), 1)
				})
				return p
			},
			severity: check.Error,
			contains: []string{"not in exactly the postings lists of its labels", `instance="host-7"`},
		},
		{
			name: "postings list out of order",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(blocks(t, fsys)[0], "index")
				refs := seriesRefs(t, fsys, p, labels.MustNewMatcher(labels.MatchEqual, "__name__", "up"))
				rewrite(t, fsys, p, func(b []byte) []byte {
					old := postingsList(u32s(refs)...)
					require.Equal(t, 1, bytes.Count(b, old))
					swapped := u32s(refs)
					swapped[0], swapped[1] = swapped[1], swapped[0]
					return bytes.Replace(b, old, postingsList(swapped...), 1)
				})
				return p
			},
			severity: check.Error,
			contains: []string{`postings list of __name__="up" is not strictly increasing`},
		},
		{
			name: "leftover temporary directory",
			damage: func(t *testing.T, fsys *vfs.MemFS) string {
				p := filepath.Join(dbDir, ".tmp-01ABC-for-creation")
				require.NoError(t, fsys.MkdirAll(p, 0o777))
				return p
			},
			severity: check.Warning,
			contains: []string{"leftover"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := testDB(t)
			path := tc.damage(t, fsys)
			rep := runCheck(t, fsys)
			requireProblem(t, rep, tc.severity, filepath.ToSlash(path), tc.contains...)
			if tc.severity == check.Error {
				require.ErrorIs(t, rep.Err(), check.ErrInconsistent)
				require.Contains(t, rep.Err().Error(), path)
			} else {
				require.NoError(t, rep.Err(), "warnings only")
			}
		})
	}
}

// TestHandBlock checks chunk ranges that only a hand-made index can get
// wrong.
func TestHandBlock(t *testing.T) {
	ts := func(from, to int64) []int64 {
		var out []int64
		for t := from; t <= to; t += 100 {
			out = append(out, t)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		mint, maxt int64
		series     handSeries
		severity   check.Severity
		contains   string
	}{
		{"consistent", 0, 3000, handSeries{labels.FromStrings("a", "1"), ts(1000, 2000), 1000, 2000}, 0, ""},
		{"sample outside the chunk's range", 0, 3000, handSeries{labels.FromStrings("a", "1"), ts(1000, 2000), 1500, 2000},
			check.Error, "sample 0 at 1000 is outside the chunk's range [1500, 2000]"},
		{"chunk range wider than its samples", 0, 3000, handSeries{labels.FromStrings("a", "1"), ts(1000, 2000), 500, 2500},
			check.Warning, "samples span [1000, 2000], the index says [500, 2500]"},
		{"chunk outside the block", 0, 1500, handSeries{labels.FromStrings("a", "1"), ts(1000, 2000), 1000, 2000},
			check.Error, "is not inside the block's range [0, 1500)"},
		{"chunk ending at the block's end", 0, 2000, handSeries{labels.FromStrings("a", "1"), ts(1000, 2000), 1000, 2000},
			check.Error, "is not inside the block's range [0, 2000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			dir := writeHandBlock(t, fsys, tc.mint, tc.maxt, []handSeries{tc.series})
			rep := runCheck(t, fsys)
			if tc.severity == 0 {
				require.Empty(t, rep.Problems, reportText(rep))
				return
			}
			p := requireProblem(t, rep, tc.severity, "chunks/000001", tc.contains, `{a="1"}`)
			require.Equal(t, int64(8), p.Offset)
			require.True(t, strings.HasPrefix(p.Path, dir))
		})
	}
}

func TestOverlappingBlocks(t *testing.T) {
	fsys := vfs.NewMemFS()
	s := handSeries{labels.FromStrings("a", "1"), []int64{1000, 1100}, 1000, 1100}
	writeHandBlock(t, fsys, 0, 2000, []handSeries{s})
	second := writeHandBlock(t, fsys, 1000, 3000, []handSeries{s})
	rep := runCheck(t, fsys)
	requireProblem(t, rep, check.Warning, filepath.Base(second), "overlaps block")
	require.NoError(t, rep.Err())
}

// TestProblemsPerFileBounded: a file with damage everywhere is summed up,
// not listed in full.
func TestProblemsPerFileBounded(t *testing.T) {
	fsys := testDB(t)
	p := largestChunkFile(t, fsys)
	rewrite(t, fsys, p, func(b []byte) []byte {
		for i := 9; i < len(b); i += 29 {
			b[i] ^= 0x55
		}
		return b
	})
	rep := runCheck(t, fsys)
	n := 0
	for _, pr := range rep.Problems {
		if pr.Path == p {
			n++
		}
	}
	require.LessOrEqual(t, n, 21)
	requireProblem(t, rep, check.Error, p, "more problems in this file not listed")
}

func TestProblemString(t *testing.T) {
	p := check.Problem{Severity: check.Error, Path: "d/index", Offset: 16, Series: `{a="1"}`, Msg: "bad"}
	require.Equal(t, `error: d/index at offset 16, series {a="1"}: bad`, p.String())
	p = check.Problem{Severity: check.Warning, Path: "d", Offset: -1, Msg: "odd", Err: check.ErrNotTSDB}
	require.Equal(t, "warning: d: odd: check: not a TSDB data directory", p.String())
	require.Equal(t, "Severity(7)", check.Severity(7).String())
}

func firstSeriesRef(t *testing.T, fsys vfs.FS, path string) uint64 {
	t.Helper()
	refs := seriesRefs(t, fsys, path)
	return refs[0]
}

// seriesRefs returns the references of the series of the index at path
// matching ms (all without matchers).
func seriesRefs(t *testing.T, fsys vfs.FS, path string, ms ...*labels.Matcher) []uint64 {
	t.Helper()
	ix, err := index.NewFileReader(fsys, path)
	require.NoError(t, err)
	defer ix.Close()
	p, err := index.PostingsForMatchers(ix, ms...)
	require.NoError(t, err)
	refs, err := index.ExpandPostings(p)
	require.NoError(t, err)
	require.NotEmpty(t, refs)
	return refs
}

func u32s(refs []uint64) []uint32 {
	out := make([]uint32, len(refs))
	for i, r := range refs {
		out[i] = uint32(r)
	}
	return out
}

// tombstonesWithData returns the path of a tombstones file that holds
// intervals.
func tombstonesWithData(t *testing.T, fsys *vfs.MemFS) string {
	t.Helper()
	for _, b := range blocks(t, fsys) {
		p := filepath.Join(b, "tombstones")
		data, err := fsys.ReadFile(p)
		require.NoError(t, err)
		if len(data) > 9 {
			return p
		}
	}
	require.FailNow(t, "no block has tombstones")
	return ""
}

// checkpointSegment returns the first segment of the WAL's checkpoint.
func checkpointSegment(t *testing.T, fsys *vfs.MemFS) string {
	t.Helper()
	ents, err := fsys.ReadDir(filepath.Join(dbDir, "wal"))
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "checkpoint.") {
			return filepath.Join(dbDir, "wal", e.Name(), "00000000")
		}
	}
	require.FailNow(t, "no checkpoint")
	return ""
}

// lastSegmentWithData returns the newest WAL segment that holds records.
func lastSegmentWithData(t *testing.T, fsys *vfs.MemFS) string {
	t.Helper()
	segs := walSegments(t, fsys)
	for i := len(segs) - 1; i >= 0; i-- {
		b, err := fsys.ReadFile(segs[i])
		require.NoError(t, err)
		if len(bytes.TrimRight(b, "\x00")) > 0 {
			return segs[i]
		}
	}
	require.FailNow(t, "no WAL segment holds records")
	return ""
}

// largestChunkFile returns the biggest chunk segment file of the blocks.
func largestChunkFile(t *testing.T, fsys *vfs.MemFS) string {
	t.Helper()
	best, size := "", 0
	for _, b := range blocks(t, fsys) {
		p := filepath.Join(b, "chunks", "000001")
		data, err := fsys.ReadFile(p)
		require.NoError(t, err)
		if len(data) > size {
			best, size = p, len(data)
		}
	}
	return best
}

// replaceJSONField replaces the value old of the field name in the JSON b
// (indented or not) with new, and fails the test if b has no such field.
func replaceJSONField(t *testing.T, b []byte, name, old, new string) []byte {
	t.Helper()
	re := regexp.MustCompile(`"` + regexp.QuoteMeta(name) + `":\s*` + regexp.QuoteMeta(old) + `\b`)
	loc := re.FindIndex(b)
	require.NotNil(t, loc, "no %q: %s in %s", name, old, b)
	return slices.Concat(b[:loc[0]], []byte(`"`+name+`": `+new), b[loc[1]:])
}

// headChunksDB writes a DB whose closed head chunks are in chunks_head/:
// 20 series for an hour, in the head (2 h blocks), then Close.
func headChunksDB(t *testing.T) *vfs.MemFS {
	t.Helper()
	fsys := vfs.NewMemFS()
	opts := tsdb.DefaultOptions()
	opts.FS = fsys
	db, err := tsdb.Open(dbDir, nil, nil, opts)
	require.NoError(t, err)
	ctx := context.Background()
	for round := int64(0); round < 3600*1000/step; round++ {
		app := db.Appender(ctx)
		for i := range 20 {
			lset := labels.FromStrings("__name__", "up", "instance", fmt.Sprintf("host-%d", i))
			_, err := app.Append(0, lset, baseTime+round*step, float64(round*int64(i)))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Close())
	fsys.SyncAll()
	return fsys
}

// TestHeadChunks checks the head chunk files: a clean DB's are counted
// without a problem; a flipped byte, and a file whose number does not
// follow, are each reported as a warning at the damaged file (the next
// open repairs them, and the WAL replays what they held), and the check
// writes nothing.
func TestHeadChunks(t *testing.T) {
	fsys := headChunksDB(t)
	rep := runCheck(t, fsys)
	require.NoError(t, rep.Err())
	hc := rep.HeadChunks
	require.Equal(t, filepath.Join(dbDir, "chunks_head"), hc.Dir)
	require.Positive(t, hc.Files)
	require.Positive(t, hc.Chunks, "Close maps the closed chunks")
	require.Positive(t, hc.Bytes)
	for _, p := range rep.Problems {
		require.NotContains(t, p.Path, "chunks_head", p.String())
	}

	first := filepath.Join(dbDir, "chunks_head", "000001")
	flip(t, fsys, first, 8+30) // inside the first record
	before, err := fsys.ReadFile(first)
	require.NoError(t, err)
	rep = runCheck(t, fsys)
	require.NoError(t, rep.Err(), "damaged head chunks are a warning")
	requireProblem(t, rep, check.Warning, "chunks_head/000001", "damaged head chunk file")
	require.Less(t, rep.HeadChunks.Chunks, hc.Chunks)
	after, err := fsys.ReadFile(first)
	require.NoError(t, err)
	require.Equal(t, before, after, "check writes nothing")

	fsys = headChunksDB(t)
	require.NoError(t, fsys.WriteFile(filepath.Join(dbDir, "chunks_head", "000099"), []byte("garbage"), 0o666))
	rep = runCheck(t, fsys)
	require.NoError(t, rep.Err())
	requireProblem(t, rep, check.Warning, "chunks_head/000099", "does not follow")
	require.Equal(t, hc.Chunks, rep.HeadChunks.Chunks)
}
