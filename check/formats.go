package check

import (
	"errors"
	"path/filepath"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunkseg"
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

// ChunkInfo describes one chunk of a series as BlockChunks reads it.
type ChunkInfo struct {
	// MinTime and MaxTime are the chunk's range from the index.
	MinTime, MaxTime int64
	// Encoding is the chunk's encoding: chunks.EncXOR for floats,
	// chunks.EncHistogram or chunks.EncFloatHistogram for native
	// histograms.
	Encoding chunks.Encoding
	// Samples is the sample count of the chunk's header.
	Samples int
}

// BlockChunks reads the index of the block in blockDir and the chunk every
// series refers to, and calls f for each series in the order of the index
// (sorted by labels) with its label set (a copy f may keep) and its
// chunks, in time order (the slice is valid only during the call). Each
// chunk's record is read and its checksum verified, but its samples are
// not decoded. It opens no database, and stops at the first error, from
// the files or from f, and returns it: an unreadable chunk or one of an
// unknown encoding is an error wrapping tsdb.ErrCorrupt that names the
// file and offset.
func BlockChunks(fsys vfs.FS, blockDir string, f func(lset labels.Labels, chks []ChunkInfo) error) error {
	ix, err := index.NewFileReader(fsys, filepath.Join(blockDir, indexFilename))
	if err != nil {
		return err
	}
	defer ix.Close()
	sr, err := chunkseg.NewSegmentReader(fsys, filepath.Join(blockDir, chunksDirname))
	if err != nil {
		return err
	}
	defer sr.Close()
	p, err := ix.AllPostings()
	if err != nil {
		return err
	}
	var (
		builder = labels.NewScratchBuilder(16)
		metas   []index.ChunkMeta
		infos   []ChunkInfo
	)
	for p.Next() {
		if err := ix.Series(p.At(), &builder, &metas); err != nil {
			return err
		}
		infos = infos[:0]
		for _, m := range metas {
			c, err := sr.Chunk(m.Ref)
			if err != nil {
				return err
			}
			infos = append(infos, ChunkInfo{MinTime: m.MinTime, MaxTime: m.MaxTime, Encoding: c.Encoding(), Samples: c.NumSamples()})
		}
		if err := f(builder.Labels(), infos); err != nil {
			return err
		}
	}
	return p.Err()
}
