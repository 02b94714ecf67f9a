package check

import (
	"errors"
	"path/filepath"

	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// The reads below serve the offline inspection commands of cmd/tsdb (ls,
// analyze), which, like the checker, look at the on-disk formats where the
// public API does not reach. They take no lock and write nothing.

// LastCheckpoint returns the directory of the newest checkpoint of the WAL
// in walDir, or "" and a nil error if it has none.
func LastCheckpoint(fsys vfs.FS, walDir string) (string, error) {
	cp, _, err := wlog.LastCheckpoint(fsys, walDir)
	if errors.Is(err, wlog.ErrNotFound) {
		return "", nil
	}
	return cp, err
}

// IndexSeries reads the index of the block in blockDir and calls f for
// each series, in the order of the index (sorted by labels): its label set
// (a copy f may keep), the number of its chunks, and the time range they
// cover (the first chunk's MinTime and the last chunk's MaxTime; 0 and 0
// for a series without chunks). It reads no chunks and opens no database.
// It stops at the first error, from the index or from f, and returns it.
func IndexSeries(fsys vfs.FS, blockDir string, f func(lset labels.Labels, nchunks int, mint, maxt int64) error) error {
	ix, err := index.NewFileReader(fsys, filepath.Join(blockDir, indexFilename))
	if err != nil {
		return err
	}
	defer ix.Close()
	p, err := ix.AllPostings()
	if err != nil {
		return err
	}
	var (
		builder = labels.NewScratchBuilder(16)
		metas   []index.ChunkMeta
	)
	for p.Next() {
		if err := ix.Series(p.At(), &builder, &metas); err != nil {
			return err
		}
		var mint, maxt int64
		if len(metas) > 0 {
			mint, maxt = metas[0].MinTime, metas[len(metas)-1].MaxTime
		}
		if err := f(builder.Labels(), len(metas), mint, maxt); err != nil {
			return err
		}
	}
	return p.Err()
}
