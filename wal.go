package tsdb

import (
	"cmp"
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

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
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

// What a commit with histograms writes. Histograms go into Prometheus's
// histogram records (integer and float, exponential and custom-bucket
// schemas in separate records), so such a commit needs up to five sample
// records. It logs them after a CommitGroup record (isotsdb's own type,
// which Prometheus skips) that says how many follow. Replay holds a
// group's samples back until its last record has been read, so a crash
// that tears a group loses the whole commit: the torn group is cut off the
// log, from its CommitGroup record on, as a torn record would be. Within a
// group, replay applies the samples in time order, which is the order the
// commit applied them in per series. Float-only commits stay one Samples
// record, as before.

// What a commit with metadata writes (head_metadata.go). Its metadata
// updates go into one Metadata record (Prometheus's type 6), logged in
// the commit's group after its sample records: a commit with samples and
// metadata is always a commit group, a commit with metadata only is the
// Metadata record alone. So its metadata replays with its samples or not
// at all, like the rest of it. Replay applies a group's metadata when the
// group's last record has been read, with write ID 0; Metadata records
// outside a group (Prometheus's, and checkpoints') apply as they are read.
// The last entry logged for a series wins. Two commits in flight that set
// one series' metadata log and apply it independently, so the head may
// keep the one logged first while a replay keeps the other (Prometheus's
// head has the same race); each commit is still whole.

// What a commit with late samples writes (head_late.go). Late samples are
// logged in their commit's sample records, next to its in-order samples,
// so the argument above holds unchanged: a commit with in-order and late
// samples is one Samples record or one commit group, and replays whole or
// not at all. Replay tells late samples by their time (older than their
// series' newest) and takes them as late ones whatever the out-of-order
// window is at replay: they were accepted when they were written, and a
// user who turns the window off must not lose them. (With the window off
// at write time, the only samples older than their series' newest in the
// WAL are those of a commit that lost a race for a series to a commit
// logged after it; Commit dropped them, replay now takes them. Samples
// before the head's appendable range are taken as late ones only while
// the window is on, see head_late.go; else they are dropped and counted.)

// What a commit with exemplars writes (exemplar.go). Its exemplars go
// into one Exemplars record (Prometheus's type 4) after its sample
// records, all in one commit group, so a commit's exemplars replay with
// its samples or not at all; a commit of exemplars only writes the one
// record. Replay stores them with write ID 0 in their series' order, with
// the checks of a commit (those out of order or duplicate are dropped):
// so exemplars dropped at Commit because a concurrent commit stored a
// newer one may come back if the WAL has the two commits in the other
// order. With exemplars off (Options.MaxExemplars 0) replay skips
// Exemplars records, counted in tsdb_wal_records_skipped_total, but still
// counts them against their commit group. Exemplars records that
// Prometheus wrote replay the same way.

// The WBL. Prometheus logs every sample to its WAL and, in addition, the
// late ones to a second log, the WBL (wbl/ next to wal/, the same segment
// format), and on replay it drops late samples from the WAL and takes them
// from the WBL. So that Prometheus can open an isotsdb directory with late
// samples, isotsdb writes a WBL too (wbl.go), whenever the window is on or
// a wbl/ directory with segments exists at Open. Its segment size,
// compression and sync policy are the WAL's.
//
// After a commit has logged its records to the WAL and applied its
// samples, it logs the samples it applied as late ones (only then is it
// known which they are: a concurrent commit can make a sample late) to
// the WBL, before the commit becomes visible: a WBLCopy record (isotsdb's
// type 201, which Prometheus's WBL replay skips as unknown) saying that
// the next N records are copies of samples already in this DB's WAL, then
// N sample records in the types the WAL uses (Samples, the histogram
// types, custom-bucket histograms in their own). A commit without late
// samples does not touch the WBL. With Options.WALSyncEveryCommit the WBL
// is fsynced too before Commit returns. A failed WBL write fails the
// Commit with ErrWBL (its samples are applied and in the WAL) and every
// later Commit until the DB is reopened.
//
// The WAL stays authoritative: replay skips the records a WBLCopy record
// announces. Were they replayed, a crash that tore a commit in the WAL
// after its WBL records were written (the logs are separate files, each
// synced on its own) would bring back the late half of a commit whose
// other half is lost: the whole-or-nothing promise would break. A crash
// between a commit's WAL and WBL writes leaves its late samples in the
// WAL only (Prometheus has the same window between its two logs), and so
// does a commit that applied in order a sample that the WAL's order makes
// late (it lost a race for the series to a commit logged after it). So
// Open, after the replay, copies to the WBL the late samples it took from
// the WAL that the WBL does not hold (recopyLate; replay classifies by the
// WAL's order, as Prometheus's does). Prometheus opening the directory
// before isotsdb opens it again would still miss them. Late samples before
// the head's range (minValidTime) are copied when the blocks' WAL mark
// (wal_mark.go) tells that no block holds them: replay dropped those a
// block holds, so a late sample with a time before the mark's is one
// that arrived after its range was written. Without a mark (a directory
// an older isotsdb wrote), and between the mark's time and minValidTime
// (a newer block without a mark), the WAL cannot tell the late samples a
// block holds from the others, so they are not copied: after such a
// crash Prometheus misses the latter until isotsdb's next head compaction
// writes them into a block. The opposite case,
// WBL copies of a commit that the WAL lost (each log is synced on its
// own), is harmless to isotsdb, which skips copies; Prometheus would
// replay them.
//
// Sample records in the WBL without a WBLCopy record before them were
// written by Prometheus. Replay applies them after the whole WAL as late
// samples: a sample that the WAL replay already applied is a no-op (the
// head's duplicate rule), so Prometheus's double logging is harmless.
// Prometheus's MmapMarkers records are decoded and ignored: isotsdb loads
// only the in-order chunks of chunks_head/ (head_mmap.go), and the samples
// a marker stands for are still in the WBL's sample records before it. A torn or damaged WBL is repaired
// like the WAL (cut after its last whole record; a run of copies the log
// ends inside is cut whole) and never costs the WAL anything.
//
// Truncation (truncateWBL): the WBL must hold every late sample that is
// not in a block, since Prometheus takes late samples from it alone. The
// DB keeps, per WBL segment, the greatest sample time logged into it (or
// read from it at replay). When the head is truncated at mint after its
// range went into a block, the active segment is completed if it holds
// samples, and the oldest segments whose greatest time is before mint are
// removed (a prefix only: Prometheus reads the segments without a gap).

// walScratch holds an appender's encoding buffers; the head pools them.
type walScratch struct {
	series  []record.RefSeries
	samples []record.RefSample
	hs      []record.RefHistogramSample
	fhs     []record.RefFloatHistogramSample
	exs     []record.RefExemplar
	recs    [2][]byte
	hrecs   [7][]byte // encoding buffers of a commit group's records
	group   [][]byte  // the records of a commit group, in order
	meta    []record.RefMetadata
	mrec    []byte // encoding buffer of the Metadata record
}

// logCommit writes the transaction's new series and samples to the WAL,
// calling first (if not nil) under the WAL's lock just before it writes
// them, and not at all if the WAL is closed or failed.
func (a *headAppender) logCommit(first func()) error {
	h := a.head
	sc, _ := h.walScratch.Get().(*walScratch)
	if sc == nil {
		sc = &walScratch{}
	}
	defer h.walScratch.Put(sc)
	sc.series, sc.samples, sc.hs, sc.fhs = sc.series[:0], sc.samples[:0], sc.hs[:0], sc.fhs[:0]
	anyST := false // then the V2 record types, which hold start times
	for i := range a.samples {
		p := &a.samples[i]
		if !p.s.walLogged.Load() {
			sc.series = append(sc.series, record.RefSeries{Ref: uint64(p.s.ref), Labels: p.s.lset})
		}
		anyST = anyST || p.st != 0
		switch ref := uint64(p.s.ref); {
		case p.h != nil:
			sc.hs = append(sc.hs, record.RefHistogramSample{Ref: ref, ST: p.st, T: p.t, H: p.h})
		case p.fh != nil:
			sc.fhs = append(sc.fhs, record.RefFloatHistogramSample{Ref: ref, ST: p.st, T: p.t, FH: p.fh})
		default:
			sc.samples = append(sc.samples, record.RefSample{Ref: ref, ST: p.st, T: p.t, V: p.v})
		}
	}
	sc.series = a.metaSeries(sc.series)
	sc.exs = sc.exs[:0]
	for i := range a.exemplars {
		p := &a.exemplars[i]
		if !p.s.walLogged.Load() {
			sc.series = append(sc.series, record.RefSeries{Ref: uint64(p.s.ref), Labels: p.s.lset})
		}
		sc.exs = append(sc.exs, record.RefExemplar{Ref: uint64(p.s.ref), T: p.e.Ts, V: p.e.Value, Labels: p.e.Labels})
	}
	if len(sc.series) > 1 {
		// A new series was collected once per sample, metadata update and
		// exemplar of it: log it once.
		slices.SortFunc(sc.series, func(a, b record.RefSeries) int { return cmp.Compare(a.Ref, b.Ref) })
		sc.series = slices.CompactFunc(sc.series, func(a, b record.RefSeries) bool { return a.Ref == b.Ref })
	}
	var enc record.Encoder
	recs := sc.group[:0] // never sc.recs: appending would alias its buffers
	if len(sc.series) > 0 {
		sc.recs[0] = enc.Series(sc.series, sc.recs[0][:0])
		recs = append(recs, sc.recs[0])
	}
	switch {
	case len(sc.hs) > 0 || len(sc.fhs) > 0 || len(a.meta) > 0 || len(sc.exs) > 0:
		recs = sc.groupRecords(recs, a.appendBatch, anyST)
	case anyST:
		sc.recs[1] = enc.SamplesV2(sc.samples, sc.recs[1][:0])
		recs = append(recs, sc.recs[1])
	default:
		sc.recs[1] = enc.Samples(sc.samples, sc.recs[1][:0])
		recs = append(recs, sc.recs[1])
	}
	sc.group = recs
	err := h.wal.LogAfter(first, recs...)
	clear(sc.hs) // drop histogram references
	clear(sc.fhs)
	clear(sc.exs) // and label references
	if err != nil {
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

// groupRecords appends to recs the scratch's samples, histograms among
// them, b's metadata updates and the exemplars as a commit group: a
// CommitGroup record, then the records of sampleRecords and
// metadataRecord, then an Exemplars record if there are exemplars (after
// the samples, as Prometheus logs them). The records alias sc.hrecs and
// sc.mrec, valid until the next call.
func (sc *walScratch) groupRecords(recs [][]byte, b *appendBatch, st bool) [][]byte {
	head := len(recs)
	recs = append(recs, nil) // the CommitGroup record, if needed
	recs = sc.sampleRecords(recs, st)
	recs = sc.metadataRecord(recs, b)
	if len(sc.exs) > 0 {
		var enc record.Encoder
		sc.hrecs[6] = enc.Exemplars(sc.exs, sc.hrecs[6][:0])
		recs = append(recs, sc.hrecs[6])
	}
	return sc.closeGroup(recs, head)
}

// sampleRecords appends to recs one record per kind of sample present in
// the scratch (with st, in the V2 types, which hold start times and any
// schema; without, custom-bucket histograms in their own types, as
// Prometheus writes them). The records alias sc.hrecs[1:], valid until the
// next call.
func (sc *walScratch) sampleRecords(recs [][]byte, st bool) [][]byte {
	var enc record.Encoder
	switch {
	case len(sc.samples) == 0:
	case st:
		sc.hrecs[1] = enc.SamplesV2(sc.samples, sc.hrecs[1][:0])
		recs = append(recs, sc.hrecs[1])
	default:
		sc.hrecs[1] = enc.Samples(sc.samples, sc.hrecs[1][:0])
		recs = append(recs, sc.hrecs[1])
	}
	if st {
		if len(sc.hs) > 0 {
			sc.hrecs[2] = enc.HistogramSamplesV2(sc.hs, sc.hrecs[2][:0])
			recs = append(recs, sc.hrecs[2])
		}
		if len(sc.fhs) > 0 {
			sc.hrecs[4] = enc.FloatHistogramSamplesV2(sc.fhs, sc.hrecs[4][:0])
			recs = append(recs, sc.hrecs[4])
		}
		return recs
	}
	if len(sc.hs) > 0 {
		var custom []record.RefHistogramSample
		sc.hrecs[2], custom = enc.HistogramSamples(sc.hs, sc.hrecs[2][:0])
		if len(sc.hrecs[2]) > 1 {
			recs = append(recs, sc.hrecs[2])
		}
		if len(custom) > 0 {
			sc.hrecs[3] = enc.CustomBucketsHistogramSamples(custom, sc.hrecs[3][:0])
			recs = append(recs, sc.hrecs[3])
		}
	}
	if len(sc.fhs) > 0 {
		var custom []record.RefFloatHistogramSample
		sc.hrecs[4], custom = enc.FloatHistogramSamples(sc.fhs, sc.hrecs[4][:0])
		if len(sc.hrecs[4]) > 1 {
			recs = append(recs, sc.hrecs[4])
		}
		if len(custom) > 0 {
			sc.hrecs[5] = enc.CustomBucketsFloatHistogramSamples(custom, sc.hrecs[5][:0])
			recs = append(recs, sc.hrecs[5])
		}
	}
	return recs
}

// closeGroup finishes the group of records recs[head+1:]: it fills in the
// CommitGroup record at recs[head], or drops that slot if the group has
// one record only.
func (sc *walScratch) closeGroup(recs [][]byte, head int) [][]byte {
	var enc record.Encoder
	n := len(recs) - head - 1
	if n == 1 {
		// One record is atomic by itself.
		return append(recs[:head], recs[head+1])
	}
	sc.hrecs[0] = enc.CommitGroup(n, sc.hrecs[0][:0])
	recs[head] = sc.hrecs[0]
	return recs
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
	// Before the log starts its new segment: the snapshot must match the
	// end of what is on disk.
	snap, err := db.takeChunkSnapshot(dir)
	if err != nil {
		return err
	}
	w, err := wlog.Open(db.logger, reg, db.fs, dir, wo)
	if err != nil {
		return fmt.Errorf("open WAL: %w", err)
	}
	var wbl *wblSource
	switch want, err := db.wblWanted(); {
	case err != nil:
		return errors.Join(err, w.Close())
	case want:
		bw, err := db.openWBLLog(reg)
		if err != nil {
			return errors.Join(err, w.Close())
		}
		wbl = &wblSource{dir: bw.Dir(), w: bw}
	}
	start := time.Now()
	hc, mapped, damaged, err := loadHeadChunks(db.fs, db.dir, db.head.minValidTime.Load(), db.head)
	if err != nil {
		if wbl != nil {
			err = errors.Join(err, wbl.w.Close())
		}
		return errors.Join(err, w.Close())
	}
	if snap != nil && damaged {
		db.walMetrics.snapshotErrors.Inc()
		db.logger.Warn("tsdb: chunk snapshot not used: the head chunk files were damaged; replaying the WAL")
		snap = nil
	}
	db.head.mapped = mapped
	if snap != nil {
		err = db.head.restoreChunkSnapshot(db.fs, snap, wbl, db.walMetrics)
		if errors.Is(err, errChunkSnapshot) {
			// Checked before the head was touched.
			db.walMetrics.snapshotErrors.Inc()
			db.logger.Warn("tsdb: chunk snapshot not used; replaying the WAL", "err", err)
			snap = nil
		} else if err == nil {
			db.walMetrics.snapshotLoads.Inc()
		}
	}
	if snap == nil {
		err = db.head.replayWAL(db.fs, dir, w, wbl, db.walMetrics)
	}
	db.head.mapped = nil
	if err != nil {
		err = fmt.Errorf("replay WAL: %w", err)
		if wbl != nil {
			err = errors.Join(err, wbl.w.Close())
		}
		return errors.Join(err, w.Close(), hc.Close())
	}
	db.head.headChunks = hc
	db.walMetrics.replayDuration.Set(time.Since(start).Seconds())
	if err := db.startWALAfterMark(w, db.head.walMark); err != nil {
		err = fmt.Errorf("replay WAL: %w", err)
		if wbl != nil {
			err = errors.Join(err, wbl.w.Close())
		}
		return errors.Join(err, w.Close())
	}
	db.head.walMark = nil
	db.head.wal = w
	if wbl != nil {
		l := &wblLog{w: wbl.w, segMax: wbl.segMax}
		db.head.wbl.Store(l)
		if err := db.head.recopyLate(l, wbl.missing); err != nil {
			return errors.Join(fmt.Errorf("replay WAL: %w", err), wbl.w.Close(), w.Close())
		}
	}
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

// replayWAL loads the last checkpoint and the segments after it from dir,
// then, if wbl is not nil, the WBL (replayWBL). A corrupt or torn segment
// is repaired through w (the log is cut after the last whole record); with
// w nil (a read-only open) replay stops there with a warning and nothing
// is written.
func (h *head) replayWAL(fsys vfs.FS, dir string, w *wlog.WL, wbl *wblSource, m *walMetrics) error {
	start := time.Now()
	rp := newReplayer(h, m)
	defer rp.close()
	defer rp.indexSeries() // on every return: a read-only open keeps what replay read
	rp.collectLate.Store(wbl != nil && wbl.w != nil)
	if wbl != nil {
		h.mapped.noteLateCopies(h.logger, fsys, wbl.dir)
	}

	from := 0
	cpDir, cpIdx, err := wlog.LastCheckpoint(fsys, dir)
	switch {
	case err == nil:
		r, err := wlog.NewSegmentsReader(fsys, cpDir)
		if err != nil {
			return fmt.Errorf("open checkpoint %s: %w", cpDir, err)
		}
		err = rp.replay(wlog.NewReader(r), cpDir, cpIdx)
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
	err = rp.replay(wlog.NewReader(r), dir, -1)
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
	if wbl != nil {
		rp.collectLate.Store(false)
		if err := rp.replayWBL(fsys, wbl); err != nil {
			return err
		}
		if wbl.w != nil {
			wbl.missing = rp.missingFromWBL(wbl.present)
			wbl.present = nil
		}
	}
	h.raiseLastSeriesRef(rp.maxRef)
	if len(rp.dups) > 0 {
		h.walDups = rp.dups
	}
	if rp.unknownMeta > 0 {
		h.logger.Warn("tsdb: WAL replay skipped metadata of series it has no record of", "series", rp.unknownMeta)
	}
	h.addTombstones(rp.tombs)
	if rp.unknownEx > 0 {
		h.logger.Warn("tsdb: WAL replay skipped exemplars of series it has no record of", "exemplars", rp.unknownEx)
	}
	h.trimLateAfterReplay()
	h.logger.Info("tsdb: WAL replayed", "series", h.NumSeries(), "samples", rp.samples.Load(), "in_mapped_chunks", rp.inMapped.Load(), "exemplars", rp.exemplars,
		"in_blocks_by_mark", rp.inBlocksDropped, "from_segment", from, "duration", time.Since(start))
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
	shards  []chan []walSample
	pending [][]walSample    // per shard, not yet sent
	free    chan []walSample // batches the workers are done with
	// Decoding scratch.
	floats []record.RefSample
	hists  []record.RefHistogramSample
	fhists []record.RefFloatHistogramSample
	exs    []record.RefExemplar
	// group holds the samples of the commit group being read (see the
	// top of this file): groupLeft more records belong to it. groupSeg
	// and groupOff locate the group's CommitGroup record (the offset is
	// one byte before its end) for a repair that cuts the group off.
	group     []walSample
	groupMeta []record.RefMetadata // the group's metadata entries
	groupEx   []record.RefExemplar // the group's exemplars
	groupLeft int
	groupSeg  int
	groupOff  int64
	wg        sync.WaitGroup
	// dups maps a series ref that a record defined again under other
	// labels-identical ref to the ref the head uses.
	dups map[uint64]uint64
	// meta is decoding scratch of Metadata records; unknownMeta counts
	// their entries of series no record defined.
	meta        []record.RefMetadata
	unknownMeta int
	// tombs collects the deletions of Tombstones records.
	tombs map[SeriesRef]tombstones.Intervals
	// unknownRefs counts the samples of series no record defined: the
	// WAL's counter, then the WBL's.
	unknownRefs prometheus.Counter
	// maxRef is the highest series ref any Samples or Tombstones record
	// used, defined or not. A series record can be lost with a segment
	// (accepted with Options.AcceptIncompleteWAL) while samples of its ref
	// stay in the log: new series must never take such a ref, or the next
	// replay would give them those samples.
	maxRef uint64
	// unindexed are the series created, to be added to the postings at
	// the end (indexSeries).
	unindexed []*memSeries

	samples, unknown, dropped atomic.Int64 // updated by the workers
	// inMapped counts the samples skipped because the series' mapped
	// chunks hold them (head_mmap.go); updated by the workers.
	inMapped atomic.Int64
	// exemplars counts the exemplars stored, unknownEx those of series no
	// record defined (the reading goroutine stores exemplars itself).
	exemplars, unknownEx int

	// collectLate: the workers record in late the samples they take as
	// late ones (see wblSource.missing); lateMu protects late.
	collectLate  atomic.Bool
	lateMu       sync.Mutex
	late         []seriesTime
	lastProgress time.Time

	// mark is the position of the greatest WAL mark of the blocks and
	// markMaxT its time (wal_mark.go), nil without one; inBlocks says
	// whether the record being read lies before mark. inBlocksDropped
	// counts the samples add dropped by the mark.
	mark            *wlog.Position
	markMaxT        int64
	inBlocks        bool
	inBlocksDropped int64
}

// replayBatch is the number of samples sent to a worker at once.
const replayBatch = 5000

func newReplayer(h *head, m *walMetrics) *replayer {
	n := max(1, runtime.GOMAXPROCS(0))
	rp := &replayer{h: h, m: m, unknownRefs: m.unknownRefs, dups: map[uint64]uint64{}, tombs: map[SeriesRef]tombstones.Intervals{}, lastProgress: time.Now(),
		free: make(chan []walSample, 8*n)}
	if wm := h.walMark; wm != nil {
		rp.mark, rp.markMaxT = &wlog.Position{Segment: wm.Segment, Offset: wm.Offset}, wm.MaxTime
	}
	rp.shards = make([]chan []walSample, n)
	rp.pending = make([][]walSample, n)
	for i := range rp.shards {
		ch := make(chan []walSample, 4)
		rp.shards[i] = ch
		rp.wg.Add(1)
		go rp.work(ch)
	}
	return rp
}

// work applies the batches of one shard.
func (rp *replayer) work(ch <-chan []walSample) {
	defer rp.wg.Done()
	h := rp.h
	var lateIt chunks.Iterator // scratch of the duplicate checks of late samples
	for batch := range ch {
		var applied, unknown, dropped, lateAdded, inMapped int64
		mint, maxt := int64(math.MaxInt64), int64(math.MinInt64)
		collect := rp.collectLate.Load()
		var late []seriesTime
		// Samples before minValidTime are in blocks already: the WAL still
		// holds them when the process stopped between publishing a block
		// and truncating the head. Except, with the out-of-order window
		// on, late samples that arrived after their range was written
		// into a block: those are taken as late ones. The blocks' WAL
		// mark tells most of the others apart, and add drops them
		// (wal_mark.go); those it cannot (no mark: a directory written by
		// Prometheus or an older isotsdb; a checkpoint at or after the
		// mark's segment; a time between the mark's and minValidTime) are
		// taken as late ones too: copies of what a block holds, which
		// reads and block compaction merge away.
		// Samples outside [MinSampleTime, MaxSampleTime] (from another
		// writer) cannot be stored.
		minValid := h.minValidTime.Load()
		// Late samples before the WAL mark's time that reach the workers
		// were logged after the mark (add dropped the others): they
		// arrived after their range was written, and only the head has
		// them (wal_mark.go).
		markMaxT := int64(math.MinInt64)
		if rp.mark != nil {
			markMaxT = rp.markMaxT
		}
		// Samples older than their series' newest are late ones, whatever
		// the out-of-order window is now: they were accepted when they
		// were written (head_late.go). Samples before minValid are late
		// ones only while the window is on (see above).
		behind := h.lateWindow.Load() > 0
		for i := range batch {
			smp := &batch[i]
			if smp.t < MinSampleTime || !behind && smp.t < minValid || smp.t > MaxSampleTime || smp.x != nil && !smp.x.valid() {
				dropped++
				continue
			}
			s := h.series.getByRef(SeriesRef(smp.ref))
			if s == nil {
				unknown++
				continue
			}
			if h.mapped.inMapped(s, smp.t) {
				inMapped++
				continue
			}
			s.mu.Lock()
			var reason string
			switch x := smp.x; {
			case smp.t < minValid || smp.t <= s.lastTLocked():
				p := pendingSample{t: smp.t, v: smp.v}
				if x != nil {
					p.st, p.h, p.fh = x.st, x.h, x.fh
				}
				var added bool
				reason, added = s.appendLateLocked(h, &p, 0, 0, true, &lateIt)
				if added {
					lateAdded++
				}
				// Those before minValid are collected only if the WAL mark
				// tells that no block holds them: without it most are copies
				// of what a block holds (the WAL keeps them until a checkpoint).
				if collect && reason == "" && (smp.t >= minValid || smp.t < markMaxT) {
					late = append(late, seriesTime{ref: smp.ref, t: smp.t})
				}
			case x == nil:
				reason = s.appendFloatLocked(h, 0, smp.t, smp.v, 0, 0)
			case x.h == nil && x.fh == nil:
				reason = s.appendFloatLocked(h, x.st, smp.t, smp.v, 0, 0)
			default:
				reason = s.appendHistogramLocked(h, x.st, smp.t, x.h, x.fh, 0, 0)
			}
			s.mu.Unlock()
			if reason != "" {
				dropped++
				continue
			}
			applied++
			mint, maxt = min(mint, smp.t), max(maxt, smp.t)
		}
		if applied > 0 {
			h.updateTimeRange(mint, maxt)
		}
		if len(late) > 0 {
			rp.lateMu.Lock()
			rp.late = append(rp.late, late...)
			rp.lateMu.Unlock()
		}
		if lateAdded > 0 {
			h.metrics.lateAppended.Add(float64(lateAdded))
		}
		rp.samples.Add(applied)
		rp.inMapped.Add(inMapped)
		rp.unknown.Add(unknown)
		rp.dropped.Add(dropped)
		rp.putBatch(batch)
	}
}

// replay reads every record of r. src names the source for messages. cp
// is the index of the checkpoint r reads (whose records stand at the end
// of segment cp), -1 if r reads the log's segments.
func (rp *replayer) replay(r *wlog.Reader, src string, cp int) error {
	h := rp.h
	for r.Next() {
		rec := r.Record()
		if rp.mark != nil {
			end := wlog.EndOf(cp)
			if cp < 0 {
				end = wlog.Position{Segment: r.Segment(), Offset: r.Offset()}
			}
			rp.inBlocks = rp.mark.Before(end)
		}
		switch typ := record.RecordType(rec); typ {
		case record.Series:
			rp.dropGroup(src)
			var err error
			if rp.series, err = rp.dec.Series(rec, rp.series[:0]); err != nil {
				return rp.corrupt(r, src, err)
			}
			for _, rs := range rp.series {
				rp.addSeries(rs.Ref, rs.Labels)
			}
			clear(rp.series)
		case record.Samples, record.SamplesV2:
			var err error
			if rp.floats, err = rp.dec.Samples(rec, rp.floats[:0]); err != nil {
				return rp.corrupt(r, src, err)
			}
			for _, smp := range rp.floats {
				ws := walSample{ref: smp.Ref, t: smp.T, v: smp.V}
				if smp.ST != 0 {
					ws.x = &walExtra{st: smp.ST}
				}
				rp.add(ws)
			}
			rp.recordDone()
		case record.HistogramSamples, record.CustomBucketsHistogramSamples, record.HistogramSamplesV2:
			var err error
			if rp.hists, err = rp.dec.HistogramSamples(rec, rp.hists[:0]); err != nil {
				return rp.corrupt(r, src, err)
			}
			for _, smp := range rp.hists {
				rp.add(walSample{ref: smp.Ref, t: smp.T, x: &walExtra{st: smp.ST, h: smp.H}})
			}
			clear(rp.hists)
			rp.recordDone()
		case record.FloatHistogramSamples, record.CustomBucketsFloatHistogramSamples, record.FloatHistogramSamplesV2:
			var err error
			if rp.fhists, err = rp.dec.FloatHistogramSamples(rec, rp.fhists[:0]); err != nil {
				return rp.corrupt(r, src, err)
			}
			for _, smp := range rp.fhists {
				rp.add(walSample{ref: smp.Ref, t: smp.T, x: &walExtra{st: smp.ST, fh: smp.FH}})
			}
			clear(rp.fhists)
			rp.recordDone()
		case record.Metadata:
			var err error
			if rp.meta, err = rp.dec.Metadata(rec, rp.meta[:0]); err != nil {
				return rp.corrupt(r, src, err)
			}
			if rp.groupLeft > 0 {
				rp.groupMeta = append(rp.groupMeta, rp.meta...)
			} else {
				rp.replayMetadata(rp.meta)
			}
			clear(rp.meta)
			rp.recordDone()
		case record.Exemplars:
			if !h.exemplars.enabled() {
				rp.m.recordsSkipped.WithLabelValues(typ.String()).Inc()
				rp.recordDone()
				break
			}
			var err error
			if rp.exs, err = rp.dec.Exemplars(rec, rp.exs[:0]); err != nil {
				return rp.corrupt(r, src, err)
			}
			for _, e := range rp.exs {
				rp.addExemplar(e)
			}
			clear(rp.exs)
			rp.recordDone()
		case record.CommitGroup:
			n, err := rp.dec.CommitGroup(rec)
			if err != nil {
				return rp.corrupt(r, src, err)
			}
			rp.dropGroup(src)
			rp.groupLeft, rp.groupSeg, rp.groupOff = n, r.Segment(), r.Offset()-1
		case record.Tombstones:
			rp.dropGroup(src)
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
			// MmapMarkers, ...: not used by this version. Never
			// mis-read: counted and skipped.
			rp.m.recordsSkipped.WithLabelValues(typ.String()).Inc()
		}
		if time.Since(rp.lastProgress) > 5*time.Second {
			rp.lastProgress = time.Now()
			h.logger.Info("tsdb: WAL replay in progress", "source", src, "segment", r.Segment(), "series", h.NumSeries(), "samples", rp.samples.Load())
		}
	}
	err := r.Err()
	if rp.groupLeft > 0 {
		// The log ends inside a commit group: the commit is torn. Drop
		// it, and have the log cut before the group, so that nothing
		// logged from now on is taken for the rest of it.
		n := rp.groupLeft
		clear(rp.groupEx)
		rp.group, rp.groupEx, rp.groupLeft = rp.group[:0], rp.groupEx[:0], 0
		rp.dropGroupMeta()
		err = corrupt.At(wlog.SegmentName(src, rp.groupSeg), rp.groupOff,
			fmt.Errorf("%w: the log ends %d records before the end of a commit group (a torn commit)", errTornCommit, n))
	}
	return err
}

// errTornCommit marks a commit group the log does not hold whole.
var errTornCommit = errors.New("torn commit")

// walSample is a sample read from the WAL: the float v, unless x holds a
// histogram. x is set only for histograms and samples with a start time,
// so that the float samples of a replay, nearly all of them, stay small.
type walSample struct {
	ref uint64
	t   int64
	v   float64
	x   *walExtra
}

// walExtra is what a walSample needs beyond a float without a start time:
// the start time, and the integer histogram h or the float histogram fh.
type walExtra struct {
	st int64 // 0 for none
	h  *histogram.Histogram
	fh *histogram.FloatHistogram
}

// valid reports whether the sample can be stored: floats always, histograms
// if they pass validation (a record that decodes may still hold nonsense).
func (s *walExtra) valid() bool {
	switch {
	case s.h != nil:
		return s.h.Validate() == nil
	case s.fh != nil:
		return s.fh.Validate() == nil
	}
	return true
}

// add takes a sample of a record: into the open commit group, or to its
// series' worker. A sample the blocks hold by the WAL mark (wal_mark.go)
// is dropped here, counted with the samples dropped as in blocks.
func (rp *replayer) add(smp walSample) {
	if rp.inBlocks && smp.t < rp.markMaxT {
		rp.dropped.Add(1)
		rp.inBlocksDropped++
		return
	}
	if rp.groupLeft > 0 {
		rp.group = append(rp.group, smp)
		return
	}
	rp.dispatch(smp)
}

// recordDone counts a sample record against the open commit group; after
// the group's last record it releases the group's samples in time order
// (a stable sort keeps each series' order, in which times increase).
func (rp *replayer) recordDone() {
	if rp.groupLeft == 0 {
		return
	}
	if rp.groupLeft--; rp.groupLeft > 0 {
		return
	}
	slices.SortStableFunc(rp.group, func(a, b walSample) int { return cmp.Compare(a.t, b.t) })
	for _, smp := range rp.group {
		rp.dispatch(smp)
	}
	clear(rp.group)
	rp.group = rp.group[:0]
	rp.replayMetadata(rp.groupMeta)
	rp.dropGroupMeta()
	for _, e := range rp.groupEx {
		rp.storeExemplar(e)
	}
	clear(rp.groupEx)
	rp.groupEx = rp.groupEx[:0]
}

// dropGroupMeta empties the metadata entries of the commit group.
func (rp *replayer) dropGroupMeta() {
	clear(rp.groupMeta)
	rp.groupMeta = rp.groupMeta[:0]
}

// addExemplar takes an exemplar of a record: into the open commit group,
// or into the head's exemplar storage.
func (rp *replayer) addExemplar(e record.RefExemplar) {
	if rp.groupLeft > 0 {
		rp.groupEx = append(rp.groupEx, e)
		return
	}
	rp.storeExemplar(e)
}

// storeExemplar stores an exemplar in the head's exemplar storage, if its
// series is known and it is valid and in order.
func (rp *replayer) storeExemplar(e record.RefExemplar) {
	rp.maxRef = max(rp.maxRef, e.Ref)
	ref := e.Ref
	if d, ok := rp.dups[ref]; ok {
		ref = d
	}
	s := rp.h.series.getByRef(SeriesRef(ref))
	if s == nil {
		rp.unknownEx++
		return
	}
	if rp.h.exemplars.addReplayed(s.lset, Exemplar{Labels: e.Labels, Value: e.V, Ts: e.T}, rp.h.lateWindow.Load()) {
		rp.exemplars++
	}
}

// dropGroup drops an open commit group that another kind of record
// interrupted. isotsdb never writes that; it is logged, and the group's
// samples are dropped as those of a torn commit.
func (rp *replayer) dropGroup(src string) {
	if rp.groupLeft == 0 {
		return
	}
	rp.h.logger.Warn("tsdb: WAL replay dropped an incomplete commit group", "source", src, "segment", rp.groupSeg, "samples", len(rp.group), "metadata", len(rp.groupMeta), "exemplars", len(rp.groupEx))
	clear(rp.group)
	clear(rp.groupEx)
	rp.group, rp.groupEx, rp.groupLeft = rp.group[:0], rp.groupEx[:0], 0
	rp.dropGroupMeta()
}

// dispatch queues a sample for the worker of its series.
func (rp *replayer) dispatch(smp walSample) {
	rp.maxRef = max(rp.maxRef, smp.ref)
	if ref, ok := rp.dups[smp.ref]; ok {
		smp.ref = ref
	}
	i := smp.ref % uint64(len(rp.shards))
	rp.pending[i] = append(rp.pending[i], smp)
	if len(rp.pending[i]) >= replayBatch {
		rp.shards[i] <- rp.pending[i]
		rp.pending[i] = rp.getBatch()
	}
}

// corrupt turns a record that passed its checksum but does not decode into
// a corruption at the record's position, so that the log can be repaired.
func (rp *replayer) corrupt(r *wlog.Reader, src string, err error) error {
	return corrupt.At(wlog.SegmentName(src, r.Segment()), r.Offset(), err)
}

func (rp *replayer) getBatch() []walSample {
	select {
	case b := <-rp.free:
		return b
	default:
		return make([]walSample, 0, replayBatch)
	}
}

func (rp *replayer) putBatch(b []walSample) {
	clear(b) // drop histogram references
	select {
	case rp.free <- b[:0]:
	default:
	}
}

// addSeries creates the series ref of a Series record. New series take
// refs above ref even if the record only repeats the labels of a series
// under another ref (a duplicate, mapped in dups): a new series given
// that ref would have its samples mapped to the other series by the next
// replay, which reads the duplicate record first.
func (rp *replayer) addSeries(ref uint64, lset labels.Labels) {
	h := rp.h
	h.raiseLastSeriesRef(ref)
	s, created := h.series.getOrSet(lset.Hash(), lset, func() *memSeries {
		return newMemSeries(SeriesRef(ref), lset)
	})
	if created {
		h.numSeries.Add(1)
		h.metrics.seriesCreated.Inc()
		rp.unindexed = append(rp.unindexed, s)
		h.mapped.attach(h, s)
	} else if uint64(s.ref) != ref {
		rp.dups[ref] = uint64(s.ref)
	}
	s.walLogged.Store(true)
}

// indexSeries adds the series the replay created to the postings, in
// order of ref. A checkpoint lists series in no particular order, and a
// list takes a ref below its last one only by copying itself (readers may
// hold it), so adding them as their records came cost time quadratic in
// the series of a label value. Nothing reads the postings during replay.
func (rp *replayer) indexSeries() {
	slices.SortFunc(rp.unindexed, func(a, b *memSeries) int { return cmp.Compare(a.ref, b.ref) })
	for _, s := range rp.unindexed {
		rp.h.postings.Add(uint64(s.ref), s.lset)
	}
	rp.unindexed = nil
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
		ch := make(chan []walSample, 4)
		rp.shards[i] = ch
		rp.wg.Add(1)
		go rp.work(ch)
	}
	if n := rp.unknown.Load(); n > 0 {
		rp.unknownRefs.Add(float64(n))
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
