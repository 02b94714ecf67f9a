package tsdb

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"path/filepath"
	"slices"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/headchunks"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// Memory-mapped head chunks.
//
// The head keeps only the open chunk of each series in the Go heap. Its
// closed in-order chunks are written to the head chunk files in
// chunks_head/ (Prometheus's format, internal/headchunks) and replaced by
// chunks that read the files' mappings in place. Prometheus opens such a
// directory with its own mapped chunks, and isotsdb opens Prometheus's.
//
// When. mapChunks runs in the background loop after each compaction
// check, and once more at Close after the last commit. It collects the
// closed chunks still in the heap, series by series, under each series'
// lock; writes them without any head lock; then swaps them, series by
// series and under the series' lock, for their mapped copies, where the
// chunk it read is still there (truncation may have dropped it
// meanwhile). Readers that captured the heap chunk keep it. Late chunks
// stay in the heap, and so do chunks of other encodings than XOR: a
// Prometheus that read isotsdb's closed histogram chunks from the files
// would return their counter-reset hints and bucket layouts as isotsdb
// wrote them, not as its own WAL replay builds them, so its reads of the
// directory would change (prom/interop checks they do not). A series'
// mapped chunks are always a prefix of its chunks (mapping stops at its
// first chunk of another encoding): readers of the files take them to
// hold every sample of the series up to the last one's end.
//
// Lifetime. A mapped chunk references its file's mapping, which is
// unmapped only when no chunk of it is reachable any more (a cleanup of
// package headchunks). So reads that captured a mapped chunk keep
// working after truncation removed its file, as they do with a heap
// chunk. The head iterator keeps its captured series (and so its
// chunks) reachable while it reads them.
//
// The WAL stays authoritative. Every sample of a mapped chunk is also in
// the WAL from the head's range on: a closed chunk holds only samples of
// commits that were logged before they were applied, and mapChunks syncs
// the WAL after collecting chunks and before writing them, so no chunk
// file byte that survives a crash holds a sample whose WAL record did
// not (a commit replays whole or not at all, with or without its mapped
// part). The files are synced only at Close: a crash may tear them, and
// Open then cuts them after their last whole record (headchunks.Open)
// and replays the rest from the WAL. Anything else wrong with them (a
// series' chunks out of order) makes Open ignore that series' chunks,
// which the WAL replays instead.
//
// Replay. Open loads the files before the WAL replay and gives each
// series its mapped chunks when the replay creates it (those ending
// before the head's range are left out: blocks hold them). The replay
// then skips a series' WAL samples that its mapped chunks hold: those
// not after its last mapped chunk's end and after every earlier WAL
// sample of the series (the in-order ones, which the chunks hold), except
// those the WBL holds copies of. Commits may apply in another order than
// they logged: a sample logged before a newer one of its series but
// applied after it went in as a late one, which no mapped chunk holds,
// and its commit copied it to the WBL (mappedReplay.noteLateCopies reads
// the copies before the WAL replay; if damage stops it before the WBL's
// end, no sample is skipped this way). Samples that are not after an
// earlier one are late ones, or belong to a commit that lost a race for
// the series; they and the copied ones take the path of late samples,
// which finds those the mapped chunks hold by their time and adds nothing
// for them.
//
// Resident memory. Nothing reads a mapped chunk's bytes when it is mapped
// (headchunks.Writer.Added), and the pages of a file read at Open or
// removed by truncation are evicted from the resident set
// (vfs.Mapped.Evict): a page of a mapping counts in the process's RSS
// from the first read until the mapping is closed, and a removed file's
// mapping is closed only once the collector found no chunk of it left.

// headChunksDir is the directory of the head chunk files in a data dir.
const headChunksDir = "chunks_head"

// mapBatch is the number of chunks mapChunks writes between swaps.
const mapBatch = 8192

// mappedReplay holds, for the WAL replay, the mapped chunks loaded at
// Open by series ref: in a slice indexed by ref-base where the refs are
// dense enough, else in a map. Each replay worker touches only the slots
// of its own series.
type mappedReplay struct {
	base   uint64
	dense  []mappedSlot
	sparse map[uint64]*mappedSlot
	// distrust is set when noteLateCopies could not read the whole WBL:
	// a copy may be missing, so no WAL sample is taken as held by the
	// mapped chunks; each takes the late path, which checks the chunks.
	distrust bool
}

// mappedSlot is one series' part of mappedReplay.
type mappedSlot struct {
	chunks []memChunk // given to the series when the replay creates it
	// last is the end of the series' last mapped chunk and seen the time
	// of its newest WAL sample replayed so far (math.MinInt64: none).
	last, seen int64
	// copies are the times, ascending, of the series' samples that the
	// WBL holds copies of: samples a live commit applied as late ones
	// (noteLateCopies). ci is the first one inMapped has not passed.
	copies []int64
	ci     int
}

// slot returns the slot of ref, nil if it has no mapped chunks.
func (mr *mappedReplay) slot(ref SeriesRef) *mappedSlot {
	switch {
	case mr == nil:
		return nil
	case mr.sparse != nil:
		return mr.sparse[uint64(ref)]
	case uint64(ref) < mr.base || uint64(ref)-mr.base >= uint64(len(mr.dense)):
		return nil
	}
	sl := &mr.dense[uint64(ref)-mr.base]
	if sl.last == math.MinInt64 {
		return nil
	}
	return sl
}

// loadHeadChunks opens the head chunk files of dir and returns their
// writer and the chunks to give the series at replay; minValid is the
// head's lower bound (chunks ending before it are dropped). damaged
// reports that chunks were left out for damage (files cut after their
// last whole chunk, or a series' chunks out of order), which the WAL
// holds: a chunk snapshot is not used then.
func loadHeadChunks(fsys vfs.FS, dir string, minValid int64, h *head) (_ *headchunks.Writer, _ *mappedReplay, damaged bool, _ error) {
	type loaded struct {
		chunks []memChunk
		bad    bool
	}
	bySeries := map[uint64]*loaded{}
	var badSeries int
	var maxRef uint64
	w, res, err := headchunks.Open(fsys, filepath.Join(dir, headChunksDir), headchunks.Options{}, func(ref uint64, mint, maxt int64, c chunks.Chunk) error {
		maxRef = max(maxRef, ref)
		if maxt < minValid {
			return nil
		}
		l := bySeries[ref]
		if l == nil {
			l = &loaded{}
			bySeries[ref] = l
		}
		if l.bad {
			return nil
		}
		if n := len(l.chunks); mint > maxt || n > 0 && mint <= l.chunks[n-1].maxTime {
			// Not a chunk the head could have cut: give up the series'
			// chunks, the WAL has their samples.
			l.bad, l.chunks = true, nil
			badSeries++
			return nil
		}
		l.chunks = append(l.chunks, memChunk{chunk: c, minTime: mint, maxTime: maxt})
		return nil
	})
	if err != nil {
		return nil, nil, false, fmt.Errorf("open head chunk files: %w", err)
	}
	damaged = res.Repaired != nil || badSeries > 0
	// New series must never take the ref of a series the files hold
	// chunks of (its Series record may be lost with the WAL): the next
	// Open would give them its chunks.
	h.raiseLastSeriesRef(maxRef)
	if res.Repaired != nil {
		h.logger.Warn("tsdb: head chunk files were torn or damaged; cut after the last whole chunk, the WAL replays the rest", "err", res.Repaired)
	}
	if badSeries > 0 {
		h.logger.Warn("tsdb: head chunk files hold chunks out of order; the WAL replays those series instead", "series", badSeries)
	}
	lo, hi, live := uint64(math.MaxUint64), uint64(0), 0
	for ref, l := range bySeries {
		if len(l.chunks) > 0 {
			lo, hi, live = min(lo, ref), max(hi, ref), live+1
		}
	}
	if live == 0 {
		return w, nil, damaged, nil
	}
	mr := &mappedReplay{base: lo}
	if n := hi - lo + 1; n <= 4*uint64(live)+1024 {
		mr.dense = make([]mappedSlot, n)
		for i := range mr.dense {
			mr.dense[i] = mappedSlot{last: math.MinInt64, seen: math.MinInt64}
		}
	} else {
		// Refs spread far apart (series churn): a slot for each would
		// cost more than the map.
		mr.sparse = make(map[uint64]*mappedSlot, live)
	}
	for ref, l := range bySeries {
		if len(l.chunks) == 0 {
			continue
		}
		sl := mappedSlot{chunks: l.chunks, last: l.chunks[len(l.chunks)-1].maxTime, seen: math.MinInt64}
		if mr.sparse != nil {
			mr.sparse[ref] = &sl
		} else {
			mr.dense[ref-lo] = sl
		}
	}
	return w, mr, damaged, nil
}

// attach gives s, just created by the replay, its mapped chunks.
func (mr *mappedReplay) attach(h *head, s *memSeries) {
	sl := mr.slot(s.ref)
	if sl == nil || len(sl.chunks) == 0 {
		return
	}
	cs := sl.chunks
	sl.chunks = nil
	s.mu.Lock()
	s.chunks = cs
	for _, c := range cs {
		s.total += uint64(c.chunk.NumSamples())
	}
	s.mu.Unlock()
	h.metrics.chunks.Add(float64(len(cs)))
	h.updateTimeRange(cs[0].minTime, cs[len(cs)-1].maxTime)
}

// inMapped reports whether the WAL sample of s at t is one its mapped
// chunks hold (see the top of this file), recording t as seen. Called by
// the replay worker of s only.
func (mr *mappedReplay) inMapped(s *memSeries, t int64) bool {
	sl := mr.slot(s.ref)
	if sl == nil || t > sl.last || mr.distrust {
		return false
	}
	if t <= sl.seen {
		return false // late, or a lost race: the late path decides
	}
	sl.seen = t
	// After every earlier WAL sample of the series is not enough: commits
	// may apply in another order than they logged, and a sample logged
	// before a newer one of its series but applied after it went in as a
	// late one, which no mapped chunk holds. Its commit copied it to the
	// WBL as a late sample: such a sample takes the late path.
	for sl.ci < len(sl.copies) && sl.copies[sl.ci] < t {
		sl.ci++
	}
	return sl.ci == len(sl.copies) || sl.copies[sl.ci] != t
}

// noteLateCopies reads the WBL in dir for the samples live commits
// copied to it as late ones (WBLCopy runs, wal.go) and records their
// times in the slots of their series, for inMapped. Only the copies'
// series and times are used; the WAL replay takes the samples from the
// WAL, so a commit still replays whole or not at all. It reads up to the
// first damage, silently: the WBL replay after the WAL reports and repairs
// it. Damage that stops the read before the WBL's end (or a WBL that
// cannot be opened) sets distrust: a copy after it would be missed, and
// its sample skipped. A sample the live head applied late whose copy was
// never written (a crash between its commit's WAL and WBL writes, once
// the chunk holding the newer sample of its series was mapped) is not
// found; Prometheus's replay depends on its WBL in the same way.
func (mr *mappedReplay) noteLateCopies(logger *slog.Logger, fsys vfs.FS, dir string) {
	if mr == nil {
		return
	}
	sr, err := wlog.NewSegmentsReader(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return // no WBL, no copies
	}
	if err != nil {
		mr.distrust = true
		logger.Warn("tsdb: cannot read the WBL before the WAL replay; every replayed sample is checked against the head chunk files", "err", err)
		return
	}
	defer sr.Close()
	r := wlog.NewReader(sr)
	defer func() {
		if err == nil {
			err = r.Err()
		}
		if err != nil {
			mr.distrust = true
			logger.Warn("tsdb: WBL damaged; every replayed sample is checked against the head chunk files", "err", err)
		}
	}()
	var (
		dec      record.Decoder
		copyLeft int
		floats   []record.RefSample
		hists    []record.RefHistogramSample
		fhists   []record.RefFloatHistogramSample
		touched  []*mappedSlot
	)
	note := func(ref uint64, t int64) {
		if sl := mr.slot(SeriesRef(ref)); sl != nil {
			if sl.copies == nil {
				touched = append(touched, sl)
			}
			sl.copies = append(sl.copies, t)
		}
	}
	for r.Next() {
		rec := r.Record()
		switch typ := record.RecordType(rec); {
		case typ == record.WBLCopy:
			if copyLeft, err = dec.WBLCopy(rec); err != nil {
				return
			}
			continue
		case copyLeft == 0:
			continue // Prometheus's records: the WBL replay applies them
		case typ == record.Samples || typ == record.SamplesV2:
			if floats, err = dec.Samples(rec, floats[:0]); err != nil {
				return
			}
			for _, smp := range floats {
				note(smp.Ref, smp.T)
			}
		case typ == record.HistogramSamples || typ == record.CustomBucketsHistogramSamples || typ == record.HistogramSamplesV2:
			if hists, err = dec.HistogramSamples(rec, hists[:0]); err != nil {
				return
			}
			for _, smp := range hists {
				note(smp.Ref, smp.T)
			}
			clear(hists)
		case typ == record.FloatHistogramSamples || typ == record.CustomBucketsFloatHistogramSamples || typ == record.FloatHistogramSamplesV2:
			if fhists, err = dec.FloatHistogramSamples(rec, fhists[:0]); err != nil {
				return
			}
			for _, smp := range fhists {
				note(smp.Ref, smp.T)
			}
			clear(fhists)
		default:
			copyLeft = 0 // no sample record: the run is over (as readWBL)
			continue
		}
		copyLeft--
	}
	for _, sl := range touched {
		slices.Sort(sl.copies)
	}
}

// mapEntry is a closed heap chunk mapChunks writes.
type mapEntry struct {
	s      *memSeries
	c      chunks.Chunk
	mapped chunks.Chunk
	ref    uint64
	mint   int64
	maxt   int64
}

// mapChunks writes the closed in-order chunks still in the heap to the
// head chunk files and swaps them for their mapped copies (see the top of
// this file). It returns the number of chunks mapped. The caller holds
// cmtx. Takes each series lock in turn, the WAL's and the writer's, never
// two at once.
func (h *head) mapChunks() (int, error) {
	hc := h.headChunks
	if hc == nil || h.mapFailed.Load() {
		return 0, nil
	}
	batch := h.mapScratch[:0]
	defer func() { h.mapScratch = batch[:0] }()
	total := 0
	var err error
	h.series.refs.each(func(s *memSeries) {
		if err != nil {
			return
		}
		s.mu.Lock()
		for i := 0; i < len(s.chunks)-1; i++ {
			c := &s.chunks[i]
			if headchunks.IsMapped(c.chunk) {
				continue
			}
			if c.chunk.Encoding() != chunks.EncXOR {
				// The mapped chunks must stay a prefix of the series'
				// chunks: a reader of the files (Prometheus, the replay)
				// takes them to hold every sample up to the last one's
				// end.
				break
			}
			batch = append(batch, mapEntry{s: s, c: c.chunk, mint: c.minTime, maxt: c.maxTime})
		}
		s.mu.Unlock()
		if len(batch) >= mapBatch {
			total += len(batch)
			err = h.mapBatch(batch)
			clear(batch) // drop the chunks for the collector
			batch = batch[:0]
		}
	})
	if err == nil && len(batch) > 0 {
		total += len(batch)
		err = h.mapBatch(batch)
	}
	clear(batch)
	if err != nil {
		// The chunks stay in the heap; the WAL has their samples.
		h.mapFailed.Store(true)
		h.logger.Error("tsdb: writing head chunk files failed; closed chunks stay in memory until restart", "err", err)
		return total, err
	}
	h.metrics.chunksMapped.Add(float64(total))
	return total, nil
}

// mapBatch writes the chunks of batch, then swaps them in their series.
func (h *head) mapBatch(batch []mapEntry) error {
	hc := h.headChunks
	var size int64
	for i := range batch {
		size += headchunks.RecordSize(len(batch[i].c.Bytes()))
	}
	hc.Grow(size)
	for i := range batch {
		e := &batch[i]
		ref, err := hc.Add(uint64(e.s.ref), e.mint, e.maxt, e.c)
		if err != nil {
			return fmt.Errorf("write head chunk: %w", err)
		}
		e.ref = ref
	}
	// The chunks' samples were logged before they were applied: make the
	// log durable before any of them can be.
	if h.wal != nil {
		if err := h.wal.Sync(); err != nil {
			return fmt.Errorf("sync WAL before writing head chunks: %w", err)
		}
	}
	if err := hc.Flush(); err != nil {
		return fmt.Errorf("write head chunks: %w", err)
	}
	for i := range batch {
		e := &batch[i]
		// Added, not Chunk: reading the records back would make every page
		// just written resident.
		c, err := hc.Added(e.ref, e.c.Encoding(), len(e.c.Bytes()))
		if err != nil {
			return fmt.Errorf("read head chunk just written: %w", err)
		}
		e.mapped = c
	}
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].s == batch[i].s {
			j++
		}
		batch[i].s.swapMapped(batch[i:j])
		i = j
	}
	return nil
}

// swapMapped replaces the chunks of es (all of s) that s still holds by
// their mapped copies, in place: every reader of s.chunks holds s.mu, and
// a reader that captured the heap chunk keeps reading it (see
// memSeries.chunks).
func (s *memSeries) swapMapped(es []mapEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range es {
		if i := slices.IndexFunc(s.chunks, func(c memChunk) bool { return c.chunk == e.c }); i >= 0 {
			s.chunks[i].chunk = e.mapped
		} // else truncated meanwhile
	}
}
