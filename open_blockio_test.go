package tsdb

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/vfs"
)

// writeAdvIntent leaves in fsys the intent of a Delete of [0, 5h] of the
// series m selects, as a crash in the middle of that Delete does.
func writeAdvIntent(t *testing.T, fsys *vfs.MemFS, base advBase) {
	t.Helper()
	m := advDelMatcher(base)
	mustWrite(t, fsys, "data/"+deleteIntentFile, []byte(fmt.Sprintf(`{"mint":0,"maxt":%d,"matchers":[{"type":%d,"name":%q,"value":%q}]}`, 5*3600_000, m.Type, m.Name, m.Value)))
}

// TestOpenBlockIOErrorKeepsInterruptedDelete fails, with EIO, each
// filesystem operation that opening a block makes, once, with the intent
// of an interrupted Delete on disk. Open must fail with an error that
// names the block and wraps the cause but is no ErrCorruptBlock, keep the
// intent and leave every block alone; the next Open completes the delete
// on every block and the head.
func TestOpenBlockIOErrorKeepsInterruptedDelete(t *testing.T) {
	base := advBaseDB(t)
	b0 := filepath.Join("data", base.blocks[0].ULID.String())
	deleted := advDeleted(base.want, base.lsets, advDelMatcher(base), 0, 5*3600_000)
	cases := []struct {
		op   vfs.Op
		file string // inside b0
	}{
		{vfs.OpOpen, metaFilename},
		{vfs.OpStat, metaFilename},
		{vfs.OpRead, metaFilename},
		{vfs.OpMap, indexFilename},
		{vfs.OpReadDir, chunksDirname},
		{vfs.OpMap, filepath.Join(chunksDirname, "000001")},
		{vfs.OpMap, tombstones.Filename},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %s", c.op, c.file), func(t *testing.T) {
			fsys := base.fs.Crash()
			writeAdvIntent(t, fsys, base)
			target := filepath.Join(b0, c.file)
			var hit atomic.Bool
			fsys.SetHook(func(op vfs.Op, path string) error {
				if op == c.op && filepath.Clean(path) == target && hit.CompareAndSwap(false, true) {
					return syscall.EIO
				}
				return nil
			})
			_, err := openAdv(fsys, nil)
			fsys.SetHook(nil)
			require.True(t, hit.Load(), "Open never did %s on %s", c.op, target)
			require.Error(t, err, "Open must fail on an I/O error opening a block")
			require.Contains(t, err.Error(), filepath.Base(b0), "the error names the block")
			require.ErrorIs(t, err, syscall.EIO, "the error wraps the cause")
			require.NotErrorIs(t, err, ErrCorruptBlock, "a transient fault is no corrupt block")
			_, err = fsys.Stat("data/" + deleteIntentFile)
			require.NoError(t, err, "the intent stays for the next Open")

			db, err := openAdv(fsys, nil)
			require.NoError(t, err)
			got, err := fullQuery(db)
			require.NoError(t, err)
			require.NoError(t, db.Close())
			requireSameSamples(t, deleted, got)
			_, err = fsys.Stat("data/" + deleteIntentFile)
			require.ErrorIs(t, err, fs.ErrNotExist, "the completed delete's intent is removed")
		})
	}
}

// TestOpenIntentReadErrorKeepsInterruptedDelete: a read error on the
// intent file is no unreadable intent: Open fails and keeps it, and the
// next Open completes the delete.
func TestOpenIntentReadErrorKeepsInterruptedDelete(t *testing.T) {
	base := advBaseDB(t)
	deleted := advDeleted(base.want, base.lsets, advDelMatcher(base), 0, 5*3600_000)
	fsys := base.fs.Crash()
	writeAdvIntent(t, fsys, base)
	intent := filepath.Join("data", deleteIntentFile)
	var hit atomic.Bool
	fsys.SetHook(func(op vfs.Op, path string) error {
		if op == vfs.OpRead && filepath.Clean(path) == intent && hit.CompareAndSwap(false, true) {
			return syscall.EIO
		}
		return nil
	})
	_, err := openAdv(fsys, nil)
	fsys.SetHook(nil)
	require.True(t, hit.Load())
	require.ErrorIs(t, err, syscall.EIO)
	_, err = fsys.Stat(intent)
	require.NoError(t, err, "the intent stays for the next Open")
	db, err := openAdv(fsys, nil)
	require.NoError(t, err)
	got, err := fullQuery(db)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	requireSameSamples(t, deleted, got)
}

// TestOpenCorruptBlockInterruptedDelete: with a block damaged (skipped as
// corrupt, so never served) and an interrupted Delete, Open completes the
// delete on the rest, removes the intent, and names the skipped block in
// an error log saying the delete did not reach it. A new Delete over the
// block's range logs the same; one outside it does not.
func TestOpenCorruptBlockInterruptedDelete(t *testing.T) {
	base := advBaseDB(t)
	b0 := filepath.Join("data", base.blocks[0].ULID.String())
	deleted := advDeleted(base.want, base.lsets, advDelMatcher(base), 0, 5*3600_000)
	for _, damage := range []struct {
		name string
		fn   func(t *testing.T, fsys *vfs.MemFS)
	}{
		{"index-garbage", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(b0, indexFilename), randomBytes(100))
		}},
		{"meta-garbage", func(t *testing.T, fsys *vfs.MemFS) {
			mustWrite(t, fsys, filepath.Join(b0, metaFilename), []byte("{"))
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			fsys := base.fs.Crash()
			damage.fn(t, fsys)
			writeAdvIntent(t, fsys, base)
			var logs bytes.Buffer
			o := DefaultOptions()
			o.FS = fsys
			db, err := Open("data", slogTo(&logs), nil, o)
			require.NoError(t, err, "Open skips a corrupt block")
			defer func() { require.NoError(t, db.Close()) }()
			got, err := fullQuery(db)
			require.NoError(t, err)
			requireSameSamples(t, withoutRange(deleted, base.blocks[0].MinTime, base.blocks[0].MaxTime), got)
			_, err = fsys.Stat("data/" + deleteIntentFile)
			require.ErrorIs(t, err, fs.ErrNotExist, "the resumed delete is complete on what can be read")
			requireDeleteSkipLog(t, logs.String(), filepath.Base(b0), 1)

			logs.Reset()
			m := advDelMatcher(base)
			require.NoError(t, db.Delete(ctx, base.blocks[0].MinTime, base.blocks[0].MinTime+1, m))
			requireDeleteSkipLog(t, logs.String(), filepath.Base(b0), 1)
			if damage.name == "index-garbage" { // range known from meta.json
				logs.Reset()
				require.NoError(t, db.Delete(ctx, base.blocks[0].MaxTime, base.blocks[0].MaxTime+1, m))
				requireDeleteSkipLog(t, logs.String(), filepath.Base(b0), 0)
			}
		})
	}
}

// requireDeleteSkipLog checks that logs hold n lines saying that a delete
// was not applied to the skipped block id.
func requireDeleteSkipLog(t *testing.T, logs, id string, n int) {
	t.Helper()
	count := 0
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "delete not applied") && strings.Contains(l, id) && strings.Contains(l, "level=ERROR") {
			count++
		}
	}
	require.Equal(t, n, count, "log lines naming the skipped block that missed the delete:\n%s", logs)
}

// TestOpenBlockErrorClassification: which failures to open a block are
// damage (ErrCorruptBlock, skipped) and which are I/O (Open fails).
func TestOpenBlockErrorClassification(t *testing.T) {
	pe := func(err error) error { return &fs.PathError{Op: "open", Path: "data/b/meta.json", Err: err} }
	for _, c := range []struct {
		name    string
		err     error
		corrupt bool
	}{
		{"missing file", pe(syscall.ENOENT), true},
		{"missing file, fs sentinel", pe(fs.ErrNotExist), true},
		{"not a directory", fmt.Errorf("chunks: read chunks directory: %w", pe(syscall.ENOTDIR)), true},
		{"is a directory", pe(syscall.EISDIR), true},
		{"bad JSON", errors.New("parse meta.json: unexpected EOF"), true},
		{"bad contents joined with a clean close", errors.Join(errors.New("bad magic"), nil), true},
		{"EIO", pe(syscall.EIO), false},
		{"EACCES", pe(syscall.EACCES), false},
		{"wrapped mmap failure", fmt.Errorf("index: open x: %w", &fs.PathError{Op: "mmap", Path: "x", Err: syscall.ENOMEM}), false},
		{"bad contents joined with a failed close", errors.Join(errors.New("bad magic"), pe(syscall.EIO)), false},
		{"bare errno", syscall.EIO, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := blockOpenError("data/b", nil, c.err)
			require.Contains(t, err.Error(), "data/b")
			require.ErrorIs(t, err, c.err)
			require.Equal(t, c.corrupt, errors.Is(err, ErrCorruptBlock), "%v", err)
		})
	}
}
