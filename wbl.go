package tsdb

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// The WBL: a second log of the late samples, for Prometheus. See the top
// of wal.go for what it holds and why the WAL stays authoritative.

// wblDirName is the WBL's directory in the data dir, Prometheus's name.
const wblDirName = "wbl"

// wblLog is the DB's open WBL and what the DB knows of its segments.
//
// Locking: mu serializes Log calls, segment cuts and truncations, so that
// segMax can be kept by reading the active segment before and after a Log
// call. A Commit takes mu while it holds head.closeMu (read side) and no
// other head lock; truncateWBL takes it under DB.cmtx.
type wblLog struct {
	w *wlog.WL // never nil

	mu lockorder.Mutex[lockorder.WBL] // protects segMax
	// segMax maps a segment index to the greatest time of a sample logged
	// into it (this process) or read from it (replay). A segment not in
	// the map holds no sample.
	segMax map[int]int64

	// failed holds the error (wrapping ErrWBL) of the first failed write;
	// nil while healthy. Commits check it before they log anything.
	failed atomic.Pointer[error]
}

// err returns the WBL's sticky failure, nil if none.
func (l *wblLog) err() error {
	if p := l.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// log writes recs, which hold samples no later than maxt, as one run, and
// notes maxt for every segment the run touched. A failure makes the WBL
// failed for good (see ErrWBL). Takes l.mu.
func (l *wblLog) log(recs [][]byte, maxt int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.err(); err != nil {
		return err
	}
	first := l.w.ActiveSegment()
	if err := l.w.Log(recs...); err != nil {
		err = fmt.Errorf("%w: %w", ErrWBL, err)
		l.failed.CompareAndSwap(nil, &err)
		return l.err()
	}
	for s := first; s <= l.w.ActiveSegment(); s++ {
		l.noteLocked(s, maxt)
	}
	return nil
}

// noteLocked records that segment seg holds a sample at t. Requires l.mu
// held (or l not yet shared).
func (l *wblLog) noteLocked(seg int, t int64) {
	if m, ok := l.segMax[seg]; !ok || t > m {
		l.segMax[seg] = t
	}
}

// wblOptions returns the WBL's wlog options: the WAL's segment size,
// compression and sync policy, and metrics of its own (tsdb_wbl_...).
func (db *DB) wblOptions() wlog.Options {
	o := db.opts
	wo := wlog.Options{SegmentSize: o.WALSegmentSize, Compression: wlog.CompressionNone, MetricNames: db.metricNames,
		MetricsPrefix: "tsdb_wbl_", MetricsHelp: "out-of-order log (WBL)"}
	if o.WALCompression {
		wo.Compression = wlog.CompressionSnappy
	}
	if o.WALSyncEveryCommit {
		wo.Sync = wlog.SyncEveryLog
	}
	return wo
}

// wblWanted reports whether the DB needs a WBL: the out-of-order window is
// on, or the WBL directory holds segments (written with the window on, or
// by Prometheus) that replay must read and that must go on being truncated.
func (db *DB) wblWanted() (bool, error) {
	if db.opts.OutOfOrderTimeWindow > 0 {
		return true, nil
	}
	segs, err := wlog.SegmentIndexes(db.fs, filepath.Join(db.dir, wblDirName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look for a WBL: %w", err)
	}
	return len(segs) > 0, nil
}

// openWBLLog opens the WBL for writing (creating its directory) without
// replaying it.
func (db *DB) openWBLLog(reg prometheus.Registerer) (*wlog.WL, error) {
	w, err := wlog.Open(db.logger, reg, db.fs, filepath.Join(db.dir, wblDirName), db.wblOptions())
	if err != nil {
		return nil, fmt.Errorf("open WBL: %w", err)
	}
	return w, nil
}

// ensureWBL opens an empty WBL if the DB has none: for a window turned on
// at run time. The caller holds DB.mu (write side), which orders it with
// Close. The WBL directory holds no segment then (else Open would have
// opened it), so there is nothing to replay.
func (db *DB) ensureWBL() error {
	h := db.head
	if h.wal == nil || h.wbl.Load() != nil {
		return nil
	}
	w, err := db.openWBLLog(db.reg)
	if err != nil {
		return err
	}
	h.wbl.Store(&wblLog{w: w, segMax: map[int]int64{}})
	return nil
}

// closeWBL closes the WBL, if open. Its error wraps ErrWBL (a failed WBL
// returns its sticky failure).
func (db *DB) closeWBL() error {
	if l := db.head.wbl.Load(); l != nil {
		if err := l.w.Close(); err != nil {
			return fmt.Errorf("tsdb: close WBL: %w: %w", ErrWBL, err)
		}
	}
	return nil
}

// logLate logs the late samples the commit applied (b.late indexes
// b.samples) to the WBL: a WBLCopy record announcing n records, then the
// n sample records, in the record types the WAL uses for them. The series
// are in the WAL already (logCommit logged them before anything was
// applied).
func (a *headAppender) logLate(l *wblLog, b *appendBatch) error {
	h := a.head
	sc, _ := h.walScratch.Get().(*walScratch)
	if sc == nil {
		sc = &walScratch{}
	}
	defer h.walScratch.Put(sc)
	sc.samples, sc.hs, sc.fhs = sc.samples[:0], sc.hs[:0], sc.fhs[:0]
	anyST := false
	maxt := MinSampleTime
	for _, i := range b.late {
		p := &b.samples[i]
		ref := uint64(p.s.ref)
		anyST = anyST || p.st != 0
		maxt = max(maxt, p.t)
		switch {
		case p.h != nil:
			sc.hs = append(sc.hs, record.RefHistogramSample{Ref: ref, ST: p.st, T: p.t, H: p.h})
		case p.fh != nil:
			sc.fhs = append(sc.fhs, record.RefFloatHistogramSample{Ref: ref, ST: p.st, T: p.t, FH: p.fh})
		default:
			sc.samples = append(sc.samples, record.RefSample{Ref: ref, ST: p.st, T: p.t, V: p.v})
		}
	}
	recs := append(sc.group[:0], nil) // the WBLCopy record
	recs = sc.sampleRecords(recs, anyST)
	var enc record.Encoder
	sc.hrecs[0] = enc.WBLCopy(len(recs)-1, sc.hrecs[0][:0])
	recs[0] = sc.hrecs[0]
	sc.group = recs
	err := l.log(recs, maxt)
	clear(sc.hs) // drop histogram references
	clear(sc.fhs)
	return err
}

// truncateWBL removes the oldest WBL segments whose samples are all older
// than both mint and the oldest sample the head still holds. It first
// starts a new segment if the active one holds samples, so that a later
// truncation can remove it.
//
// Contract: the WBL must keep every late sample that is not in a block,
// for Prometheus, which takes late samples from the WBL only. The caller
// guarantees that every sample before mint that is not in the head is in
// a block (or was dropped): truncateHead calls it after the head's range
// before mint went into a block and the head was truncated. The head's
// oldest sample is read under wblLog.mu, which a commit takes to log its
// late samples after it applied them (and widened the head's time range):
// a late sample older than mint that stays in the head, or arrives
// meanwhile, keeps its segment (it is either counted in the head's range
// or logged after the cut, into the new segment). Only a prefix of the
// segments is removed (Prometheus reads the WBL's segments without a
// gap), so a segment with a sample at or after the bound keeps every
// later one too.
//
// To bound the removal by a segment as well (for a caller that put late
// samples into blocks and knows the last WBL segment that held them), add
// a beforeSegment parameter and truncate at min(cut, beforeSegment).
//
// The caller holds DB.cmtx. Takes wblLog.mu. Without a WBL it does nothing.
func (db *DB) truncateWBL(mint int64) error {
	l := db.head.wbl.Load()
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	bound := min(mint, db.head.MinTime())
	active := l.w.ActiveSegment()
	if _, ok := l.segMax[active]; ok {
		var err error
		if active, err = l.w.NextSegment(); err != nil {
			err = fmt.Errorf("%w: %w", ErrWBL, err)
			l.failed.CompareAndSwap(nil, &err)
			return fmt.Errorf("truncate WBL: %w", err)
		}
	}
	first, _, err := l.w.Segments()
	if err != nil {
		return fmt.Errorf("truncate WBL: %w", err)
	}
	cut := active
	for s := max(first, 0); s < active; s++ {
		if m, ok := l.segMax[s]; ok && m >= bound {
			cut = s
			break
		}
	}
	if err := l.w.Truncate(cut); err != nil {
		return fmt.Errorf("truncate WBL before segment %d: %w", cut, err)
	}
	for s := range l.segMax {
		if s < cut {
			delete(l.segMax, s)
		}
	}
	return nil
}

// wblSource is the WBL replay reads after the WAL: its directory, the
// open log to repair (nil for a read-only replay), and the segment times
// the replay finds (see wblLog.segMax).
type wblSource struct {
	dir    string
	w      *wlog.WL
	segMax map[int]int64
	// present are the samples the WBL holds (copies and Prometheus's),
	// head refs; missing, after replayWAL, the late samples replay took
	// from the WAL that the WBL lacks (see recopyLate). Both only with w.
	present []seriesTime
	missing []seriesTime
}

// seriesTime names a sample by its series (head ref) and time.
type seriesTime struct {
	ref uint64
	t   int64
}

func cmpSeriesTime(a, b seriesTime) int {
	if a.ref != b.ref {
		if a.ref < b.ref {
			return -1
		}
		return 1
	}
	return cmpInt64(a.t, b.t)
}

// sortSeriesTimes returns s sorted by cmpSeriesTime: s itself or a new
// slice. The samples of a log come in log order, so each series' times are
// mostly in order already; and head refs are dense. So where the refs are
// few enough for a table of them (at most 4 per sample), a counting sort by
// ref, which keeps each series' times in log order, then a sort of each
// series' run only if it is out of order, take linear time where a
// comparison sort of the millions of samples a late-heavy WAL and WBL
// hold took most of Open's CPU.
func sortSeriesTimes(s []seriesTime) []seriesTime {
	var maxRef uint64
	for _, st := range s {
		maxRef = max(maxRef, st.ref)
	}
	if len(s) < 64 || maxRef > 4*uint64(len(s)) {
		slices.SortFunc(s, cmpSeriesTime)
		return s
	}
	start := make([]int, maxRef+2) // start[ref+1] counts, then start[ref] is its first index
	for _, st := range s {
		start[st.ref+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	out := make([]seriesTime, len(s))
	for _, st := range s {
		out[start[st.ref]] = st
		start[st.ref]++
	}
	byTime := func(a, b seriesTime) int { return cmpInt64(a.t, b.t) }
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].ref == out[i].ref {
			j++
		}
		if run := out[i:j]; !slices.IsSortedFunc(run, byTime) {
			slices.SortFunc(run, byTime)
		}
		i = j
	}
	return out
}

// missingFromWBL returns the late samples the WAL replay took (rp.late)
// that are not in present, sorted. It sorts both (present in place or not:
// the caller must not use it afterwards).
func (rp *replayer) missingFromWBL(present []seriesTime) []seriesTime {
	rp.lateMu.Lock()
	late := rp.late
	rp.late = nil
	rp.lateMu.Unlock()
	late = sortSeriesTimes(late)
	present = sortSeriesTimes(present)
	late = slices.CompactFunc(late, func(a, b seriesTime) bool { return a == b })
	out := late[:0]
	j := 0
	for _, st := range late {
		for j < len(present) && cmpSeriesTime(present[j], st) < 0 {
			j++
		}
		if j < len(present) && present[j] == st {
			continue
		}
		out = append(out, st)
	}
	return out
}

// recopyLate logs to the WBL, as copies, the late samples of missing that
// the head still holds: late samples in the head's range that replay took
// from the WAL and the WBL lacks. A crash between a commit's WAL and WBL writes leaves
// such samples (the WBL is written second, and each log is synced on its
// own), and so does a commit that applied a sample in order which the
// WAL's order makes late (two commits racing for a series). Prometheus
// takes late samples from the WBL only; without the copy it would not
// see them. Replay classifies by the WAL's order, as Prometheus's does.
// Called by Open before the DB is used.
func (h *head) recopyLate(l *wblLog, missing []seriesTime) error {
	const run = 5000 // samples per WBL write
	for len(missing) > 0 {
		n := min(len(missing), run)
		a := &headAppender{head: h}
		b := &appendBatch{}
		for _, st := range missing[:n] {
			s := h.series.getByRef(SeriesRef(st.ref))
			if s == nil {
				continue
			}
			s.mu.Lock()
			p, ok := s.sampleAtLocked(st.t, true, &b.it)
			s.mu.Unlock()
			if !ok {
				continue
			}
			p.s = s
			b.late = append(b.late, len(b.samples))
			b.samples = append(b.samples, *p)
		}
		missing = missing[n:]
		if len(b.late) == 0 {
			continue
		}
		if err := a.logLate(l, b); err != nil {
			return fmt.Errorf("copy late samples of the WAL to the WBL: %w", err)
		}
		h.logger.Info("tsdb: copied late samples that the WBL lacked from the WAL", "samples", len(b.late))
	}
	return nil
}

// replayWBL reads the WBL after the WAL (see wal.go). A corrupt or torn
// tail is repaired through src.w (cut after the last whole record), or
// read up to with a warning if src.w is nil. The WAL's own data does not
// depend on the WBL, so a damaged WBL never fails Open; an error reading
// its files does.
func (rp *replayer) replayWBL(fsys vfs.FS, src *wblSource) error {
	src.segMax = map[int]int64{}
	r, err := wlog.NewSegmentsReader(fsys, src.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open WBL segments: %w", err)
	}
	rp.unknownRefs = rp.m.wblUnknownRefs
	err = rp.readWBL(wlog.NewReader(r), src)
	_ = r.Close()
	var cerr *CorruptionError
	switch {
	case errors.As(err, &cerr) && src.w == nil:
		rp.h.logger.Warn("tsdb: WBL is corrupt or torn; read up to the damage", "err", err)
	case errors.As(err, &cerr):
		rp.flush()
		rp.h.logger.Warn("tsdb: WBL is corrupt or torn; repairing it", "err", err)
		if rerr := src.w.Repair(err); rerr != nil {
			return fmt.Errorf("repair WBL after %w: %w", err, rerr)
		}
	case err != nil:
		return fmt.Errorf("read WBL: %w", err)
	}
	rp.flush()
	return nil
}

// readWBL reads every record of the WBL r.
//
// Records a WBLCopy record announces are copies of samples in this DB's
// WAL, which replay has applied already: they are decoded only for the
// times of their segments (truncateWBL needs them). Sample records without
// one were written by Prometheus: their samples are applied as late ones
// (a sample the head has already, from the WAL, is a no-op). MmapMarkers
// records say that Prometheus wrote a series' late samples so far into a
// head chunk file (chunks_head/); isotsdb loads only the in-order chunks
// of those files (head_mmap.go), the late samples are still in the WBL
// records before the marker, so the markers are decoded (a damaged one is
// a corruption like any) and ignored.
func (rp *replayer) readWBL(r *wlog.Reader, src *wblSource) error {
	var copyLeft, copySeg int // records of a WBLCopy run still to come; its segment
	var copyOff int64         // offset of the WBLCopy record's last byte
	runStart := 0             // len(src.present) at the run's WBLCopy record
	// inRun turns damage inside a run of copies into damage at the run's
	// WBLCopy record, so that the repair cuts the run whole and nothing
	// logged later is taken for the rest of it; the run's samples are not
	// present in the WBL then.
	inRun := func(err error) error {
		if copyLeft == 0 {
			return err
		}
		src.present = src.present[:runStart]
		what := fmt.Errorf("%w: the WBL ends %d records before the end of a run of copies", errTornCommit, copyLeft)
		if err != nil {
			what = fmt.Errorf("%w: a run of copies is damaged %d records before its end: %w", errTornCommit, copyLeft, err)
		}
		return corrupt.At(wlog.SegmentName(src.dir, copySeg), copyOff, what)
	}
	note := func(seg int, ref uint64, t int64) {
		if m, ok := src.segMax[seg]; !ok || t > m {
			src.segMax[seg] = t
		}
		if src.w != nil {
			if d, ok := rp.dups[ref]; ok {
				ref = d
			}
			src.present = append(src.present, seriesTime{ref: ref, t: t})
		}
	}
	var markers []record.RefMmapMarker
	for r.Next() {
		rec := r.Record()
		seg := r.Segment()
		isCopy := copyLeft > 0
		switch typ := record.RecordType(rec); typ {
		case record.WBLCopy:
			n, err := rp.dec.WBLCopy(rec)
			if err != nil {
				return inRun(rp.corrupt(r, src.dir, err))
			}
			copyLeft, copySeg, copyOff, runStart = n, seg, r.Offset()-1, len(src.present)
			continue
		case record.Samples, record.SamplesV2:
			var err error
			if rp.floats, err = rp.dec.Samples(rec, rp.floats[:0]); err != nil {
				return inRun(rp.corrupt(r, src.dir, err))
			}
			for _, smp := range rp.floats {
				note(seg, smp.Ref, smp.T)
				if isCopy {
					continue
				}
				ws := walSample{ref: smp.Ref, t: smp.T, v: smp.V}
				if smp.ST != 0 {
					ws.x = &walExtra{st: smp.ST}
				}
				rp.dispatch(ws)
			}
		case record.HistogramSamples, record.CustomBucketsHistogramSamples, record.HistogramSamplesV2:
			var err error
			if rp.hists, err = rp.dec.HistogramSamples(rec, rp.hists[:0]); err != nil {
				return inRun(rp.corrupt(r, src.dir, err))
			}
			for _, smp := range rp.hists {
				note(seg, smp.Ref, smp.T)
				if !isCopy {
					rp.dispatch(walSample{ref: smp.Ref, t: smp.T, x: &walExtra{st: smp.ST, h: smp.H}})
				}
			}
			clear(rp.hists)
		case record.FloatHistogramSamples, record.CustomBucketsFloatHistogramSamples, record.FloatHistogramSamplesV2:
			var err error
			if rp.fhists, err = rp.dec.FloatHistogramSamples(rec, rp.fhists[:0]); err != nil {
				return inRun(rp.corrupt(r, src.dir, err))
			}
			for _, smp := range rp.fhists {
				note(seg, smp.Ref, smp.T)
				if !isCopy {
					rp.dispatch(walSample{ref: smp.Ref, t: smp.T, x: &walExtra{st: smp.ST, fh: smp.FH}})
				}
			}
			clear(rp.fhists)
		case record.MmapMarkers:
			var err error
			if markers, err = rp.dec.MmapMarkers(rec, markers[:0]); err != nil {
				return inRun(rp.corrupt(r, src.dir, err))
			}
		default:
			// Neither writer puts anything else into a WBL. Never
			// mis-read: counted and skipped. It is no sample record, so
			// it cannot belong to a WBLCopy run either.
			rp.m.recordsSkipped.WithLabelValues(typ.String()).Inc()
			copyLeft = 0
			continue
		}
		if copyLeft > 0 {
			copyLeft--
		}
	}
	err := r.Err()
	if copyLeft > 0 {
		// The log ends (or is damaged) inside a run of copies: the write
		// that logged it was torn.
		err = inRun(err)
	}
	return err
}
