package tsdb

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unique"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/headchunks"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// Writing and loading the chunk snapshot (format: chunk_snapshot.go).

// snapFlushBytes is the size of the batch of records handed to the log at
// once: large enough for few Log calls, small beside the head.
const snapFlushBytes = 1 << 20

// snapBatch is the number of samples or exemplars per record.
const snapBatch = 10000

// writeChunkSnapshot writes the head's snapshot at Close: after the last
// commit, mapChunks, and the closing of the WAL, the WBL and the head
// chunk files, so that the WAL position it names is final and the files
// it relies on are synced. It writes nothing (and says why at info level)
// when the head is in a state it cannot restore exactly. Called by Close
// only, with cmtx held and no commit possible.
func (db *DB) writeChunkSnapshot() error {
	h := db.head
	switch {
	case h.headChunks == nil || h.mapFailed.Load():
		db.logger.Info("tsdb: no chunk snapshot: the head chunk files are not in use")
		return nil
	case len(h.walDups) > 0:
		db.logger.Info("tsdb: no chunk snapshot: the WAL has series defined twice", "refs", len(h.walDups))
		return nil
	}
	start := time.Now()
	walDir := filepath.Join(db.dir, "wal")
	seg := h.wal.ActiveSegment()
	fi, err := db.fs.Stat(wlog.SegmentName(walDir, seg))
	if err != nil {
		return fmt.Errorf("tsdb: chunk snapshot: %w", err)
	}
	final := filepath.Join(db.dir, chunkSnapshotName(seg, fi.Size()))
	tmp := final + ".tmp"
	if err := db.fs.RemoveAll(tmp); err != nil {
		return fmt.Errorf("tsdb: chunk snapshot: %w", err)
	}
	wo := wlog.Options{SegmentSize: db.opts.WALSegmentSize, Compression: wlog.CompressionNone}
	if db.opts.WALCompression {
		wo.Compression = wlog.CompressionSnappy
	}
	main, err := wlog.Open(nil, nil, db.fs, tmp, wo)
	if err != nil {
		return fmt.Errorf("tsdb: chunk snapshot: %w", err)
	}
	extra, err := wlog.Open(nil, nil, db.fs, filepath.Join(tmp, chunkSnapshotExtraDir), wo)
	if err != nil {
		return errors.Join(fmt.Errorf("tsdb: chunk snapshot: %w", err), main.Close(), db.fs.RemoveAll(tmp))
	}
	n, err := h.encodeChunkSnapshot(main, extra)
	err = errors.Join(err, main.Close(), extra.Close())
	if err == nil {
		err = db.fs.SyncDir(tmp)
	}
	if err == nil {
		err = db.fs.Rename(tmp, final)
	}
	if err == nil {
		err = db.fs.SyncDir(db.dir)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("tsdb: chunk snapshot: %w", err), db.fs.RemoveAll(tmp))
	}
	db.logger.Info("tsdb: chunk snapshot written", "dir", final, "series", n, "duration", time.Since(start))
	return nil
}

// snapWriter batches the records of one log of the snapshot.
type snapWriter struct {
	w    *wlog.WL
	buf  []byte
	recs [][]byte
	n    uint64 // records added
}

// add appends the record rec (which may alias buf's spare capacity: it
// is copied) and flushes once the batch is large.
func (sw *snapWriter) add(rec []byte) error {
	start := len(sw.buf)
	sw.buf = append(sw.buf, rec...)
	sw.recs = append(sw.recs, sw.buf[start:len(sw.buf):len(sw.buf)])
	sw.n++
	if len(sw.buf) >= snapFlushBytes {
		return sw.flush()
	}
	return nil
}

func (sw *snapWriter) flush() error {
	if len(sw.recs) == 0 {
		return nil
	}
	err := sw.w.Log(sw.recs...)
	sw.buf, sw.recs = sw.buf[:0], sw.recs[:0]
	return err
}

// snapSamples collects samples for the second log's records.
type snapSamples struct {
	floats []record.RefSample
	hs     []record.RefHistogramSample
	fhs    []record.RefFloatHistogramSample
}

func (ss *snapSamples) add(ref uint64, l lateSample) {
	switch {
	case l.h != nil:
		ss.hs = append(ss.hs, record.RefHistogramSample{Ref: ref, ST: l.st, T: l.t, H: l.h})
	case l.fh != nil:
		ss.fhs = append(ss.fhs, record.RefFloatHistogramSample{Ref: ref, ST: l.st, T: l.t, FH: l.fh})
	default:
		ss.floats = append(ss.floats, record.RefSample{Ref: ref, ST: l.st, T: l.t, V: l.v})
	}
}

// write logs the section record and the samples, snapBatch a record.
func (ss *snapSamples) write(sw *snapWriter, section byte) error {
	if err := sw.add([]byte{snapRecSection, section}); err != nil {
		return err
	}
	var enc record.Encoder
	var b []byte
	for s := range slices.Chunk(ss.floats, snapBatch) {
		if err := sw.add(enc.SamplesV2(s, b[:0])); err != nil {
			return err
		}
	}
	for s := range slices.Chunk(ss.hs, snapBatch) {
		if err := sw.add(enc.HistogramSamplesV2(s, b[:0])); err != nil {
			return err
		}
	}
	for s := range slices.Chunk(ss.fhs, snapBatch) {
		if err := sw.add(enc.FloatHistogramSamplesV2(s, b[:0])); err != nil {
			return err
		}
	}
	return nil
}

// encodeChunkSnapshot writes the head into the snapshot's two logs and
// returns the number of series. Takes each series' lock in turn, then the
// exemplars' lock alone, then the stripe locks to find the exemplars'
// series.
func (h *head) encodeChunkSnapshot(main, extra *wlog.WL) (int, error) {
	mw, xw := &snapWriter{w: main}, &snapWriter{w: extra}
	var (
		closed, late snapSamples
		metas        []record.RefMetadata
		mapped       []byte
		nSeries      int
		err          error
		b            []byte
	)
	// Prometheus restores exactly what isotsdb does only if its WBL holds
	// every late sample (wbl.go) ...
	promExact := true
	if l := h.wbl.Load(); l != nil && l.err() != nil {
		promExact = false
	}
	h.series.refs.each(func(s *memSeries) {
		if err != nil {
			return
		}
		s.mu.Lock()
		// Mapped chunks are a prefix (head_mmap.go); the chunks after
		// them are in the heap, the last one open.
		k := 0
		for k < len(s.chunks) && headchunks.IsMapped(s.chunks[k].chunk) {
			k++
		}
		if k > 0 {
			mapped = binary.AppendUvarint(mapped, uint64(s.ref))
			mapped = binary.AppendUvarint(mapped, uint64(k))
			mapped = binary.AppendVarint(mapped, s.chunks[k-1].maxTime)
		}
		var open *memChunk
		if n := len(s.chunks); n > k {
			open = &s.chunks[n-1]
			for _, c := range s.chunks[k : n-1] {
				// ... and it holds every closed chunk in its head chunk
				// files, and reads the open one as isotsdb does (XOR).
				promExact = false
				err = appendChunkSamples(&closed, uint64(s.ref), c.chunk)
			}
			if open.chunk.Encoding() != chunks.EncXOR {
				promExact = false
			}
		}
		if open != nil {
			last := s.lastSample()
			b = appendSnapSeries(b[:0], uint64(s.ref), s.lset, open.chunk, open.minTime, open.maxTime, last.v, last.h, last.fh)
		} else {
			b = appendSnapSeries(b[:0], uint64(s.ref), s.lset, nil, 0, 0, 0, nil, nil)
		}
		for _, l := range s.captureLateLocked(nil, math.MinInt64, math.MaxInt64) {
			late.add(uint64(s.ref), l)
		}
		if x := s.x; x != nil && x.meta != nil && x.meta.cur.m != (unique.Handle[Metadata]{}) {
			m := x.meta.cur.m.Value()
			metas = append(metas, record.RefMetadata{Ref: uint64(s.ref), Type: uint8(m.Type), Unit: m.Unit, Help: m.Help})
		}
		s.mu.Unlock()
		nSeries++
		if err == nil {
			err = mw.add(b)
		}
	})
	if err != nil {
		return 0, err
	}
	if err := mw.add(appendSnapTombstones(b[:0], h.tombstones())); err != nil {
		return 0, err
	}
	exs := h.snapshotExemplars()
	for es := range slices.Chunk(exs, snapBatch) {
		if err := mw.add(appendSnapExemplars(b[:0], es)); err != nil {
			return 0, err
		}
	}
	if !promExact {
		if err := mw.add([]byte{snapRecIsotsdbOnly}); err != nil {
			return 0, err
		}
	}
	if err := mw.flush(); err != nil {
		return 0, err
	}

	if err := closed.write(xw, snapSectionClosed); err != nil {
		return 0, err
	}
	if err := late.write(xw, snapSectionLate); err != nil {
		return 0, err
	}
	var enc record.Encoder
	for ms := range slices.Chunk(metas, snapBatch) {
		if err := xw.add(enc.Metadata(ms, b[:0])); err != nil {
			return 0, err
		}
	}
	if len(mapped) > 0 {
		if err := xw.add(append([]byte{snapRecMapped}, mapped...)); err != nil {
			return 0, err
		}
	}
	trailer := []byte{snapRecTrailer}
	isotsdbOnly := uint64(0)
	if !promExact {
		isotsdbOnly = 1
	}
	for _, v := range []uint64{chunkSnapshotVersion, h.lastSeriesRef.Load(), uint64(nSeries), uint64(len(exs)), isotsdbOnly, mw.n, xw.n} {
		trailer = binary.AppendUvarint(trailer, v)
	}
	if err := xw.add(trailer); err != nil {
		return 0, err
	}
	return nSeries, xw.flush()
}

// appendChunkSamples adds the samples of c, a closed chunk of series ref,
// to ss.
func appendChunkSamples(ss *snapSamples, ref uint64, c chunks.Chunk) error {
	it := c.Iterator(nil)
	for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
		ss.add(ref, readLateSample(it, vt))
	}
	return it.Err()
}

// snapshotExemplars returns the exemplars of the ring in its order, oldest
// first, with the refs of their series (those of series no longer in the
// head are left out, as Prometheus does).
func (h *head) snapshotExemplars() []record.RefExemplar {
	es := h.exemplars
	type entry struct {
		lset labels.Labels
		e    Exemplar
	}
	es.mu.RLock()
	entries := make([]entry, 0, len(es.ring))
	first := es.firstLocked()
	for i := range es.ring {
		en := &es.ring[(first+i)%len(es.ring)]
		entries = append(entries, entry{lset: en.series.lset, e: en.e})
	}
	es.mu.RUnlock()
	out := make([]record.RefExemplar, 0, len(entries))
	for _, en := range entries {
		s := h.series.getByHash(en.lset.Hash(), en.lset)
		if s == nil {
			continue
		}
		out = append(out, record.RefExemplar{Ref: uint64(s.ref), T: en.e.Ts, V: en.e.Value, Labels: en.e.Labels})
	}
	return out
}

// takeChunkSnapshot finds the snapshot that the WAL in walDir ends at, reads
// it if the snapshot option is on, and removes every snapshot directory of
// the data directory (with a sync) before returning, whatever it found. It
// returns nil if there is no usable snapshot (logging why); an error only
// if the directories could not be removed.
func (db *DB) takeChunkSnapshot(walDir string) (*chunkSnapshot, error) {
	ents, err := db.fs.ReadDir(db.dir)
	if err != nil {
		return nil, fmt.Errorf("tsdb: list data dir: %w", err)
	}
	var dirs []string
	best, bestSeg, bestOff := "", -1, int64(-1)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), chunkSnapshotPrefix) {
			continue
		}
		dirs = append(dirs, e.Name())
		if seg, off, ok := parseChunkSnapshotName(e.Name()); ok && e.IsDir() && (seg > bestSeg || seg == bestSeg && off > bestOff) {
			best, bestSeg, bestOff = e.Name(), seg, off
		}
	}
	if len(dirs) == 0 {
		return nil, nil
	}
	var cs *chunkSnapshot
	if db.opts.SnapshotOnShutdown && best != "" {
		if err = db.walEndsAt(walDir, bestSeg, bestOff); err == nil {
			cs, err = readChunkSnapshot(db.fs, filepath.Join(db.dir, best))
		}
		if err != nil {
			db.walMetrics.snapshotErrors.Inc()
			db.logger.Warn("tsdb: chunk snapshot not used; replaying the WAL", "dir", best, "err", err)
			cs = nil
		}
	}
	for _, d := range dirs {
		if err := db.fs.RemoveAll(filepath.Join(db.dir, d)); err != nil {
			return nil, fmt.Errorf("tsdb: remove chunk snapshot: %w", err)
		}
	}
	if err := db.fs.SyncDir(db.dir); err != nil {
		return nil, fmt.Errorf("tsdb: remove chunk snapshot: %w", err)
	}
	return cs, nil
}

// walEndsAt checks that the WAL in walDir ends at segment seg, offset off:
// the segment is off bytes long and every later one is empty.
func (db *DB) walEndsAt(walDir string, seg int, off int64) error {
	segs, err := wlog.SegmentIndexes(db.fs, walDir)
	if err != nil {
		return fmt.Errorf("%w: %w", errChunkSnapshot, err)
	}
	found := false
	for _, i := range segs {
		if i < seg {
			continue
		}
		fi, err := db.fs.Stat(wlog.SegmentName(walDir, i))
		if err != nil {
			return fmt.Errorf("%w: %w", errChunkSnapshot, err)
		}
		switch {
		case i == seg && fi.Size() == off:
			found = true
		case i == seg:
			return fmt.Errorf("%w: WAL segment %d is %d bytes, the snapshot was taken at %d", errChunkSnapshot, seg, fi.Size(), off)
		case fi.Size() > 0:
			return fmt.Errorf("%w: WAL segment %d after the snapshot's holds data", errChunkSnapshot, i)
		}
	}
	if !found {
		return fmt.Errorf("%w: WAL segment %d of the snapshot is missing", errChunkSnapshot, seg)
	}
	return nil
}

// restoreChunkSnapshot restores the head from cs instead of a WAL replay,
// then reads the WBL as replayWAL does (for its segments' times, and the
// samples Prometheus wrote to it). h.mapped holds the head chunk files'
// chunks. It returns an error wrapping errChunkSnapshot, having changed
// nothing, if the files do not hold the mapped chunks cs expects.
func (h *head) restoreChunkSnapshot(fsys vfs.FS, cs *chunkSnapshot, wbl *wblSource, m *walMetrics) error {
	minValid := h.minValidTime.Load()
	start := time.Now()
	mr := h.mapped
	for _, s := range cs.series {
		want, sl := cs.mapped[s.ref], mr.slot(SeriesRef(s.ref))
		switch {
		case want.n == 0 && sl == nil:
		case want.n == 0:
			return fmt.Errorf("%w: head chunk files hold chunks of series %d, which had none", errChunkSnapshot, s.ref)
		case want.last < minValid:
			// Gone into a block; loadHeadChunks dropped them too.
		case sl == nil || len(sl.chunks) > want.n || sl.last != want.last:
			return fmt.Errorf("%w: head chunk files do not hold the %d chunks of series %d up to %d", errChunkSnapshot, want.n, s.ref, want.last)
		}
	}
	rp := newReplayer(h, m)
	defer rp.close()
	for _, s := range cs.series {
		rp.addSeries(s.ref, s.lset) // attaches the mapped chunks
	}
	rp.indexSeries()
	h.mapped = nil // the snapshot's samples all follow the mapped chunks
	defer func() { h.mapped = mr }()
	// Per series: the closed chunks' samples, the open chunk's, then the
	// late ones; the workers keep each series' order.
	bySeries := func(a, b walSample) int {
		if c := cmp.Compare(a.ref, b.ref); c != 0 {
			return c
		}
		return cmp.Compare(a.t, b.t)
	}
	slices.SortStableFunc(cs.closed, bySeries)
	slices.SortStableFunc(cs.late, bySeries)
	for _, smp := range cs.closed {
		rp.dispatch(smp)
	}
	var it chunks.Iterator
	for _, s := range cs.series {
		if s.chunk == nil {
			continue
		}
		it = s.chunk.Iterator(it)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			l := readLateSample(it, vt)
			smp := walSample{ref: s.ref, t: l.t, v: l.v}
			if l.st != 0 || l.h != nil || l.fh != nil {
				smp.x = &walExtra{st: l.st, h: l.h, fh: l.fh}
			}
			rp.dispatch(smp)
		}
	}
	for _, smp := range cs.late {
		rp.dispatch(smp)
	}
	rp.flush()
	rp.replayMetadata(cs.meta)
	if h.exemplars.enabled() {
		for _, e := range cs.exemplars {
			rp.storeExemplar(e)
		}
	}
	h.addTombstones(cs.tombs)
	h.raiseLastSeriesRef(max(cs.lastRef, rp.maxRef))
	if wbl != nil {
		if err := rp.replayWBL(fsys, wbl); err != nil {
			return err
		}
		wbl.present, wbl.missing = nil, nil
	}
	h.trimLateAfterReplay()
	h.logger.Info("tsdb: head restored from the chunk snapshot", "series", h.NumSeries(), "samples", rp.samples.Load(),
		"exemplars", rp.exemplars, "duration", time.Since(start))
	return nil
}
