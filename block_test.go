package tsdb

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/vfs"
)

// blockTestDB writes 6 hours of 100 series into dir (on fsys) and compacts,
// so that the DB has blocks, then closes it.
func blockTestDB(t *testing.T, fsys vfs.FS, dir string) []BlockMeta {
	t.Helper()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open(dir, nil, nil, o)
	require.NoError(t, err)
	scrapeHours(t, db, loadSeries(t, 100), 6)
	require.NoError(t, db.Compact(ctx))
	blocks := db.Blocks()
	require.GreaterOrEqual(t, len(blocks), 2)
	require.NoError(t, db.Close())
	return blocks
}

func TestMetaRoundTrip(t *testing.T) {
	m := BlockMeta{ULID: newULID(), MinTime: 0, MaxTime: 7200000, Version: 1}
	m.Stats.NumSamples = 42
	m.Compaction.Level = 2
	m.Compaction.Sources = []ulid.ULID{newULID(), newULID()}
	b, err := json.Marshal(&m)
	require.NoError(t, err)
	got, err := decodeMeta(b)
	require.NoError(t, err)
	require.Equal(t, m, got)

	for _, bad := range []string{
		`{}`,
		`{"ulid":"01ARZ3NDEKTSV4RRFFQ69G5FAV","minTime":10,"maxTime":5,"version":1}`,
		`{"ulid":"01ARZ3NDEKTSV4RRFFQ69G5FAV","minTime":0,"maxTime":5,"version":2}`,
		`{"ulid":"nope","minTime":0,"maxTime":5,"version":1}`,
		`[`,
	} {
		_, err := decodeMeta([]byte(bad))
		require.Error(t, err, bad)
	}
}

// FuzzDecodeMeta: arbitrary bytes give a meta or an error, never a panic;
// a meta that decodes survives a round trip.
func FuzzDecodeMeta(f *testing.F) {
	f.Add([]byte(`{"ulid":"01ARZ3NDEKTSV4RRFFQ69G5FAV","minTime":0,"maxTime":5,"stats":{"numSamples":3},"compaction":{"level":1,"sources":["01ARZ3NDEKTSV4RRFFQ69G5FAV"]},"version":1}`))
	f.Add([]byte(`{}`))
	// isotsdb's field: a mark, and garbage in its place (no mark).
	f.Add([]byte(`{"ulid":"01ARZ3NDEKTSV4RRFFQ69G5FAV","minTime":0,"maxTime":5,"version":1,"isotsdb":{"walMark":[3,40960,5]}}`))
	f.Add([]byte(`{"ulid":"01ARZ3NDEKTSV4RRFFQ69G5FAV","minTime":0,"maxTime":5,"version":1,"isotsdb":{"walMark":["3"]}}`))
	f.Add([]byte(`{"ulid":"01ARZ3NDEKTSV4RRFFQ69G5FAV","minTime":0,"maxTime":5,"version":1,"isotsdb":[{"walMark":-1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMeta(b)
		if err != nil {
			return
		}
		out, err := json.Marshal(&m)
		require.NoError(t, err)
		m2, err := decodeMeta(out)
		require.NoError(t, err, "re-decode")
		require.True(t, m2.ULID == m.ULID && m2.MinTime == m.MinTime && m2.MaxTime == m.MaxTime && m2.Compaction.Level == m.Compaction.Level,
			"round trip changed %+v into %+v", m, m2)
		if m.Isotsdb != nil {
			require.Equal(t, m.Isotsdb.WALMark, m2.Isotsdb.WALMark, "round trip of the WAL mark")
		}
	})
}

// TestCorruptBlockSkipped: a block whose index is damaged is reported by
// name and counted; the DB opens without it and serves the rest.
func TestCorruptBlockSkipped(t *testing.T) {
	fsys := vfs.NewMemFS()
	blocks := blockTestDB(t, fsys, "data")
	bad := filepath.Join("data", blocks[0].ULID.String(), indexFilename)
	b, err := fsys.ReadFile(bad)
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	b[len(b)-1] ^= 0xff // the TOC's checksum
	require.NoError(t, fsys.WriteFile(bad, b, 0o666))

	var logBuf lockedBuffer
	reg := prometheus.NewRegistry()
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", slogTo(&logBuf), reg, o)
	require.NoError(t, err)
	defer db.Close()
	require.Len(t, db.Blocks(), len(blocks)-1)
	require.Equal(t, 1.0, gauge(t, reg, "tsdb_blocks_corrupt_total"))
	require.Contains(t, logBuf.String(), blocks[0].ULID.String())
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	require.NotEmpty(t, querySamples(t, q), "the rest keeps serving")
}

// TestTmpLeftoversRemoved: directories of interrupted block writes are
// removed at Open.
func TestTmpLeftoversRemoved(t *testing.T) {
	fsys := vfs.NewMemFS()
	blocks := blockTestDB(t, fsys, "data")
	require.NoError(t, fsys.MkdirAll("data/.tmp-"+newULID().String()+"-for-creation/chunks", 0o777))
	o := DefaultOptions()
	o.FS = fsys
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	ents, err := fsys.ReadDir("data")
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, isTmpDir(e.Name()), "leftover %s", e.Name())
	}
	require.Len(t, db.Blocks(), len(blocks))
}

// TestLockFile: a second Open of the same directory fails clearly.
func TestLockFile(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil, nil, nil)
	require.NoError(t, err)
	_, err = Open(dir, nil, nil, nil)
	require.ErrorIs(t, err, vfs.ErrLocked)
	require.Contains(t, err.Error(), dir)
	require.NoError(t, db.Close())
	db, err = Open(dir, nil, nil, nil) // released on Close
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

// TestOpenReadOnly: a read-only open of a directory another DB has open
// sees its blocks and WAL, takes no lock and writes nothing.
func TestOpenReadOnly(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.WALSyncEveryCommit = true
	db, err := Open(dir, nil, nil, o)
	require.NoError(t, err)
	defer db.Close()
	lsets := loadSeries(t, 100)
	scrapeHours(t, db, lsets, 6)
	require.NoError(t, db.Compact(ctx))
	before := listTree(t, dir)

	ro, err := OpenReadOnly(dir, nil, nil)
	require.NoError(t, err)
	require.Equal(t, db.Blocks(), ro.Blocks())
	require.Equal(t, len(lsets)*6*240, requireSameData(t, db, ro))
	_, err = ro.Appender(ctx).Append(0, lsets[0], 1<<40, 1)
	require.ErrorIs(t, err, ErrReadOnly)
	require.ErrorIs(t, ro.Compact(ctx), ErrReadOnly)
	require.NoError(t, ro.Close())
	require.Equal(t, before, listTree(t, dir), "read-only open wrote nothing")

	_, err = OpenReadOnly(t.TempDir(), nil, nil)
	require.ErrorIs(t, err, ErrNotTSDB)
}

// listTree returns every path below dir with its size.
func listTree(t *testing.T, dir string) []string {
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %s", p, info.Size(), info.ModTime().Format(time.RFC3339Nano)))
		return nil
	}))
	sort.Strings(out)
	return out
}
