package tsdb

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// The write-ahead log.
//
// What a commit writes. Commit logs, in one wlog.Log call and before it
// applies anything to the head, a Series record with every series of the
// transaction that has not been logged yet, then one Samples record with
// all of the transaction's samples. A record is the WAL's unit of integrity:
// its fragments carry CRCs, and reading or repairing a torn log drops a
// partial record whole. So after a crash at any byte a transaction's
// samples replay all or none. A crash between the two records leaves a
// series without samples, which holds no data and is harmless.
//
// What a crash can lose. With Options.WALSyncEveryCommit, Commit returns
// only after the records are fsynced: a crash loses no acknowledged commit.
// Without it (the default, as in Prometheus) segments are fsynced when they
// are completed and on Close: a crash (of the machine; a crash of the
// process alone loses nothing written) can lose the commits logged since the
// last completed segment, but never part of one.
//
// A failed WAL write fails the Commit (nothing of it becomes visible) and
// every later one: the DB must then be closed and opened again, which
// replays the log and repairs a torn tail.
//
// Replay. Open reads the last checkpoint and then every later segment into
// the head with write ID 0 (visible to all). Decoding runs on one goroutine
// and applying samples on one goroutine per core, sharded by series, so a
// series' samples are applied in log order. Before that, Open checks that
// no segment the replay needs is missing (checkWALComplete): a lost segment
// fails Open with ErrWALIncomplete rather than silently dropping its data.

// walScratch holds an appender's encoding buffers; the head pools them.
type walScratch struct {
	series  []record.RefSeries
	samples []record.RefSample
	recs    [2][]byte
}

// logCommit writes the transaction's new series and samples to the WAL.
func (a *headAppender) logCommit() error {
	h := a.head
	sc, _ := h.walScratch.Get().(*walScratch)
	if sc == nil {
		sc = &walScratch{}
	}
	defer h.walScratch.Put(sc)
	sc.series, sc.samples = sc.series[:0], sc.samples[:0]
	for i := range a.samples {
		p := &a.samples[i]
		if !p.s.walLogged.Load() {
			sc.series = append(sc.series, record.RefSeries{Ref: uint64(p.s.ref), Labels: p.s.lset})
		}
		sc.samples = append(sc.samples, record.RefSample{Ref: uint64(p.s.ref), T: p.t, V: p.v})
	}
	var enc record.Encoder
	sc.recs[1] = enc.Samples(sc.samples, sc.recs[1][:0])
	recs := sc.recs[1:]
	if len(sc.series) > 0 {
		sc.recs[0] = enc.Series(sc.series, sc.recs[0][:0])
		recs = sc.recs[:]
	}
	if err := h.wal.Log(recs...); err != nil {
		return fmt.Errorf("%w: %w", ErrWAL, err)
	}
	// Only now are the series durable (as much as the policy makes them).
	// Two commits may both log a new series; replay takes either.
	for i := range sc.series {
		if s := h.series.getByRef(SeriesRef(sc.series[i].Ref)); s != nil {
			s.walLogged.Store(true)
		}
	}
	clear(sc.series) // drop label references
	return nil
}

// openWAL opens the WAL in dir/wal and replays it into the head.
func (db *DB) openWAL(reg prometheus.Registerer) error {
	o := db.opts
	wo := wlog.Options{SegmentSize: o.WALSegmentSize, Compression: wlog.CompressionNone, MetricNames: db.metricNames}
	if o.WALCompression {
		wo.Compression = wlog.CompressionSnappy
	}
	if o.WALSyncEveryCommit {
		wo.Sync = wlog.SyncEveryLog
	}
	dir := filepath.Join(db.dir, "wal")
	if err := checkWALComplete(db.fs, db.logger, dir, o.AcceptIncompleteWAL, false); err != nil {
		return fmt.Errorf("open WAL: %w", err)
	}
	w, err := wlog.Open(db.logger, reg, db.fs, dir, wo)
	if err != nil {
		return fmt.Errorf("open WAL: %w", err)
	}
	start := time.Now()
	if err := db.head.replayWAL(db.fs, dir, w, db.walMetrics); err != nil {
		return errors.Join(fmt.Errorf("replay WAL: %w", err), w.Close())
	}
	db.walMetrics.replayDuration.Set(time.Since(start).Seconds())
	db.head.wal = w
	return nil
}

// checkWALComplete makes sure the WAL in dir holds every segment a replay
// needs: with checkpoint.M the last checkpoint (M = -1 if there is none),
// segments M+1, M+2, ... up to the last one, without a gap. That is the
// state the DB always leaves: a checkpoint of segments [first, M] is taken
// while a later segment is active, and only then are the segments up to M
// (never the active one) deleted; a crash between the two leaves segments
// at or below M, which the checkpoint covers and replay skips.
//
// Anything else means segment files were lost, and replaying the rest
// would silently drop their series and samples (and every later sample of
// those series). It returns an error wrapping ErrWALIncomplete naming dir
// and the missing segments, unless accept is set and the loss is at the
// start of the log (segments M+1 .. F-1 before the first segment F after
// the checkpoint, or every segment after the checkpoint). It then logs a
// warning naming what was lost and, unless readOnly, records the loss so
// that the log is in the normal state and later opens need no option: the
// checkpoint is renamed to checkpoint.F-1 (an empty one is created if there
// is none), or an empty segment M+1 is created when no segment follows the
// checkpoint. A gap between segments after the checkpoint is refused even
// with accept.
//
// Unless readOnly, segments at or below the checkpoint are removed when
// they are not contiguous with the rest (their data is in the checkpoint;
// the log's writer needs its segments numbered without a gap). A WAL
// directory that does not exist or holds nothing is complete.
func checkWALComplete(fsys vfs.FS, logger *slog.Logger, dir string, accept, readOnly bool) error {
	segs, err := wlog.SegmentIndexes(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check WAL: %w", err)
	}
	cp := -1
	cpName := "no checkpoint"
	switch name, idx, err := wlog.LastCheckpoint(fsys, dir); {
	case err == nil:
		cp, cpName = idx, "last checkpoint "+filepath.Base(name)
	case !errors.Is(err, wlog.ErrNotFound):
		return fmt.Errorf("check WAL: %w", err)
	}
	if len(segs) == 0 && cp < 0 {
		return nil // a new log
	}
	i, _ := slices.BinarySearch(segs, cp+1)
	covered, live := segs[:i], segs[i:]
	for j := 1; j < len(live); j++ {
		if live[j] != live[j-1]+1 {
			return fmt.Errorf("%w: %s: %s missing between segments %08d and %08d (%s): "+
				"replay cannot continue past the gap; Options.AcceptIncompleteWAL does not apply to a gap, "+
				"move away the segments before it to accept the loss",
				ErrWALIncomplete, dir, segmentSpan(live[j-1]+1, live[j]-1), live[j-1], live[j], cpName)
		}
	}
	var lost string
	switch {
	case len(live) == 0:
		lost = fmt.Sprintf("segment %08d and any after it are", cp+1)
	case live[0] > cp+1:
		lost = segmentSpan(cp+1, live[0]-1)
	}
	if lost != "" {
		if !accept {
			return fmt.Errorf("%w: %s: %s missing (%s); their records are lost; "+
				"set Options.AcceptIncompleteWAL to open without them", ErrWALIncomplete, dir, lost, cpName)
		}
		logger.Warn("tsdb: WAL segments are missing; opening without their data (AcceptIncompleteWAL)",
			"dir", dir, "missing", lost, "checkpoint", cpName)
	}
	if readOnly {
		return nil
	}
	changed := false
	if lost != "" {
		switch {
		case len(live) == 0:
			// The writer would start after the covered segments, at or
			// below the checkpoint, where replay skips records.
			f, err := fsys.OpenFile(wlog.SegmentName(dir, cp+1), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
			if err != nil {
				return fmt.Errorf("check WAL: create segment after the checkpoint: %w", err)
			}
			if err := errors.Join(f.Sync(), f.Close()); err != nil {
				return fmt.Errorf("check WAL: create segment after the checkpoint: %w", err)
			}
			segs = append(covered, cp+1)
		case cp >= 0:
			if err := fsys.Rename(wlog.CheckpointName(dir, cp), wlog.CheckpointName(dir, live[0]-1)); err != nil {
				return fmt.Errorf("check WAL: record the missing segments: %w", err)
			}
		default:
			if err := wlog.CreateEmptyCheckpoint(fsys, dir, live[0]-1); err != nil {
				return fmt.Errorf("check WAL: record the missing segments: %w", err)
			}
		}
		changed = true
	}
	contiguous := true
	for j := 1; j < len(segs); j++ {
		contiguous = contiguous && segs[j] == segs[j-1]+1
	}
	if !contiguous {
		// Only the covered segments can break the sequence now.
		for _, k := range covered {
			if err := fsys.Remove(wlog.SegmentName(dir, k)); err != nil {
				return fmt.Errorf("check WAL: remove segment covered by the checkpoint: %w", err)
			}
		}
		logger.Info("tsdb: removed WAL segments the checkpoint covers", "dir", dir, "segments", len(covered))
		changed = true
	}
	if changed {
		if err := fsys.SyncDir(dir); err != nil {
			return fmt.Errorf("check WAL: sync %s: %w", dir, err)
		}
	}
	return nil
}

// segmentSpan names the segments [a, b] for messages.
func segmentSpan(a, b int) string {
	if a == b {
		return fmt.Sprintf("segment %08d is", a)
	}
	return fmt.Sprintf("segments %08d to %08d are", a, b)
}

// replayWAL loads the last checkpoint and the segments after it from dir.
// A corrupt or torn segment is repaired through w (the log is cut after the
// last whole record); with w nil (a read-only open) replay stops there with
// a warning and nothing is written.
func (h *head) replayWAL(fsys vfs.FS, dir string, w *wlog.WL, m *walMetrics) error {
	start := time.Now()
	rp := newReplayer(h, m)
	defer rp.close()

	from := 0
	cpDir, cpIdx, err := wlog.LastCheckpoint(fsys, dir)
	switch {
	case err == nil:
		r, err := wlog.NewSegmentsReader(fsys, cpDir)
		if err != nil {
			return fmt.Errorf("open checkpoint %s: %w", cpDir, err)
		}
		err = rp.replay(wlog.NewReader(r), cpDir)
		if cerr := r.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", cpDir, err)
		}
		from = cpIdx + 1
	case !errors.Is(err, wlog.ErrNotFound):
		return fmt.Errorf("find checkpoint: %w", err)
	}

	r, err := wlog.NewSegmentsRangeReader(fsys, dir, from, -1)
	if err != nil {
		return fmt.Errorf("open segments: %w", err)
	}
	err = rp.replay(wlog.NewReader(r), dir)
	_ = r.Close()
	var cerr *CorruptionError
	switch {
	case errors.As(err, &cerr) && w == nil:
		h.logger.Warn("tsdb: WAL is corrupt or torn; read up to the damage", "err", err)
	case errors.As(err, &cerr):
		rp.flush()
		h.logger.Warn("tsdb: WAL is corrupt or torn; repairing it", "err", err)
		if rerr := w.Repair(err); rerr != nil {
			return fmt.Errorf("repair WAL after %w: %w", err, rerr)
		}
	case err != nil:
		return err
	}
	rp.flush()
	h.raiseLastSeriesRef(rp.maxRef)
	h.addTombstones(rp.tombs)
	h.logger.Info("tsdb: WAL replayed", "series", h.NumSeries(), "samples", rp.samples.Load(),
		"from_segment", from, "duration", time.Since(start))
	return nil
}

// replayer applies WAL records to the head. Series records are applied by
// the reading goroutine as they come, so a series exists before any later
// sample of it is applied; samples go to one worker per core, chosen by
// series, so each series' samples are applied in log order.
type replayer struct {
	h       *head
	m       *walMetrics
	dec     record.Decoder
	series  []record.RefSeries
	shards  []chan []record.RefSample
	pending [][]record.RefSample    // per shard, not yet sent
	free    chan []record.RefSample // batches the workers are done with
	wg      sync.WaitGroup
	// dups maps a series ref that a record defined again under other
	// labels-identical ref to the ref the head uses.
	dups map[uint64]uint64
	// tombs collects the deletions of Tombstones records.
	tombs map[SeriesRef]tombstones.Intervals
	// maxRef is the highest series ref any Samples or Tombstones record
	// used, defined or not. A series record can be lost with a segment
	// (accepted with Options.AcceptIncompleteWAL) while samples of its ref
	// stay in the log: new series must never take such a ref, or the next
	// replay would give them those samples.
	maxRef uint64

	samples, unknown, dropped atomic.Int64 // updated by the workers
	lastProgress              time.Time
}

// replayBatch is the number of samples sent to a worker at once.
const replayBatch = 5000

func newReplayer(h *head, m *walMetrics) *replayer {
	n := max(1, runtime.GOMAXPROCS(0))
	rp := &replayer{h: h, m: m, dups: map[uint64]uint64{}, tombs: map[SeriesRef]tombstones.Intervals{}, lastProgress: time.Now(),
		free: make(chan []record.RefSample, 8*n)}
	rp.shards = make([]chan []record.RefSample, n)
	rp.pending = make([][]record.RefSample, n)
	for i := range rp.shards {
		ch := make(chan []record.RefSample, 4)
		rp.shards[i] = ch
		rp.wg.Add(1)
		go rp.work(ch)
	}
	return rp
}

// work applies the batches of one shard.
func (rp *replayer) work(ch <-chan []record.RefSample) {
	defer rp.wg.Done()
	h := rp.h
	for batch := range ch {
		var applied, unknown, dropped int64
		mint, maxt := int64(math.MaxInt64), int64(math.MinInt64)
		// Samples before minValidTime are in blocks already: the WAL still
		// holds them when the process stopped between publishing a block
		// and truncating the head.
		// Samples outside [MinSampleTime, MaxSampleTime] (from another
		// writer) cannot be stored.
		minValid := max(h.minValidTime.Load(), MinSampleTime)
		for _, smp := range batch {
			if smp.T < minValid || smp.T > MaxSampleTime {
				dropped++
				continue
			}
			s := h.series.getByRef(SeriesRef(smp.Ref))
			if s == nil {
				unknown++
				continue
			}
			s.mu.Lock()
			reason := s.appendLocked(h, smp.T, smp.V, 0, 0)
			s.mu.Unlock()
			if reason != "" {
				dropped++
				continue
			}
			applied++
			mint, maxt = min(mint, smp.T), max(maxt, smp.T)
		}
		if applied > 0 {
			h.updateTimeRange(mint, maxt)
		}
		rp.samples.Add(applied)
		rp.unknown.Add(unknown)
		rp.dropped.Add(dropped)
		rp.putBatch(batch)
	}
}

// replay reads every record of r. src names the source for messages.
func (rp *replayer) replay(r *wlog.Reader, src string) error {
	h := rp.h
	for r.Next() {
		rec := r.Record()
		switch typ := record.RecordType(rec); typ {
		case record.Series:
			var err error
			if rp.series, err = rp.dec.Series(rec, rp.series[:0]); err != nil {
				return rp.corrupt(r, src, err)
			}
			for _, rs := range rp.series {
				rp.addSeries(rs.Ref, rs.Labels)
			}
			clear(rp.series)
		case record.Samples, record.SamplesV2:
			batch := rp.getBatch()
			batch, err := rp.dec.Samples(rec, batch)
			if err != nil {
				return rp.corrupt(r, src, err)
			}
			for _, smp := range batch {
				rp.maxRef = max(rp.maxRef, smp.Ref)
				if ref, ok := rp.dups[smp.Ref]; ok {
					smp.Ref = ref
				}
				i := smp.Ref % uint64(len(rp.shards))
				rp.pending[i] = append(rp.pending[i], smp)
				if len(rp.pending[i]) >= replayBatch {
					rp.shards[i] <- rp.pending[i]
					rp.pending[i] = rp.getBatch()
				}
			}
			rp.putBatch(batch)
		case record.Tombstones:
			stones, err := rp.dec.Tombstones(rec, nil)
			if err != nil {
				return rp.corrupt(r, src, err)
			}
			for _, st := range stones {
				ref := st.Ref
				rp.maxRef = max(rp.maxRef, ref)
				if d, ok := rp.dups[ref]; ok {
					ref = d
				}
				for _, iv := range st.Intervals {
					rp.tombs[SeriesRef(ref)] = rp.tombs[SeriesRef(ref)].Add(iv)
				}
			}
		default:
			// Exemplars, histograms, metadata, ...: not used by this
			// version. Never mis-read: counted and skipped.
			rp.m.recordsSkipped.WithLabelValues(typ.String()).Inc()
		}
		if time.Since(rp.lastProgress) > 5*time.Second {
			rp.lastProgress = time.Now()
			h.logger.Info("tsdb: WAL replay in progress", "source", src, "segment", r.Segment(), "series", h.NumSeries(), "samples", rp.samples.Load())
		}
	}
	return r.Err()
}

// corrupt turns a record that passed its checksum but does not decode into
// a corruption at the record's position, so that the log can be repaired.
func (rp *replayer) corrupt(r *wlog.Reader, src string, err error) error {
	return corrupt.At(wlog.SegmentName(src, r.Segment()), r.Offset(), err)
}

func (rp *replayer) getBatch() []record.RefSample {
	select {
	case b := <-rp.free:
		return b
	default:
		return make([]record.RefSample, 0, replayBatch)
	}
}

func (rp *replayer) putBatch(b []record.RefSample) {
	select {
	case rp.free <- b[:0]:
	default:
	}
}

// addSeries creates the series ref of a Series record.
func (rp *replayer) addSeries(ref uint64, lset labels.Labels) {
	h := rp.h
	s, created := h.series.getOrSet(lset.Hash(), lset, func() *memSeries {
		return newMemSeries(SeriesRef(ref), lset)
	})
	if created {
		h.numSeries.Add(1)
		h.metrics.seriesCreated.Inc()
		h.postings.Add(ref, lset)
		h.raiseLastSeriesRef(ref)
	} else if uint64(s.ref) != ref {
		rp.dups[ref] = uint64(s.ref)
	}
	s.walLogged.Store(true)
}

// raiseLastSeriesRef makes new series take refs above ref.
func (h *head) raiseLastSeriesRef(ref uint64) {
	atomicMaxUint64(&h.lastSeriesRef, ref)
}

// flush sends every pending batch and waits until the workers applied all
// they were sent, then starts fresh workers.
func (rp *replayer) flush() {
	for i, p := range rp.pending {
		if len(p) > 0 {
			rp.shards[i] <- p
			rp.pending[i] = rp.getBatch()
		}
	}
	for _, ch := range rp.shards {
		close(ch)
	}
	rp.wg.Wait()
	for i := range rp.shards {
		ch := make(chan []record.RefSample, 4)
		rp.shards[i] = ch
		rp.wg.Add(1)
		go rp.work(ch)
	}
	if n := rp.unknown.Load(); n > 0 {
		rp.m.unknownRefs.Add(float64(n))
		rp.unknown.Add(-n)
		rp.h.logger.Warn("tsdb: WAL replay skipped samples of series it has no record of", "samples", n)
	}
	if n := rp.dropped.Load(); n > 0 {
		rp.dropped.Add(-n)
		rp.h.logger.Debug("tsdb: WAL replay dropped out-of-order samples, samples already in blocks and samples outside [MinSampleTime, MaxSampleTime]", "samples", n)
	}
}

// close stops the workers.
func (rp *replayer) close() {
	for _, ch := range rp.shards {
		close(ch)
	}
	rp.wg.Wait()
}
