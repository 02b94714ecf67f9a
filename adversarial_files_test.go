package tsdb

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// fileCase damages a copy of the base DB. blockHit is true if the damage
// is to block 0, which may then be skipped (its samples missing) but must
// not take anything else with it.
type fileCase struct {
	name     string
	damage   func(t *testing.T, fsys *vfs.MemFS, b0, b1 string)
	blockHit bool
}

func mustWrite(t *testing.T, fsys *vfs.MemFS, path string, data []byte) {
	t.Helper()
	require.NoError(t, fsys.MkdirAll(filepath.Dir(path), 0o777))
	require.NoError(t, fsys.WriteFile(path, data, 0o666))
	fsys.SyncAll()
}

func truncateTo(t *testing.T, fsys *vfs.MemFS, path string, frac float64) {
	t.Helper()
	b, err := fsys.ReadFile(path)
	require.NoError(t, err)
	mustWrite(t, fsys, path, b[:int(float64(len(b))*frac)])
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func remove(t *testing.T, fsys *vfs.MemFS, path string) {
	t.Helper()
	require.NoError(t, fsys.RemoveAll(path))
	fsys.SyncAll()
}

// flipByte flips one byte in the middle of path.
func flipByte(t *testing.T, fsys *vfs.MemFS, path string, frac float64) {
	t.Helper()
	b, err := fsys.ReadFile(path)
	require.NoError(t, err)
	b[int(float64(len(b))*frac)] ^= 0xff
	mustWrite(t, fsys, path, b)
}

func blockFileCases() []fileCase {
	var cs []fileCase
	add := func(name string, f func(t *testing.T, fsys *vfs.MemFS, b0, b1 string)) {
		cs = append(cs, fileCase{name: name, damage: f, blockHit: true})
	}
	for _, file := range []string{"meta.json", "index", "chunks/000001", "tombstones"} {
		file := file
		if file != "tombstones" { // missing tombstones: known, being fixed
			add(file+"/missing", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) { remove(t, fsys, filepath.Join(b0, file)) })
		}
		add(file+"/empty", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) { mustWrite(t, fsys, filepath.Join(b0, file), nil) })
		add(file+"/garbage", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
			mustWrite(t, fsys, filepath.Join(b0, file), randomBytes(4096))
		})
		add(file+"/zeros", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
			mustWrite(t, fsys, filepath.Join(b0, file), make([]byte, 4096))
		})
		for _, frac := range []float64{0.1, 0.5, 0.99} {
			add(fmt.Sprintf("%s/truncated-%v", file, frac), func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
				truncateTo(t, fsys, filepath.Join(b0, file), frac)
			})
		}
		if file != "meta.json" {
			for _, frac := range []float64{0.05, 0.5, 0.9} {
				add(fmt.Sprintf("%s/flipped-%v", file, frac), func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
					flipByte(t, fsys, filepath.Join(b0, file), frac)
				})
			}
		}
		add(file+"/is-a-dir", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
			remove(t, fsys, filepath.Join(b0, file))
			require.NoError(t, fsys.MkdirAll(filepath.Join(b0, file, "x"), 0o777))
			fsys.SyncAll()
		})
	}
	metas := map[string]string{
		"empty-object":   `{}`,
		"wrong-version":  `{"ulid":"%s","minTime":0,"maxTime":7200000,"version":2}`,
		"min-after-max":  `{"ulid":"%s","minTime":7200000,"maxTime":0,"version":1}`,
		"null":           `null`,
		"array":          `[1,2,3]`,
		"bad-ulid":       `{"ulid":"not-a-ulid","minTime":0,"maxTime":7200000,"version":1}`,
		"trailing":       `{"ulid":"%s","minTime":0,"maxTime":7200000,"version":1} garbage`,
		"huge-level":     `{"ulid":"%s","minTime":0,"maxTime":7200000,"version":1,"compaction":{"level":2147483647}}`,
		"self-parent":    `{"ulid":"%s","minTime":0,"maxTime":7200000,"version":1,"compaction":{"level":2,"parents":[{"ulid":"%[1]s"}]}}`,
		"negative-stats": `{"ulid":"%s","minTime":0,"maxTime":7200000,"version":1,"stats":{"numSamples":-1}}`,
	}
	for name, m := range metas {
		add("meta.json/"+name, func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
			s := m
			if bytes.Contains([]byte(m), []byte("%")) {
				s = fmt.Sprintf(m, filepath.Base(b0))
			}
			mustWrite(t, fsys, filepath.Join(b0, "meta.json"), []byte(s))
		})
	}
	add("meta.json/ulid-of-other-block", func(t *testing.T, fsys *vfs.MemFS, b0, b1 string) {
		b, err := fsys.ReadFile(filepath.Join(b0, "meta.json"))
		require.NoError(t, err)
		mustWrite(t, fsys, filepath.Join(b0, "meta.json"), bytes.ReplaceAll(b, []byte(filepath.Base(b0)), []byte(filepath.Base(b1))))
	})
	add("chunks/missing-dir", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) { remove(t, fsys, filepath.Join(b0, "chunks")) })
	add("chunks/is-a-file", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
		remove(t, fsys, filepath.Join(b0, "chunks"))
		mustWrite(t, fsys, filepath.Join(b0, "chunks"), []byte("x"))
	})
	add("chunks/extra-garbage-segment", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
		mustWrite(t, fsys, filepath.Join(b0, "chunks", "000002"), randomBytes(100))
	})
	add("chunks/extra-empty-segment", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
		mustWrite(t, fsys, filepath.Join(b0, "chunks", "000002"), nil)
	})
	add("chunks/renumbered-segment", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
		require.NoError(t, fsys.Rename(filepath.Join(b0, "chunks", "000001"), filepath.Join(b0, "chunks", "000007")))
		fsys.SyncAll()
	})
	add("block/empty-dir", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
		remove(t, fsys, b0)
		require.NoError(t, fsys.MkdirAll(b0, 0o777))
		fsys.SyncAll()
	})
	add("block/is-a-file", func(t *testing.T, fsys *vfs.MemFS, b0, _ string) {
		remove(t, fsys, b0)
		mustWrite(t, fsys, b0, []byte("x"))
	})
	return cs
}

// TestAdversarialBlockFiles damages one file of one block in every way and
// opens the DB: Open must succeed, the damaged block may be skipped (its
// samples missing), every other sample must be served, queries never error
// or panic, and the DB keeps taking writes and compacting.
func TestAdversarialBlockFiles(t *testing.T) {
	base := advBaseDB(t)
	b0 := filepath.Join("data", base.blocks[0].ULID.String())
	b1 := filepath.Join("data", base.blocks[1].ULID.String())
	wantSkipped := withoutRange(base.want, base.blocks[0].MinTime, base.blocks[0].MaxTime)
	for _, c := range blockFileCases() {
		t.Run(c.name, func(t *testing.T) {
			fsys := base.fs.Crash()
			c.damage(t, fsys, b0, b1)
			var logs bytes.Buffer
			o := DefaultOptions()
			o.FS = fsys
			db, err := Open("data", slogTo(&logs), nil, o)
			require.NoError(t, err, "Open must skip a corrupt block")
			defer func() { require.NoError(t, db.Close()) }()
			if c.name != "block/is-a-file" {
				_, err := fsys.Stat(b0)
				require.NoError(t, err, "a block that cannot be used must stay on disk for inspection")
			}
			got, err := fullQuery(db)
			if err != nil {
				// Damage found only when read: the error names the block and
				// says what is wrong; the rest of the DB still serves.
				require.Contains(t, err.Error(), filepath.Base(b0))
				require.True(t, errors.Is(err, chunks.ErrCorrupt) || errors.Is(err, chunkseg.ErrInvalidRef) || errors.Is(err, ErrCorrupt),
					"untyped corruption error: %v", err)
				q, err := db.Querier(base.blocks[0].MaxTime, math.MaxInt64)
				require.NoError(t, err)
				requireSameSamples(t, withoutRange(base.want, math.MinInt64, base.blocks[0].MaxTime), querySamples(t, q))
				require.NoError(t, q.Close())
			} else if !sameData(got, base.want) {
				requireSameSamples(t, wantSkipped, got)
				if c.name != "block/is-a-file" {
					require.Contains(t, logs.String(), filepath.Base(b0), "the skipped block is named in the log")
				}
			}
			// The rest keeps taking writes. (Compaction over a block
			// damaged this way: TestAdversarialCorruptChunksWedgeCompaction.)
			app := db.Appender(ctx)
			_, err = app.Append(0, base.lsets[0], int64(advRounds+100)*15000, 1)
			require.NoError(t, err)
			require.NoError(t, app.Commit())
		})
	}
}

// advWALDir is the WAL directory of the base DB.
const advWALDir = "data/wal"

// advWALFiles returns the newest WAL segment and checkpoint of fsys.
func advWALFiles(t *testing.T, fsys *vfs.MemFS) (seg, cp string) {
	t.Helper()
	ents, err := fsys.ReadDir(advWALDir)
	require.NoError(t, err)
	for _, e := range ents {
		switch {
		case e.IsDir() && strings.HasPrefix(e.Name(), "checkpoint."):
			cp = filepath.Join(advWALDir, e.Name())
		case !e.IsDir():
			st, err := fsys.Stat(filepath.Join(advWALDir, e.Name()))
			require.NoError(t, err)
			if st.Size() > 0 {
				seg = filepath.Join(advWALDir, e.Name())
			}
		}
	}
	require.NotEmpty(t, seg, "a WAL segment with records")
	require.NotEmpty(t, cp)
	return seg, cp
}

// TestAdversarialWALFiles damages the WAL and its checkpoint: Open must
// succeed (a torn or corrupt log is repaired to its last whole record),
// block data is whole, head data is a prefix of what was written, and the
// repaired DB takes commits and opens again with them.
func TestAdversarialWALFiles(t *testing.T) {
	base := advBaseDB(t)
	seg, cp := advWALFiles(t, base.fs)
	cases := []struct {
		name   string
		damage func(t *testing.T, fsys *vfs.MemFS)
	}{
		{"segment/empty", func(t *testing.T, fsys *vfs.MemFS) { mustWrite(t, fsys, seg, nil) }},
		{"segment/garbage", func(t *testing.T, fsys *vfs.MemFS) { mustWrite(t, fsys, seg, randomBytes(32768)) }},
		{"segment/truncated-mid-record", func(t *testing.T, fsys *vfs.MemFS) { truncateTo(t, fsys, seg, 0.37) }},
		{"segment/truncated-1-byte", func(t *testing.T, fsys *vfs.MemFS) { truncateTo(t, fsys, seg, 0.0001) }},
		{"segment/zero-tail", func(t *testing.T, fsys *vfs.MemFS) {
			b, err := fsys.ReadFile(seg)
			require.NoError(t, err)
			mustWrite(t, fsys, seg, append(b[:len(b)/2], make([]byte, 40000)...))
		}},
		{"segment/flipped", func(t *testing.T, fsys *vfs.MemFS) { flipByte(t, fsys, seg, 0.3) }},
		{"segment/extra-garbage-segment", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(advWALDir, "00000009"), randomBytes(1000))
		}},
		{"segment/extra-empty-segment", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(advWALDir, "00000009"), nil)
		}},
		{"segment/gap", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(advWALDir, "00000005"), nil)
		}},
		{"segment/is-a-dir", func(t *testing.T, fsys *vfs.MemFS) {
			require.NoError(t, fsys.MkdirAll(filepath.Join(advWALDir, "00000009"), 0o777))
			fsys.SyncAll()
		}},
		{"segment/unknown-file", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(advWALDir, "README"), []byte("hi"))
		}},
		{"checkpoint/empty-dir", func(t *testing.T, fsys *vfs.MemFS) { remove(t, fsys, filepath.Join(cp, "00000000")) }},
		{"checkpoint/garbage", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(cp, "00000000"), randomBytes(5000))
		}},
		{"checkpoint/truncated", func(t *testing.T, fsys *vfs.MemFS) { truncateTo(t, fsys, filepath.Join(cp, "00000000"), 0.5) }},
		{"checkpoint/tmp-leftover", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(advWALDir, "checkpoint.00000008.tmp", "00000000"), randomBytes(100))
		}},
		{"checkpoint/is-a-file", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(advWALDir, "checkpoint.00000000"), randomBytes(100))
		}},
		{"wal/is-a-file", func(t *testing.T, fsys *vfs.MemFS) {
			remove(t, fsys, advWALDir)
			mustWrite(t, fsys, advWALDir, []byte("x"))
		}},
	}
	blockEnd := base.blocks[len(base.blocks)-1].MaxTime
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := base.fs.Crash()
			c.damage(t, fsys)
			db, err := openAdv(fsys, nil)
			if err != nil {
				// Refusing to open is acceptable only with a clear error for a
				// damage that cannot be repaired without losing data silently.
				t.Logf("Open refused: %v", err)
				require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, wlog.ErrNotSequential) || errors.Is(err, ErrWALIncomplete) || errors.Is(err, syscall.ENOTDIR),
					"Open's refusal carries no typed error: %v", err)
				return
			}
			got, err := fullQuery(db)
			require.NoError(t, err)
			// Blocks whole; the head a per-series prefix of what was written.
			for k, w := range base.want {
				g := got[k]
				var wb []sample
				for _, s := range w {
					if s.T < blockEnd {
						wb = append(wb, s)
					}
				}
				require.GreaterOrEqual(t, len(g), len(wb), "block samples of %s lost", k)
				requireSameSamples(t, map[string][]sample{k: w[:len(g)]}, map[string][]sample{k: g})
			}
			ts := int64(advRounds+1000) * 15000
			app := db.Appender(ctx)
			_, err = app.Append(0, base.lsets[0], ts, 42)
			require.NoError(t, err)
			require.NoError(t, app.Commit())
			require.NoError(t, db.Close())
			db, err = openAdv(fsys.Crash(), nil)
			require.NoError(t, err, "second open after repair")
			got2, err := fullQuery(db)
			require.NoError(t, err)
			last := got2[base.lsets[0].String()]
			require.NotEmpty(t, last)
			require.Equal(t, sample{ts, 42}, last[len(last)-1], "commit after repair survives reopen")
			require.NoError(t, db.Close())
		})
	}
}

// TestAdversarialDataDirFiles puts unexpected things into the data dir.
func TestAdversarialDataDirFiles(t *testing.T) {
	base := advBaseDB(t)
	cases := []struct {
		name   string
		damage func(t *testing.T, fsys *vfs.MemFS)
	}{
		{"tmp-dir-leftover", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join("data", tmpPrefix+"01ARZ3NDEKTSV4RRFFQ69G5FAV-for-creation", "meta.json"), []byte("{}"))
		}},
		{"tmp-file-leftover", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join("data", tmpPrefix+"x"), []byte("x"))
		}},
		{"unknown-file", func(t *testing.T, fsys *vfs.MemFS) { mustWrite(t, fsys, "data/notes.txt", []byte("x")) }},
		{"unknown-dir", func(t *testing.T, fsys *vfs.MemFS) { mustWrite(t, fsys, "data/foo/bar", []byte("x")) }},
		{"ulid-named-file", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, "data/01ARZ3NDEKTSV4RRFFQ69G5FAV", []byte("x"))
		}},
		{"ulid-named-empty-dir", func(t *testing.T, fsys *vfs.MemFS) {
			require.NoError(t, fsys.MkdirAll("data/01ARZ3NDEKTSV4RRFFQ69G5FAV", 0o777))
			fsys.SyncAll()
		}},
		{"lock-garbage", func(t *testing.T, fsys *vfs.MemFS) { mustWrite(t, fsys, "data/lock", randomBytes(100)) }},
		{"delete-intent-garbage", func(t *testing.T, fsys *vfs.MemFS) { mustWrite(t, fsys, "data/"+deleteIntentFile, randomBytes(50)) }},
		{"delete-intent-empty", func(t *testing.T, fsys *vfs.MemFS) { mustWrite(t, fsys, "data/"+deleteIntentFile, nil) }},
		{"delete-intent-no-matchers", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, "data/"+deleteIntentFile, []byte(`{"mint":0,"maxt":9223372036854775807,"matchers":[]}`))
		}},
		{"delete-intent-bad-regexp", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, "data/"+deleteIntentFile, []byte(`{"mint":0,"maxt":1,"matchers":[{"type":2,"name":"a","value":"("}]}`))
		}},
		{"delete-intent-bad-type", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, "data/"+deleteIntentFile, []byte(`{"mint":0,"maxt":1,"matchers":[{"type":99,"name":"a","value":"b"}]}`))
		}},
		{"delete-intent-inverted-range", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, "data/"+deleteIntentFile, []byte(`{"mint":10,"maxt":1,"matchers":[{"type":0,"name":"job","value":"bench"}]}`))
		}},
		{"delete-intent-is-a-dir", func(t *testing.T, fsys *vfs.MemFS) {
			require.NoError(t, fsys.MkdirAll("data/"+deleteIntentFile, 0o777))
			fsys.SyncAll()
		}},
		{"snapshots-dir-garbage", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, "data/snapshots/x/meta.json", randomBytes(10))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := base.fs.Crash()
			c.damage(t, fsys)
			db, err := openAdv(fsys, nil)
			require.NoError(t, err)
			got, err := fullQuery(db)
			require.NoError(t, err)
			requireSameSamples(t, base.want, got)
			require.NoError(t, db.Compact(ctx))
			require.NoError(t, db.Close())
		})
	}
}

// TestAdversarialCorruptBlockSkippedByCompaction: a block whose chunks are
// damaged in a way Open cannot see (checksums are checked on read) used to
// make every block compaction that included it fail, forever, and, since
// Compact returned before applying retention, stopped retention too. Now
// the Compact that finds the damage marks the block failed (persisted in
// its meta.json), compacts the other blocks without it and applies
// retention; later Compacts succeed; the block is still queried (queries
// outside the damage work, the error of one that hits it names the block)
// and reported by the checker; retention deletes it when it ages out.
func TestAdversarialCorruptBlockSkippedByCompaction(t *testing.T) {
	base := advBaseDB(t)
	fsys := base.fs.Crash()
	bad := base.blocks[0]
	badDir := filepath.Join("data", bad.ULID.String())
	flipByte(t, fsys, filepath.Join(badDir, "chunks", "000001"), 0.5)
	open := func(retention time.Duration) (*DB, *lockedBuffer) {
		t.Helper()
		o := DefaultOptions()
		o.FS, o.RetentionDuration, o.MaxBlockDuration = fsys, retention, 18*time.Hour
		var logs lockedBuffer
		db, err := Open("data", slogTo(&logs), nil, o)
		require.NoError(t, err)
		return db, &logs
	}
	db, logs := open(15 * 24 * time.Hour)

	// The head cuts a third block; merging the three reads the damage.
	err := db.Compact(ctx)
	require.ErrorIs(t, err, ErrCorruptBlock)
	require.ErrorIs(t, err, chunks.ErrCorrupt)
	require.Contains(t, err.Error(), badDir, "the error names the block")
	require.Contains(t, logs.String(), bad.ULID.String(), "the log names the block")
	metas := db.Blocks()
	require.Len(t, metas, 2)
	require.Equal(t, bad.ULID, metas[0].ULID)
	require.True(t, metas[0].Compaction.Failed, "the damaged block is marked failed")
	merged := metas[1]
	require.False(t, merged.Compaction.Failed)
	require.Equal(t, 2, merged.Compaction.Level, "the other blocks compacted without the damaged one")
	require.Equal(t, base.blocks[1].ULID, merged.Compaction.Parents[0].ULID)
	require.Equal(t, bad.MaxTime, merged.MinTime, "the new block does not span the damaged one")
	require.NoError(t, db.Compact(ctx), "compaction is no longer wedged")

	// Queries outside the damage return everything; one over it fails
	// naming the block.
	got, err := queryFrom(db, bad.MaxTime)
	require.NoError(t, err)
	requireSameSamples(t, withoutRange(base.want, math.MinInt64, bad.MaxTime), got)
	_, err = fullQuery(db)
	require.ErrorIs(t, err, ErrCorruptBlock)
	require.Contains(t, err.Error(), badDir)
	require.NoError(t, db.Close())

	// The checker still reports the damage.
	rep, err := check.Dir(fsys, "data")
	require.NoError(t, err)
	require.Error(t, rep.Err())
	require.Contains(t, rep.Err().Error(), filepath.Join(badDir, "chunks", "000001"))

	// The mark survives a restart: nothing to compact, no error.
	db, _ = open(15 * 24 * time.Hour)
	require.True(t, db.Blocks()[0].Compaction.Failed, "the mark is in meta.json")
	require.NoError(t, db.Compact(ctx))
	require.Len(t, db.Blocks(), 2)
	require.NoError(t, db.Close())

	// Once it ages out, retention deletes it and keeps the rest.
	newest := merged.MaxTime + time.Hour.Milliseconds() // the head reaches past the merged block
	db, _ = open(time.Duration(newest-bad.MaxTime-1) * time.Millisecond)
	defer func() { require.NoError(t, db.Close()) }()
	require.Greater(t, db.head.MaxTime(), newest-time.Hour.Milliseconds())
	require.NoError(t, db.Compact(ctx))
	metas = db.Blocks()
	require.Len(t, metas, 1)
	require.Equal(t, merged.ULID, metas[0].ULID)
	_, err = fsys.Stat(badDir)
	require.ErrorIs(t, err, fs.ErrNotExist)
	got, err = fullQuery(db)
	require.NoError(t, err)
	requireSameSamples(t, withoutRange(base.want, math.MinInt64, bad.MaxTime), got)
}

// TestAdversarialRetentionAfterFailedCompaction: a block compaction that
// fails (here: no space for the new block) no longer stops retention, which
// deletes the blocks it is due to delete and may free the space.
func TestAdversarialRetentionAfterFailedCompaction(t *testing.T) {
	base := advBaseDB(t)
	fsys := base.fs.Crash()
	db, err := openAdv(fsys, func(o *Options) { o.RetentionDuration, o.MaxBlockDuration = time.Hour, 18*time.Hour })
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	// The first block written is the head's; the compaction of the blocks
	// after it fails.
	var created atomic.Int32
	fsys.SetHook(func(op vfs.Op, path string) error {
		if op == vfs.OpMkdir && strings.HasSuffix(path, "-for-creation") && created.Add(1) > 1 {
			return syscall.ENOSPC
		}
		return nil
	})
	err = db.Compact(ctx)
	fsys.SetHook(nil)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.EqualValues(t, 2, created.Load(), "the head compaction succeeded, the block compaction failed")
	newest := db.head.MaxTime()
	for _, m := range db.Blocks() {
		require.Greater(t, m.MaxTime, newest-time.Hour.Milliseconds(), "block %s outlived retention", m.ULID)
		require.False(t, m.Compaction.Failed, "an I/O error marks no block failed")
	}
}
