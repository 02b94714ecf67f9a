package tsdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/vfs"
)

// snapshotsDirname is the directory inside the data directory that may hold
// snapshots.
const snapshotsDirname = "snapshots"

// Snapshot writes a consistent copy of the DB into dir while it keeps
// taking writes. dir must not exist or be empty, and must lie outside the
// data directory (except below its snapshots/ directory, Prometheus's
// place for them). Blocks are hard-linked (copied where links fail). With
// withHead, the head's data as of the call, commits seen whole or not at
// all like any query, is written as one more block. The copy opens as a DB
// of its own. It is built in a temporary sibling directory and renamed to
// dir at the end, so a crash leaves either no snapshot or a whole one.
//
// Snapshot holds the DB's compaction lock throughout: compactions,
// retention, Delete and CleanTombstones wait for it (appends and queries
// do not).
func (db *DB) Snapshot(dir string, withHead bool) error {
	absData, err1 := filepath.Abs(db.dir)
	absDir, err2 := filepath.Abs(dir)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	// Inside the data directory only under snapshots/, where Prometheus's
	// admin API puts them (Open ignores that directory).
	if rel, err := filepath.Rel(absData, absDir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) &&
		!strings.HasPrefix(rel, snapshotsDirname+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s is inside the data directory (only %s/ there is allowed)", ErrInvalidSnapshotDir, dir, snapshotsDirname)
	}
	dirExists := false
	if ents, err := db.fs.ReadDir(dir); err == nil {
		if len(ents) > 0 {
			return fmt.Errorf("%w: %s is not empty", ErrInvalidSnapshotDir, dir)
		}
		dirExists = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tsdb: snapshot: %w", err)
	}

	// Hold off compaction, retention, Delete and CleanTombstones for the
	// whole copy: the blocks linked must stay on disk (a block being
	// deleted is first renamed away), and the blocks, their tombstones and
	// the head cut taken below must be one consistent state, not one in the
	// middle of a compaction that published its block but still reads the
	// range from the head. Taken before the querier: a compaction waits for
	// older queriers with cmtx held.
	release, err := db.beginAdmin(context.Background(), opSnapshot)
	if err != nil {
		return err
	}
	defer release()

	// Take the head's snapshot first: the copy holds every commit that
	// completed before the call.
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return err
	}
	defer q.Close()
	qr := q.(*querier)

	parent := filepath.Dir(filepath.Clean(dir))
	tmp := filepath.Join(parent, tmpPrefix+filepath.Base(dir)+"-"+newULID().String())
	if err := db.fs.MkdirAll(tmp, 0o777); err != nil {
		return fmt.Errorf("tsdb: snapshot: %w", err)
	}
	if err := db.snapshotInto(tmp, qr, withHead); err != nil {
		return errors.Join(fmt.Errorf("tsdb: snapshot: %w", err), db.fs.RemoveAll(tmp))
	}
	if dirExists {
		if err := db.fs.Remove(dir); err != nil {
			return errors.Join(fmt.Errorf("tsdb: snapshot: %w", err), db.fs.RemoveAll(tmp))
		}
	}
	if err := db.fs.Rename(tmp, dir); err != nil {
		return errors.Join(fmt.Errorf("tsdb: snapshot: %w", err), db.fs.RemoveAll(tmp))
	}
	if err := db.fs.SyncDir(parent); err != nil {
		// Not durable: a crash could lose it. Take it away, so that an
		// error always means "no snapshot" and the call can be retried.
		return errors.Join(fmt.Errorf("tsdb: snapshot: %w", err), db.fs.RemoveAll(dir))
	}
	return nil
}

func (db *DB) snapshotInto(tmp string, q *querier, withHead bool) error {
	for i, b := range q.blocks {
		dst := filepath.Join(tmp, b.meta.ULID.String())
		if err := linkTree(db.fs, b.dir, dst); err != nil {
			return fmt.Errorf("block %s: %w", b.meta.ULID, err)
		}
		// The block's tombstones as the snapshot saw them.
		if _, err := tombstones.WriteFile(db.fs, dst, q.blockTombs[i]); err != nil {
			return err
		}
	}
	if withHead {
		h := db.head
		mint, maxt := max(h.MinTime(), q.headMint), h.MaxTime()
		if mint <= maxt {
			meta := BlockMeta{ULID: newULID(), MinTime: mint, MaxTime: maxt + 1}
			meta.Compaction.Level = 1
			meta.Compaction.Sources = []ulid.ULID{meta.ULID}
			ss := h.selectSeries(context.Background(), q, q.visible, q.headTombs, mint, maxt, nil)
			if _, err := writeBlock(db.fs, tmp, meta, ss, h.samplesPerChunk); err != nil {
				return fmt.Errorf("head: %w", err)
			}
		}
	}
	return db.fs.SyncDir(tmp)
}

// linkTree hard-links every file below src into dst (created), copying
// where a link fails, and syncs the directories it creates.
func linkTree(fsys vfs.FS, src, dst string) error {
	if err := fsys.MkdirAll(dst, 0o777); err != nil {
		return err
	}
	ents, err := fsys.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if e.IsDir() {
			if err := linkTree(fsys, s, d); err != nil {
				return err
			}
			continue
		}
		if err := fsys.Link(s, d); err != nil {
			if err := copyFile(fsys, s, d); err != nil {
				return err
			}
		}
	}
	return fsys.SyncDir(dst)
}

func copyFile(fsys vfs.FS, src, dst string) error {
	in, err := fsys.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fsys.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	if err := out.Sync(); err != nil {
		return errors.Join(err, out.Close())
	}
	return out.Close()
}
