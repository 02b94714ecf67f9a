package tsdb

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// Block ranges. Blocks cut from the head span MinBlockDuration (2h by
// default), aligned to multiples of it since the Unix epoch; compaction
// merges adjacent blocks into ranges three times larger (2h, 6h, 18h, ...)
// up to MaxBlockDuration. The head cuts its chunks at the same boundaries
// so that moving a range from the head into a block never splits a chunk.

// rangeEnd returns the end (exclusive) of the aligned range of width r that
// holds t.
func rangeEnd(t, r int64) int64 {
	if t >= 0 {
		return (t/r + 1) * r
	}
	return ((t + 1) / r) * r
}

// blockRanges returns the compaction ranges: minRange, then each three
// times the previous, as long as they do not exceed maxRange.
func blockRanges(minRange, maxRange int64) []int64 {
	rs := []int64{minRange}
	for r := minRange * 3; r <= maxRange; r *= 3 {
		rs = append(rs, r)
	}
	return rs
}

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
	cw, err := chunks.NewSegmentWriter(fsys, filepath.Join(dir, chunksDirname))
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
	for it.Next() {
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

// compactable reports whether the head spans more than 1.5 block ranges,
// so that its oldest range can be written to a block.
func (h *head) compactable() bool {
	mint, maxt := h.MinTime(), h.MaxTime()
	if mint == math.MaxInt64 {
		return false
	}
	return maxt-mint > h.chunkRange/2*3
}

// Compact writes every head range that is due into a block, truncates the
// head, compacts blocks into larger ranges and applies retention. It is
// safe to call at any time; compactions are serialized.
//
// A block whose data turns out damaged when a compaction reads it is
// marked failed (BlockMeta.Compaction.Failed, also in its meta.json) and
// left out of every later compaction; the Compact that finds it returns
// the error (wrapping ErrCorruptBlock and naming the block) after it has
// compacted the other blocks and applied retention. The block stays
// queryable and retention deletes it in time. The DB also
// compacts in the background, so calling it is optional.
//
// Before truncating the head, Compact waits until every Querier created
// before the new block was published is closed (those may still read the
// range from the head), or ctx is done: do not hold an open Querier on the
// goroutine that calls Compact with a context that never ends. If ctx ends
// there, the block stays published and the truncation pending: the next
// Compact finishes it (it never writes the range again). Compact also
// gives up with ctx.Err() if ctx ends while it waits for another
// compaction, Delete or CleanTombstones to finish.
func (db *DB) Compact(ctx context.Context) error {
	if db.readOnly {
		return ErrReadOnly
	}
	if err := db.cmtx.lock(ctx); err != nil {
		return err
	}
	defer db.cmtx.unlock()
	if db.isClosed() {
		return ErrClosed
	}
	if err := db.finishTruncation(ctx); err != nil {
		db.metrics.compactionsFailed.Inc()
		return fmt.Errorf("tsdb: compact head: %w", err)
	}
	for db.head.compactable() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := db.compactHead(ctx); err != nil {
			db.metrics.compactionsFailed.Inc()
			return fmt.Errorf("tsdb: compact head: %w", err)
		}
	}
	// Retention runs even if block compaction fails: a failure must not
	// keep the blocks that retention deletes (it may delete the very block
	// that made compaction fail).
	err := db.compactBlocks(ctx)
	if err != nil {
		db.metrics.compactionsFailed.Inc()
		err = fmt.Errorf("tsdb: compact blocks: %w", err)
	}
	return errors.Join(err, db.applyRetention())
}

// compactHead moves the head's oldest block range into a block. The caller
// holds cmtx.
//
// Isolation: the range is closed to appends first (minValidTime), then the
// commits already in flight are waited for, so the block holds whole
// commits only. The block is published for new queriers, which read the
// head only from its end on; the head is truncated once every querier
// created before the publication (which still reads the range from the
// head) is closed, so no querier sees samples appear or disappear.
func (db *DB) compactHead(ctx context.Context) error {
	h := db.head
	start := time.Now()
	r := h.chunkRange
	db.mu.RLock()
	headMint := db.headMint
	db.mu.RUnlock()
	// The head holds nothing before headMint (that is in blocks; truncation
	// and WAL replay drop it); the clamp only makes sure a range is never
	// written twice.
	mint := max(h.MinTime(), headMint)
	maxt := rangeEnd(mint, r) // exclusive
	h.raiseMinValidTime(maxt)
	if err := h.iso.waitForCommitsBefore(ctx, h.iso.highWatermark()); err != nil {
		return err
	}
	meta := BlockMeta{ULID: newULID(), MinTime: maxt - r, MaxTime: maxt}
	meta.Compaction.Level = 1
	meta.Compaction.Sources = []ulid.ULID{meta.ULID}
	ss := h.selectSeries(ctx, nil, nil, h.tombstones(), meta.MinTime, maxt-1, nil)
	written, err := writeBlock(db.fs, db.dir, meta, ss, h.samplesPerChunk)
	if err != nil {
		return err
	}
	if written {
		if err := db.loadNewBlock(meta.ULID); err != nil {
			return err
		}
	}
	db.setHeadMint(maxt)
	// From here on the range is the block's: if the truncation below is
	// interrupted, the next Compact resumes it rather than writing the
	// range again.
	db.pendingTrunc = &pendingTruncation{mint: maxt, readSeq: h.iso.nextReadSeq()}
	db.metrics.compactions.Inc()
	db.metrics.compactionDuration.Observe(time.Since(start).Seconds())
	return db.finishTruncation(ctx)
}

// pendingTruncation is a head truncation whose block is published (and
// headMint raised) but which has not been done yet.
type pendingTruncation struct {
	mint int64 // truncate the head before this time
	// readSeq: the queriers created before it (that is, before the block
	// was published) may still read the range from the head.
	readSeq uint64
}

// finishTruncation does the pending head truncation, if any: it waits for
// the queriers that may still read the range from the head (or for ctx),
// then truncates. On error the truncation stays pending. The caller holds
// cmtx.
func (db *DB) finishTruncation(ctx context.Context) error {
	p := db.pendingTrunc
	if p == nil {
		return nil
	}
	if err := db.head.iso.waitForReadsBefore(ctx, p.readSeq); err != nil {
		return err
	}
	if err := db.truncateHead(p.mint); err != nil {
		db.metrics.headTruncationsFailed.Inc()
		return err
	}
	db.pendingTrunc = nil
	return nil
}

// truncateHead drops head data before mint and checkpoints the WAL.
func (db *DB) truncateHead(mint int64) error {
	h := db.head
	h.truncate(mint)
	db.metrics.headTruncations.Inc()
	if h.wal == nil {
		return nil
	}
	first, last, err := h.wal.Segments()
	if err != nil {
		return err
	}
	// Checkpoint the older two thirds of the segments; the newest stay as
	// they are (they hold mostly data still in the head).
	last = first + (last-first)*2/3
	if last <= first {
		if _, err := h.wal.NextSegment(); err != nil {
			return err
		}
		if first, last, err = h.wal.Segments(); err != nil {
			return err
		}
		last--
	}
	if last < first {
		return nil
	}
	keep := func(ref uint64) bool { return h.series.getByRef(SeriesRef(ref)) != nil }
	if _, err := wlogCheckpoint(db, first, last, keep, mint); err != nil {
		return fmt.Errorf("checkpoint WAL: %w", err)
	}
	if err := h.wal.Truncate(last + 1); err != nil {
		return fmt.Errorf("truncate WAL: %w", err)
	}
	return deleteCheckpoints(db, last)
}

// compactBlocks merges blocks into larger ranges while a plan exists. The
// caller holds cmtx.
//
// A group that fails because one of its blocks has damaged data does not
// stop it: that block is marked failed (which takes it out of every later
// plan), the error is kept, and planning goes on with the other blocks.
// Each such failure marks one more block, so the loop ends. Any other
// error ends it at once.
func (db *DB) compactBlocks(ctx context.Context) error {
	ranges := blockRanges(db.head.chunkRange, db.opts.MaxBlockDuration.Milliseconds())
	var errs []error
	for {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		group := planCompaction(db.Blocks(), ranges)
		if group == nil {
			return errors.Join(errs...)
		}
		err := db.compactGroup(ctx, group)
		if err == nil {
			continue
		}
		id, ok := corruptBlockOf(err)
		if !ok || !slices.ContainsFunc(group, func(m BlockMeta) bool { return m.ULID == id }) {
			return errors.Join(append(errs, err)...)
		}
		errs = append(errs, err)
		if err := db.markCompactionFailed(id, err); err != nil {
			errs = append(errs, err)
		}
	}
}

// markCompactionFailed marks block id failed (BlockMeta.Compaction.Failed)
// because reading it for a compaction failed with cause: in memory, so
// that planCompaction leaves it out from now on, and in its meta.json, so
// that it stays out after a restart. The mark holds in memory even if
// meta.json cannot be written (then the error says so). The caller holds
// cmtx.
func (db *DB) markCompactionFailed(id ulid.ULID, cause error) error {
	blocks := db.acquireBlocks(func(b *Block) bool { return b.meta.ULID == id })
	defer releaseBlocks(blocks)
	if len(blocks) == 0 {
		return nil // deleted meanwhile: nothing to mark
	}
	b := blocks[0]
	db.mu.Lock()
	b.mu.Lock()
	b.meta.Compaction.Failed = true
	m := b.meta.clone()
	b.mu.Unlock()
	db.mu.Unlock()
	db.logger.Error("tsdb: block has damaged data; compaction leaves it out from now on, queries still read it and retention deletes it in time",
		"block", id, "dir", b.dir, "err", cause)
	if err := writeMeta(db.fs, b.dir, &m); err != nil {
		return fmt.Errorf("tsdb: mark block %s failed: %w", b.dir, err)
	}
	if err := db.fs.SyncDir(b.dir); err != nil {
		return fmt.Errorf("tsdb: mark block %s failed: %w", b.dir, err)
	}
	return nil
}

// planCompaction returns the next group of blocks to compact, nil if none.
// Overlapping blocks are compacted first, together. Otherwise, for each
// range above the smallest, blocks are grouped by the aligned range that
// holds them; a group of two or more whose range is complete (the newest
// block ends at or after the range's end) is compacted.
//
// Failed blocks (Compaction.Failed) are never in a plan. The other blocks
// of their range still compact, each run of them between failed blocks
// on its own, so that no new block spans a failed one.
func planCompaction(metas []BlockMeta, ranges []int64) []BlockMeta {
	if len(metas) < 2 {
		return nil
	}
	slices.SortFunc(metas, func(a, b BlockMeta) int { return cmp.Compare(a.MinTime, b.MinTime) })
	failed := func(m BlockMeta) bool { return m.Compaction.Failed }
	// Overlaps.
	good := slices.DeleteFunc(slices.Clone(metas), failed)
	for i := 0; i < len(good)-1; i++ {
		group := []BlockMeta{good[i]}
		maxt := good[i].MaxTime
		for j := i + 1; j < len(good) && good[j].MinTime < maxt; j++ {
			group = append(group, good[j])
			maxt = max(maxt, good[j].MaxTime)
		}
		if len(group) > 1 {
			return group
		}
	}
	newest := metas[len(metas)-1].MaxTime
	for _, r := range ranges[1:] {
		for i := 0; i < len(metas); {
			start := metas[i].MinTime - mod(metas[i].MinTime, r)
			end := start + r
			j := i
			for j < len(metas) && metas[j].MaxTime <= end && metas[j].MinTime >= start {
				j++
			}
			if j == i { // a block larger than r
				i++
				continue
			}
			if newest >= end {
				// The first run of two or more blocks without a failed one.
				for k := i; k < j; {
					l := k
					for l < j && !failed(metas[l]) {
						l++
					}
					if l-k > 1 {
						return metas[k:l]
					}
					k = l + 1
				}
			}
			i = j
		}
	}
	return nil
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// compactGroup merges the blocks of group into one block and replaces them.
func (db *DB) compactGroup(ctx context.Context, group []BlockMeta) error {
	start := time.Now()
	blocks := db.acquireBlocks(func(b *Block) bool {
		return slices.ContainsFunc(group, func(m BlockMeta) bool { return m.ULID == b.meta.ULID })
	})
	defer releaseBlocks(blocks)
	if len(blocks) != len(group) {
		return fmt.Errorf("blocks of the compaction plan changed")
	}
	meta := BlockMeta{ULID: newULID(), MinTime: math.MaxInt64, MaxTime: math.MinInt64}
	sets := make([]SeriesSet, len(blocks))
	for i, b := range blocks {
		m := b.meta
		meta.MinTime, meta.MaxTime = min(meta.MinTime, m.MinTime), max(meta.MaxTime, m.MaxTime)
		meta.Compaction.Level = max(meta.Compaction.Level, m.Compaction.Level+1)
		meta.Compaction.Sources = append(meta.Compaction.Sources, m.Compaction.Sources...)
		meta.Compaction.Parents = append(meta.Compaction.Parents, BlockDesc{ULID: m.ULID, MinTime: m.MinTime, MaxTime: m.MaxTime})
		sets[i] = b.selectSeries(ctx, b.tombstones(), m.MinTime, m.MaxTime-1, nil)
	}
	slices.SortFunc(meta.Compaction.Sources, func(a, b ulid.ULID) int { return a.Compare(b) })
	meta.Compaction.Sources = slices.Compact(meta.Compaction.Sources)
	written, err := writeBlock(db.fs, db.dir, meta, mergeSeriesSets(sets), db.head.samplesPerChunk)
	if err != nil {
		return err
	}
	if written {
		if err := db.loadNewBlock(meta.ULID); err != nil {
			return err
		}
	}
	db.metrics.compactions.Inc()
	db.metrics.compactionDuration.Observe(time.Since(start).Seconds())
	return db.deleteBlocks(group)
}

// isTmpDir reports whether name is a leftover of an interrupted write.
func isTmpDir(name string) bool { return strings.HasPrefix(name, tmpPrefix) }
