package tsdb

import (
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// Writing blocks.
//
// writeBlock turns a SeriesSet sorted by labels into a block directory in
// Prometheus's format: chunk segments, the index, an empty tombstones file
// and meta.json. It writes them in a temporary directory (named with
// tmpPrefix) and renames that into place once everything in it is synced,
// so a crash leaves either the whole block or a leftover that Open
// removes. Head compaction, block compaction, CleanTombstones and Snapshot
// all write their blocks through it.

// newULID returns a new block ID.
func newULID() ulid.ULID {
	return ulid.MustNew(ulid.Now(), rand.Reader)
}

// writtenSeries is a series whose chunks are written, waiting for the index.
type writtenSeries struct {
	lset  labels.Labels
	metas []index.ChunkMeta
}

// writeBlock writes the series of ss, each restricted to [meta.MinTime,
// meta.MaxTime), as a new block in parent. ss must be sorted by labels. It
// returns false, and writes nothing, if there are no samples.
func writeBlock(fsys vfs.FS, parent string, meta BlockMeta, ss SeriesSet, samplesPerChunk int) (bool, error) {
	meta.Version = metaVersion1
	tmp := filepath.Join(parent, tmpPrefix+meta.ULID.String()+"-for-creation")
	if err := fsys.RemoveAll(tmp); err != nil {
		return false, err
	}
	if err := fsys.MkdirAll(tmp, 0o777); err != nil {
		return false, err
	}
	ok, err := writeBlockTmp(fsys, tmp, &meta, ss, samplesPerChunk)
	if err != nil || !ok {
		return false, errors.Join(err, fsys.RemoveAll(tmp))
	}
	final := filepath.Join(parent, meta.ULID.String())
	if err := fsys.Rename(tmp, final); err != nil {
		return false, errors.Join(err, fsys.RemoveAll(tmp))
	}
	if err := fsys.SyncDir(parent); err != nil {
		return false, err
	}
	return true, nil
}

func writeBlockTmp(fsys vfs.FS, dir string, meta *BlockMeta, ss SeriesSet, samplesPerChunk int) (ok bool, err error) {
	cw, err := chunkseg.NewSegmentWriter(fsys, filepath.Join(dir, chunksDirname))
	if err != nil {
		return false, fmt.Errorf("create chunks: %w", err)
	}
	defer func() {
		if cw != nil {
			err = errors.Join(err, cw.Close())
		}
	}()
	var (
		series []writtenSeries
		it     chunks.Iterator
		batch  []chunks.Meta
	)
	for ss.Next() {
		s := ss.At()
		if batch, it, err = blockChunks(s, meta, samplesPerChunk, batch[:0], it); err != nil {
			return false, fmt.Errorf("read %s: %w", s.Labels(), err)
		}
		if len(batch) == 0 {
			continue
		}
		if err := cw.WriteChunks(batch...); err != nil {
			return false, fmt.Errorf("write chunks: %w", err)
		}
		ws := writtenSeries{lset: s.Labels(), metas: make([]index.ChunkMeta, len(batch))}
		for i, m := range batch {
			ws.metas[i] = index.ChunkMeta{Ref: m.Ref, MinTime: m.MinTime, MaxTime: m.MaxTime}
		}
		meta.Stats.NumChunks += uint64(len(batch))
		series = append(series, ws)
	}
	if err := ss.Err(); err != nil {
		return false, err
	}
	if len(series) == 0 {
		return false, nil
	}
	err, cw = cw.Close(), nil
	if err != nil {
		return false, fmt.Errorf("close chunks: %w", err)
	}
	meta.Stats.NumSeries = uint64(len(series))

	if err := writeIndex(fsys, filepath.Join(dir, indexFilename), series); err != nil {
		return false, fmt.Errorf("write index: %w", err)
	}
	if _, err := tombstones.WriteFile(fsys, dir, tombstones.NewMemTombstones()); err != nil {
		return false, fmt.Errorf("write tombstones: %w", err)
	}
	if err := writeMeta(fsys, dir, meta); err != nil {
		return false, fmt.Errorf("write meta.json: %w", err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return false, err
	}
	return true, nil
}

// wholeChunker is a series that can hand its chunks to a block writer as
// they are, without decoding them.
type wholeChunker interface {
	// wholeChunks appends to buf the series' chunks if all of them lie in
	// [mint, maxt), hold at most samplesPerChunk samples each, are final
	// (not open to appends) and hold no sample the reader must not see;
	// it returns them with their number of samples, or ok false (and buf
	// unspecified) if any of that does not hold.
	wholeChunks(mint, maxt int64, samplesPerChunk int, buf []chunks.Meta) (_ []chunks.Meta, samples int, ok bool)
}

// blockChunks appends to batch the chunks of s for the block: its own
// chunks if it can hand them over whole (wholeChunker), else its samples in
// [meta.MinTime, meta.MaxTime) encoded into new chunks. It counts the
// samples in meta. it is an iterator to recycle, returned for the next call.
func blockChunks(s Series, meta *BlockMeta, samplesPerChunk int, batch []chunks.Meta, it chunks.Iterator) ([]chunks.Meta, chunks.Iterator, error) {
	if wc, ok := s.(wholeChunker); ok {
		if b, n, ok := wc.wholeChunks(meta.MinTime, meta.MaxTime, samplesPerChunk, batch); ok {
			meta.Stats.NumSamples += uint64(n)
			return b, it, nil
		}
	}
	it = s.Iterator(it)
	batch, err := reencode(it, meta, samplesPerChunk, batch)
	return batch, it, err
}

// reencode appends to batch the samples of it in [meta.MinTime,
// meta.MaxTime), encoded into new chunks of at most samplesPerChunk
// samples, and counts them in meta.
func reencode(it chunks.Iterator, meta *BlockMeta, samplesPerChunk int, batch []chunks.Meta) ([]chunks.Meta, error) {
	var (
		c   *chunks.XORChunk
		app *chunks.XORAppender
		err error
	)
	for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
		if vt != chunks.ValFloat {
			return batch, fmt.Errorf("tsdb: %s sample at %d: only float samples can be written to blocks", vt, it.AtT())
		}
		t, v := it.At()
		if t < meta.MinTime || t >= meta.MaxTime {
			continue
		}
		if c == nil || c.NumSamples() >= samplesPerChunk {
			c = chunks.NewXORChunk()
			if app, err = c.XORAppender(); err != nil {
				return batch, err
			}
			batch = append(batch, chunks.Meta{Chunk: c, MinTime: t})
		}
		app.Append(t, v)
		batch[len(batch)-1].MaxTime = t
		meta.Stats.NumSamples++
	}
	return batch, it.Err()
}

// writeIndex writes the index of series, which are sorted by labels.
func writeIndex(fsys vfs.FS, path string, series []writtenSeries) error {
	syms := map[string]struct{}{}
	for _, s := range series {
		s.lset.Range(func(l labels.Label) {
			syms[l.Name] = struct{}{}
			syms[l.Value] = struct{}{}
		})
	}
	sorted := make([]string, 0, len(syms))
	for s := range syms {
		sorted = append(sorted, s)
	}
	slices.Sort(sorted)
	w, err := index.NewWriter(fsys, path)
	if err != nil {
		return err
	}
	for _, s := range sorted {
		if err := w.AddSymbol(s); err != nil {
			return errors.Join(err, w.Close())
		}
	}
	for i, s := range series {
		if err := w.AddSeries(uint64(i+1), s.lset, s.metas...); err != nil {
			return errors.Join(err, w.Close())
		}
	}
	return w.Close()
}

// isTmpDir reports whether name is a leftover of an interrupted write.
func isTmpDir(name string) bool { return strings.HasPrefix(name, tmpPrefix) }
