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
	"github.com/isotsdb/tsdb/histogram"
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

// writtenSeries are the series whose chunks are written, waiting for the
// index: series i has label set lsets[i] and the chunks metas[ends[i-1]:
// ends[i]] (from 0 for i = 0). Flat slices, not a slice of chunks per
// series: a compaction holds them for every series of the block at once.
type writtenSeries struct {
	lsets  []labels.Labels
	metas  []index.ChunkMeta
	ends   []int
	labels int // the labels of all series
}

// recycler is a Series that its set can reuse for the next series once
// the caller is done with it and with everything it got from it but the
// chunks (see headSeries.recycle).
type recycler interface {
	recycle()
}

// seriesCounter is a SeriesSet that knows how many series it may return
// at most, so that writeBlockTmp can size its slices once.
type seriesCounter interface {
	maxSeries() int
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
		series writtenSeries
		it     chunks.Iterator
		batch  []chunks.Meta
	)
	if sc, ok := ss.(seriesCounter); ok {
		n := sc.maxSeries()
		series.lsets = make([]labels.Labels, 0, n)
		series.ends = make([]int, 0, n)
		series.metas = make([]index.ChunkMeta, 0, n)
	}
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
		lset := s.Labels()
		series.lsets = append(series.lsets, lset)
		series.labels += lset.Len()
		for _, m := range batch {
			series.metas = append(series.metas, index.ChunkMeta{Ref: m.Ref, MinTime: m.MinTime, MaxTime: m.MaxTime})
			if n := uint64(m.Chunk.NumSamples()); m.Chunk.Encoding().IsHistogram() {
				meta.Stats.NumHistogramSamples += n
			} else {
				meta.Stats.NumFloatSamples += n
			}
		}
		meta.Stats.NumChunks += uint64(len(batch))
		series.ends = append(series.ends, len(series.metas))
		if r, ok := s.(recycler); ok {
			r.recycle()
		}
	}
	if err := ss.Err(); err != nil {
		return false, err
	}
	if len(series.lsets) == 0 {
		return false, nil
	}
	err, cw = cw.Close(), nil
	if err != nil {
		return false, fmt.Errorf("close chunks: %w", err)
	}
	meta.Stats.NumSeries = uint64(len(series.lsets))

	if err := writeIndex(fsys, filepath.Join(dir, indexFilename), &series); err != nil {
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
// meta.MaxTime), encoded into new chunks, and counts them in meta. Float
// samples go to XOR chunks of at most samplesPerChunk samples; integer and
// float histograms to histogram chunks of their own encoding, cut where
// the chunk appender cuts (schema or bound change, counter reset) and
// otherwise at about TargetBytesPerHistogramChunk once a chunk holds
// MinSamplesPerHistogramChunk samples. A change of sample type always
// starts a new chunk. Samples with start times go into the encodings that
// store them (XOR2, HistogramST, FloatHistogramST), by the head's rule: a
// chunk takes the ST encoding if its first sample has a start time, and a
// sample with one cuts a chunk without.
func reencode(it chunks.Iterator, meta *BlockMeta, samplesPerChunk int, batch []chunks.Meta) ([]chunks.Meta, error) {
	var e chunkEncoder
	for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
		t := it.AtT()
		if t < meta.MinTime || t >= meta.MaxTime {
			continue
		}
		var err error
		switch vt {
		case chunks.ValFloat:
			_, v := it.At()
			err = e.appendFloat(it.AtST(), t, v, samplesPerChunk)
		case chunks.ValHistogram:
			_, e.h = it.AtHistogram(e.h)
			err = e.appendHistogram(it.AtST(), t)
		case chunks.ValFloatHistogram:
			_, e.fh = it.AtFloatHistogram(e.fh)
			err = e.appendFloatHistogram(it.AtST(), t)
		default:
			err = fmt.Errorf("tsdb: sample of unknown type %s at %d", vt, t)
		}
		if err != nil {
			return batch, err
		}
		batch = e.flush(batch, t)
		meta.Stats.NumSamples++
	}
	return batch, it.Err()
}

// chunkEncoder encodes one series' samples into chunks for reencode. At
// most one of its appenders is current: the one of the last sample's type.
type chunkEncoder struct {
	xor *chunks.XORChunk
	xa  chunks.Appender
	x2  *chunks.XOR2Appender
	ha  *chunks.HistogramAppender
	fa  *chunks.FloatHistogramAppender

	h  *histogram.Histogram      // buffer for the sample being appended
	fh *histogram.FloatHistogram // same

	cur     chunks.Chunk // the chunk the last sample went to
	started bool         // cur was started by the last append
	replace bool         // cur replaces the last chunk of the batch (recoded)
}

func (e *chunkEncoder) appendFloat(st, t int64, v float64, samplesPerChunk int) error {
	e.ha, e.fa = nil, nil
	if st != 0 || e.x2 != nil {
		e.xor = nil
		if e.x2 == nil || e.x2.NumSamples() >= samplesPerChunk {
			c := chunks.NewXOR2Chunk()
			app, err := c.XOR2Appender()
			if err != nil {
				return err
			}
			e.x2, e.cur, e.started = app, c, true
		}
		e.x2.AppendST(st, t, v)
		return nil
	}
	if e.xor == nil || e.xor.NumSamples() >= samplesPerChunk {
		e.xor = chunks.NewXORChunk()
		app, err := e.xor.Appender()
		if err != nil {
			return err
		}
		e.xa, e.cur, e.started = app, e.xor, true
	}
	e.xa.Append(t, v)
	return nil
}

// fullHistogramChunk reports whether a histogram chunk of n samples and
// size bytes is cut before its next sample.
func fullHistogramChunk(n, size int) bool {
	return n >= chunks.MinSamplesPerHistogramChunk && size >= chunks.TargetBytesPerHistogramChunk
}

func (e *chunkEncoder) appendHistogram(st, t int64) error {
	e.xor, e.x2, e.fa = nil, nil, nil
	prev := e.ha
	if prev == nil || !prev.TakesST(st) || fullHistogramChunk(prev.Chunk().NumSamples(), len(prev.Chunk().Bytes())) {
		var err error
		if e.ha, err = chunks.StartHistogramChunk(prev, st, t, e.h); err != nil {
			return fmt.Errorf("tsdb: histogram at %d: %w", t, err)
		}
		e.cur, e.started = e.ha.Chunk(), true
		return nil
	}
	res, c, app, err := prev.AppendHistogramST(st, t, e.h)
	if err != nil {
		return fmt.Errorf("tsdb: histogram at %d: %w", t, err)
	}
	e.ha = app
	e.noteResult(res, c)
	return nil
}

func (e *chunkEncoder) appendFloatHistogram(st, t int64) error {
	e.xor, e.x2, e.ha = nil, nil, nil
	prev := e.fa
	if prev == nil || !prev.TakesST(st) || fullHistogramChunk(prev.Chunk().NumSamples(), len(prev.Chunk().Bytes())) {
		var err error
		if e.fa, err = chunks.StartFloatHistogramChunk(prev, st, t, e.fh); err != nil {
			return fmt.Errorf("tsdb: float histogram at %d: %w", t, err)
		}
		e.cur, e.started = e.fa.Chunk(), true
		return nil
	}
	res, c, app, err := prev.AppendFloatHistogramST(st, t, e.fh)
	if err != nil {
		return fmt.Errorf("tsdb: float histogram at %d: %w", t, err)
	}
	e.fa = app
	e.noteResult(res, c)
	return nil
}

func (e *chunkEncoder) noteResult(res chunks.HistogramAppendResult, c chunks.Chunk) {
	switch res {
	case chunks.CutNewChunk:
		e.cur, e.started = c, true
	case chunks.Recoded:
		e.cur, e.replace = c, true
	}
}

// flush records the last append, of a sample at t, in batch: a new chunk
// starts a new entry, a recoded chunk replaces the last entry's chunk, and
// the last entry's MaxTime becomes t.
func (e *chunkEncoder) flush(batch []chunks.Meta, t int64) []chunks.Meta {
	switch {
	case e.started:
		batch = append(batch, chunks.Meta{Chunk: e.cur, MinTime: t})
	case e.replace:
		batch[len(batch)-1].Chunk = e.cur
	}
	e.started, e.replace = false, false
	batch[len(batch)-1].MaxTime = t
	return batch
}

// writeIndex writes the index of series, which are sorted by labels.
func writeIndex(fsys vfs.FS, path string, series *writtenSeries) error {
	// One map collects the symbols and then, handed to the Writer, maps
	// them to their positions.
	syms := map[string]uint32{}
	for _, lset := range series.lsets {
		lset.Range(func(l labels.Label) {
			syms[l.Name] = 0
			syms[l.Value] = 0
		})
	}
	sorted := make([]string, 0, len(syms))
	for s := range syms {
		sorted = append(sorted, s)
	}
	slices.Sort(sorted)
	for i, s := range sorted {
		syms[s] = uint32(i)
	}
	w, err := index.NewWriter(fsys, path)
	if err != nil {
		return err
	}
	if err := w.SetSymbols(sorted, syms); err != nil {
		return errors.Join(err, w.Close())
	}
	w.Grow(len(series.lsets), series.labels)
	start := 0
	for i, lset := range series.lsets {
		if err := w.AddSeries(uint64(i+1), lset, series.metas[start:series.ends[i]]...); err != nil {
			return errors.Join(err, w.Close())
		}
		start = series.ends[i]
	}
	return w.Close()
}

// isTmpDir reports whether name is a leftover of an interrupted write.
func isTmpDir(name string) bool { return strings.HasPrefix(name, tmpPrefix) }
