package tsdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/encoding"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// The chunk snapshot (Options.SnapshotOnShutdown).
//
// A clean Close writes the head's state into a directory
// chunk_snapshot.NNNNNN.OOOOOOOOOO of the data directory, NNNNNN being the
// WAL's last segment and OOOOOOOOOO its size at that moment (Prometheus's
// name for its memory snapshot, which sits in the same place). The next
// Open restores the head from it instead of replaying the WAL, if the WAL
// still ends exactly there.
//
// Format. The directory's segments (written by package wlog, like the
// WAL's) hold Prometheus's memory snapshot (tsdb/docs/format/
// memory_snapshot.md): one record per series with its labels and its open
// chunk, one tombstones record, then exemplar records in the order the
// exemplar ring holds them. What Prometheus's format has no place for is
// in a second log in the subdirectory isotsdb/, whose name is not a
// segment number, so that Prometheus's reader never sees it:
//
//   - the samples of the series' closed chunks that are not in the head
//     chunk files (chunks of other encodings than XOR: head_mmap.go), as
//     SamplesV2 and histogram V2 records, after a section record saying so;
//   - the late samples (head_late.go), after a section record;
//   - the series' metadata, as Metadata records;
//   - for each series with mapped chunks, how many and where they end,
//     so that Open can check that chunks_head/ still holds them;
//   - last, a trailer: the format version, the head's last series ref,
//     how many series and exemplars the first log holds, whether it ends
//     in the marker below, and how many records each log holds (before
//     the trailer): a log that lost whole records (a segment, or a cut at
//     a record boundary) reads without error.
//
// Prometheus with its memory snapshot on restores its head from the first
// log, the head chunk files and its WBL (where isotsdb's late samples are
// copied, wbl.go). Where that would lose a sample (a closed chunk that only
// the second log holds, an open chunk Prometheus would read otherwise than
// its own, a WBL that failed), the first log ends in a record of a type
// Prometheus does not know: its loader then drops the snapshot and replays
// the WAL, which holds everything.
//
// Safety. The snapshot is built in a temporary directory, synced and
// renamed; Open removes every snapshot directory (used or not) before it
// returns, so that a snapshot never outlives the WAL position it names. A
// snapshot that is damaged, incomplete, does not match the WAL's end or
// the head chunk files is dropped with a warning, and Open replays the
// WAL as without one: the WAL stays authoritative.

// chunkSnapshotPrefix starts the name of a snapshot directory.
const chunkSnapshotPrefix = "chunk_snapshot."

// chunkSnapshotExtraDir is the subdirectory with isotsdb's second log.
const chunkSnapshotExtraDir = "isotsdb"

// Record types of the first log (Prometheus's) and of the second.
const (
	snapRecSeries     byte = 1 // Prometheus's series record
	snapRecTombstones byte = 2 // Prometheus's tombstones record
	snapRecExemplars  byte = 3 // Prometheus's exemplars record
	// snapRecIsotsdbOnly ends a first log that Prometheus must not
	// restore from (see above). Prometheus knows types 1 to 3 only.
	snapRecIsotsdbOnly byte = 100

	// In the second log, besides the WAL's sample and Metadata records.
	snapRecSection byte = 210 // a section byte follows
	snapRecMapped  byte = 211 // (ref, chunks, last chunk's end)*
	snapRecTrailer byte = 212 // version, last ref, series, exemplars, isotsdb-only
)

// Sections of the second log's samples.
const (
	snapSectionClosed byte = 1 // in-order samples before the open chunk
	snapSectionLate   byte = 2 // late samples
)

// chunkSnapshotVersion is the trailer's version; Open uses only its own.
const chunkSnapshotVersion = 1

// tombstoneFormatV1 starts Prometheus's encoding of the tombstones in a
// snapshot (the tombstones file's entries without magic and checksum).
const tombstoneFormatV1 = 1

// errChunkSnapshot wraps every reason a snapshot is not used.
var errChunkSnapshot = errors.New("chunk snapshot unusable")

// chunkSnapshotName returns the directory name of a snapshot taken when
// the WAL ended at segment seg, offset off.
func chunkSnapshotName(seg int, off int64) string {
	return fmt.Sprintf(chunkSnapshotPrefix+"%06d.%010d", seg, off)
}

// parseChunkSnapshotName returns the WAL position a snapshot directory
// name says; ok is false for other names (temporary directories
// included).
func parseChunkSnapshotName(name string) (seg int, off int64, ok bool) {
	rest, found := strings.CutPrefix(name, chunkSnapshotPrefix)
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rest, ".")
	if !found || strings.Contains(b, ".") {
		return 0, 0, false
	}
	s, err1 := strconv.Atoi(a)
	o, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || s < 0 || o < 0 {
		return 0, 0, false
	}
	return s, o, true
}

// snapSeries is a series of a snapshot: its ref, labels and open chunk
// (nil if it has none).
type snapSeries struct {
	ref   uint64
	lset  labels.Labels
	chunk chunks.Chunk
	mint  int64
	maxt  int64
}

// snapMapped is what the snapshot says of a series' mapped chunks.
type snapMapped struct {
	n    int
	last int64
}

// chunkSnapshot is a decoded snapshot, checked whole before any of it
// reaches the head.
type chunkSnapshot struct {
	series    []snapSeries
	tombs     map[SeriesRef]tombstones.Intervals
	exemplars []record.RefExemplar
	closed    []walSample // in-order samples before the open chunks
	late      []walSample
	meta      []record.RefMetadata
	mapped    map[uint64]snapMapped
	lastRef   uint64
	promExact bool // the first log does not end in snapRecIsotsdbOnly
	tombsRead bool // the first log's tombstones record was read
}

// readChunkSnapshot reads and checks the snapshot in dir. Any damage,
// inconsistency or unknown record is an error wrapping errChunkSnapshot.
func readChunkSnapshot(fsys vfs.FS, dir string) (*chunkSnapshot, error) {
	cs := &chunkSnapshot{tombs: map[SeriesRef]tombstones.Intervals{}, mapped: map[uint64]snapMapped{}, promExact: true}
	var mainRecs uint64
	if err := readSnapshotLog(fsys, dir, func(rec []byte) error { mainRecs++; return cs.readPromRecord(rec) }); err != nil {
		return nil, err
	}
	var trailer bool
	var want [5]uint64
	var extraRecs uint64
	var section byte
	var dec record.Decoder
	err := readSnapshotLog(fsys, filepath.Join(dir, chunkSnapshotExtraDir), func(rec []byte) error {
		if trailer {
			return errors.New("record after the trailer")
		}
		extraRecs++
		switch record.RecordType(rec) {
		case record.SamplesV2, record.HistogramSamplesV2, record.FloatHistogramSamplesV2:
			if section == 0 {
				return errors.New("samples outside a section")
			}
			out := &cs.closed
			if section == snapSectionLate {
				out = &cs.late
			}
			return decodeSnapSamples(&dec, rec, out)
		case record.Metadata:
			var err error
			cs.meta, err = dec.Metadata(rec, cs.meta)
			return err
		}
		db := encoding.NewDecbuf(rec)
		switch db.Byte() {
		case snapRecSection:
			section = db.Byte()
			if section != snapSectionClosed && section != snapSectionLate {
				return fmt.Errorf("unknown section %d", section)
			}
		case snapRecMapped:
			for db.Len() > 0 && !db.Failed() {
				ref, n, last := db.Uvarint(), db.Uvarint(), db.Varint()
				if _, dup := cs.mapped[ref]; dup || n == 0 || n > math.MaxInt32 {
					return fmt.Errorf("bad mapped chunks entry of series %d", ref)
				}
				cs.mapped[ref] = snapMapped{n: int(n), last: last}
			}
		case snapRecTrailer:
			if v := db.Uvarint(); v != chunkSnapshotVersion && !db.Failed() {
				return fmt.Errorf("version %d, want %d", v, chunkSnapshotVersion)
			}
			cs.lastRef = db.Uvarint()
			for i := range want {
				want[i] = db.Uvarint()
			}
			extraRecs-- // the trailer itself
			trailer = true
		default:
			return fmt.Errorf("unknown record type %d", rec[0])
		}
		if db.Len() > 0 && !db.Failed() {
			return fmt.Errorf("%d bytes left in record", db.Len())
		}
		return db.Err()
	})
	switch {
	case err != nil:
		return nil, err
	case !trailer:
		return nil, fmt.Errorf("%w: %s: no trailer", errChunkSnapshot, dir)
	case want != [5]uint64{uint64(len(cs.series)), uint64(len(cs.exemplars)), boolUint(!cs.promExact), mainRecs, extraRecs}:
		return nil, fmt.Errorf("%w: %s: series, exemplars, isotsdb-only, records: %d, %d, %t, %d, %d; the trailer says %v",
			errChunkSnapshot, dir, len(cs.series), len(cs.exemplars), !cs.promExact, mainRecs, extraRecs, want)
	}
	return cs, cs.check()
}

func boolUint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// readSnapshotLog calls fn with each record of the log in dir, and
// returns the first error (fn's or the log's) wrapped in
// errChunkSnapshot. A directory without segments is an error.
func readSnapshotLog(fsys vfs.FS, dir string, fn func(rec []byte) error) error {
	segs, err := wlog.SegmentIndexes(fsys, dir)
	if err == nil && len(segs) == 0 {
		err = fs.ErrNotExist
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errChunkSnapshot, dir, err)
	}
	sr, err := wlog.NewSegmentsReader(fsys, dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errChunkSnapshot, dir, err)
	}
	defer sr.Close()
	r := wlog.NewReader(sr)
	for r.Next() {
		rec := r.Record()
		if len(rec) == 0 {
			return fmt.Errorf("%w: %s: empty record", errChunkSnapshot, dir)
		}
		if err := fn(rec); err != nil {
			return fmt.Errorf("%w: %s: segment %d offset %d: %w", errChunkSnapshot, dir, r.Segment(), r.Offset(), err)
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", errChunkSnapshot, dir, err)
	}
	return nil
}

// readPromRecord takes a record of the first log, which must come in the
// order series*, tombstones, exemplars*, [isotsdb-only].
func (cs *chunkSnapshot) readPromRecord(rec []byte) error {
	if !cs.promExact {
		return errors.New("record after the isotsdb-only marker")
	}
	tombsRead := cs.tombsRead
	db := encoding.NewDecbuf(rec)
	switch typ := db.Byte(); typ {
	case snapRecSeries:
		if tombsRead {
			return errors.New("series record after the tombstones")
		}
		ss, err := decodeSnapSeries(&db)
		if err != nil {
			return err
		}
		cs.series = append(cs.series, ss)
	case snapRecTombstones:
		if tombsRead {
			return errors.New("second tombstones record")
		}
		b := db.UvarintBytes()
		if db.Failed() {
			break
		}
		if err := decodeSnapTombstones(b, cs.tombs); err != nil {
			return err
		}
		cs.tombsRead = true
	case snapRecExemplars:
		if !tombsRead {
			return errors.New("exemplars record before the tombstones")
		}
		// The body is an Exemplars record's (Prometheus's layout).
		b := append([]byte{byte(record.Exemplars)}, rec[1:]...)
		var dec record.Decoder
		var err error
		if cs.exemplars, err = dec.Exemplars(b, cs.exemplars); err != nil {
			return err
		}
		return nil
	case snapRecIsotsdbOnly:
		cs.promExact = false
	default:
		return fmt.Errorf("unknown record type %d", typ)
	}
	if db.Len() > 0 && !db.Failed() {
		return fmt.Errorf("%d bytes left in record", db.Len())
	}
	return db.Err()
}

// decodeSnapSeries reads a series record after its type byte, and checks
// its chunk: a known encoding, decodable, at least one sample, times
// increasing from mint to maxt.
func decodeSnapSeries(db *encoding.Decbuf) (snapSeries, error) {
	var ss snapSeries
	var dec record.Decoder
	ss.ref = db.Be64()
	lset, err := dec.ReadLabels(db)
	if err != nil {
		return ss, err
	}
	ss.lset = lset
	_ = db.Be64() // the chunk range, unused (Prometheus writes 0)
	if db.Uvarint() == 0 || db.Failed() {
		return ss, db.Err()
	}
	ss.mint, ss.maxt = int64(db.Be64()), int64(db.Be64())
	enc := chunks.Encoding(db.Byte())
	b := db.UvarintBytes()
	if db.Failed() {
		return ss, db.Err()
	}
	c, err := chunks.FromData(enc, append([]byte(nil), b...))
	if err != nil {
		return ss, fmt.Errorf("series %d: %w", ss.ref, err)
	}
	switch enc {
	case chunks.EncXOR, chunks.EncXOR2:
		db.Skip(4 * 16) // the last samples: Prometheus reads only the last value
	case chunks.EncHistogram, chunks.EncHistogramST:
		_ = record.ReadHistogram(db)
	case chunks.EncFloatHistogram, chunks.EncFloatHistogramST:
		_ = record.ReadFloatHistogram(db)
	default:
		return ss, fmt.Errorf("series %d: chunk encoding %s", ss.ref, enc)
	}
	n, first, last := 0, int64(0), int64(0)
	it := c.Iterator(nil)
	for it.Next() != chunks.ValNone {
		t := it.AtT()
		if n > 0 && t <= last {
			return ss, fmt.Errorf("series %d: chunk times not increasing", ss.ref)
		}
		if n == 0 {
			first = t
		}
		last = t
		n++
	}
	switch {
	case it.Err() != nil:
		return ss, fmt.Errorf("series %d: %w", ss.ref, it.Err())
	case n == 0 || first != ss.mint || last != ss.maxt:
		return ss, fmt.Errorf("series %d: chunk of %d samples does not span [%d, %d]", ss.ref, n, ss.mint, ss.maxt)
	}
	ss.chunk = c
	return ss, nil
}

// decodeSnapTombstones reads Prometheus's snapshot encoding of tombstones.
func decodeSnapTombstones(b []byte, into map[SeriesRef]tombstones.Intervals) error {
	db := encoding.NewDecbuf(b)
	if v := db.Byte(); v != tombstoneFormatV1 && !db.Failed() {
		return fmt.Errorf("tombstones format %d", v)
	}
	for db.Len() > 0 && !db.Failed() {
		ref, mint, maxt := db.Uvarint(), db.Varint(), db.Varint()
		if !db.Failed() && mint <= maxt {
			into[SeriesRef(ref)] = into[SeriesRef(ref)].Add(tombstones.Interval{Mint: mint, Maxt: maxt})
		}
	}
	return db.Err()
}

// decodeSnapSamples appends the samples of a SamplesV2 or histogram V2
// record to out as the WAL replay takes them.
func decodeSnapSamples(dec *record.Decoder, rec []byte, out *[]walSample) error {
	switch record.RecordType(rec) {
	case record.SamplesV2:
		ss, err := dec.Samples(rec, nil)
		for _, s := range ss {
			ws := walSample{ref: s.Ref, t: s.T, v: s.V}
			if s.ST != 0 {
				ws.x = &walExtra{st: s.ST}
			}
			*out = append(*out, ws)
		}
		return err
	case record.HistogramSamplesV2:
		hs, err := dec.HistogramSamples(rec, nil)
		for _, s := range hs {
			*out = append(*out, walSample{ref: s.Ref, t: s.T, x: &walExtra{st: s.ST, h: s.H}})
		}
		return err
	default:
		fhs, err := dec.FloatHistogramSamples(rec, nil)
		for _, s := range fhs {
			*out = append(*out, walSample{ref: s.Ref, t: s.T, x: &walExtra{st: s.ST, fh: s.FH}})
		}
		return err
	}
}

// check makes sure the snapshot describes a head: a tombstones record,
// series refs and label sets valid and unique, and every sample and
// mapped-chunks entry of a series it defines.
func (cs *chunkSnapshot) check() error {
	if !cs.tombsRead {
		return fmt.Errorf("%w: no tombstones record", errChunkSnapshot)
	}
	refs := make(map[uint64]struct{}, len(cs.series))
	byHash := make(map[uint64][]labels.Labels, len(cs.series))
	for _, s := range cs.series {
		if _, dup := refs[s.ref]; dup || s.ref == 0 || s.ref > cs.lastRef {
			return fmt.Errorf("%w: series ref %d repeated, 0 or above the last ref %d", errChunkSnapshot, s.ref, cs.lastRef)
		}
		refs[s.ref] = struct{}{}
		if err := validateLabels(s.lset); err != nil {
			return fmt.Errorf("%w: series %d: %w", errChunkSnapshot, s.ref, err)
		}
		h := s.lset.Hash()
		for _, o := range byHash[h] {
			if labels.Equal(o, s.lset) {
				return fmt.Errorf("%w: two series %s", errChunkSnapshot, s.lset)
			}
		}
		byHash[h] = append(byHash[h], s.lset)
	}
	for _, smps := range [][]walSample{cs.closed, cs.late} {
		for _, smp := range smps {
			if _, ok := refs[smp.ref]; !ok {
				return fmt.Errorf("%w: sample of unknown series %d", errChunkSnapshot, smp.ref)
			}
		}
	}
	for ref := range cs.mapped {
		if _, ok := refs[ref]; !ok {
			return fmt.Errorf("%w: mapped chunks of unknown series %d", errChunkSnapshot, ref)
		}
	}
	for _, m := range cs.meta {
		if _, ok := refs[m.Ref]; !ok {
			return fmt.Errorf("%w: metadata of unknown series %d", errChunkSnapshot, m.Ref)
		}
	}
	return nil
}

// appendSnapSeries appends the series record of s (ref, labels, open chunk
// c over [mint, maxt], nil if none) to b. lastV is the newest float, or
// lastH or lastFH the newest histogram, as Prometheus's loader wants.
func appendSnapSeries(b []byte, ref uint64, lset labels.Labels, c chunks.Chunk, mint, maxt int64, lastV float64, lastH *histogram.Histogram, lastFH *histogram.FloatHistogram) []byte {
	b = append(b, snapRecSeries)
	b = binary.BigEndian.AppendUint64(b, ref)
	b = record.AppendLabels(b, lset)
	b = binary.BigEndian.AppendUint64(b, 0) // the chunk range: unused
	if c == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, 1)
	b = binary.BigEndian.AppendUint64(b, uint64(mint))
	b = binary.BigEndian.AppendUint64(b, uint64(maxt))
	b = append(b, byte(c.Encoding()))
	b = binary.AppendUvarint(b, uint64(len(c.Bytes())))
	b = append(b, c.Bytes()...)
	switch c.Encoding() {
	case chunks.EncHistogram, chunks.EncHistogramST:
		if lastH == nil {
			lastH = &histogram.Histogram{}
		}
		b = record.AppendHistogram(b, lastH)
	case chunks.EncFloatHistogram, chunks.EncFloatHistogramST:
		if lastFH == nil {
			lastFH = &histogram.FloatHistogram{}
		}
		b = record.AppendFloatHistogram(b, lastFH)
	default:
		// Four (time, value) pairs, the last samples once; Prometheus
		// now reads only the last value.
		b = append(b, make([]byte, 3*16)...)
		b = binary.BigEndian.AppendUint64(b, uint64(maxt))
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(lastV))
	}
	return b
}

// appendSnapTombstones appends the tombstones record of t to b.
func appendSnapTombstones(b []byte, t *headTombstones) []byte {
	body := []byte{tombstoneFormatV1}
	if t != nil {
		for ref, ivs := range t.m {
			for _, iv := range ivs {
				body = binary.AppendUvarint(body, uint64(ref))
				body = binary.AppendVarint(body, iv.Mint)
				body = binary.AppendVarint(body, iv.Maxt)
			}
		}
	}
	b = append(b, snapRecTombstones)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// appendSnapExemplars appends an exemplars record holding es to b.
func appendSnapExemplars(b []byte, es []record.RefExemplar) []byte {
	start := len(b)
	b = record.Encoder{}.Exemplars(es, b)
	b[start] = snapRecExemplars // Prometheus's layout under its own type
	return b
}
