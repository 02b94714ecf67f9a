package check

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"path/filepath"
	"slices"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
)

// checkSeriesChunks checks the chunk metadata of one series and the
// chunks it refers to.
func (bc *blockCheck) checkSeriesChunks(lset labels.Labels, metas []index.ChunkMeta) {
	rp := bc.c.rp
	name := ""
	series := func() string {
		if name == "" {
			name = lset.String()
		}
		return name
	}
	if len(metas) == 0 {
		rp.warnf(filepath.Join(bc.dir, indexFilename), -1, series(), nil, "series has no chunks")
		return
	}
	for i, m := range metas {
		bc.sum.Chunks++
		bc.refs = append(bc.refs, m.Ref)
		file, off := bc.chunkFile(m.Ref)
		switch {
		case m.MinTime > m.MaxTime:
			rp.errorf(file, off, series(), nil, "chunk %d has minTime %d > maxTime %d in the index", i, m.MinTime, m.MaxTime)
			bc.damaged = true
		case i > 0 && m.MinTime <= metas[i-1].MaxTime:
			rp.errorf(file, off, series(), nil, "chunk %d [%d, %d] overlaps or precedes chunk %d [%d, %d]",
				i, m.MinTime, m.MaxTime, i-1, metas[i-1].MinTime, metas[i-1].MaxTime)
			bc.damaged = true
		case m.MinTime < bc.mint || m.MaxTime >= bc.maxt:
			rp.errorf(file, off, series(), nil, "chunk %d [%d, %d] is not inside the block's range [%d, %d)",
				i, m.MinTime, m.MaxTime, bc.mint, bc.maxt)
			bc.damaged = true
		}
		if bc.sr == nil {
			continue
		}
		c, err := bc.sr.Chunk(m.Ref)
		if err != nil {
			rp.fromErr(Error, file, off, series(), err, "chunk %d (ref %d) does not read", i, m.Ref)
			bc.damaged = true
			continue
		}
		bc.checkSamples(c, m, i, file, off, series)
	}
}

// checkSamples decodes one chunk and checks its samples against the
// chunk's range from the index and the block's range. Histogram samples
// (of either histogram encoding) must also be valid histograms, stale
// markers excepted, and a histogram chunk must end with its last sample:
// a sample count in its header that is too small leaves bytes over.
func (bc *blockCheck) checkSamples(c chunks.Chunk, m index.ChunkMeta, i int, file string, off int64, series func() string) {
	rp := bc.c.rp
	bc.it = c.Iterator(bc.it)
	it := bc.it
	var first, last int64
	n := 0
	for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
		t := it.AtT()
		switch {
		case n > 0 && t <= last:
			rp.errorf(file, off, series(), nil, "chunk %d: sample %d at %d is not after the one before at %d", i, n, t, last)
		case t < m.MinTime || t > m.MaxTime:
			rp.errorf(file, off, series(), nil, "chunk %d: sample %d at %d is outside the chunk's range [%d, %d] in the index",
				i, n, t, m.MinTime, m.MaxTime)
		case t < bc.mint || t >= bc.maxt:
			rp.errorf(file, off, series(), nil, "chunk %d: sample %d at %d is outside the block's range [%d, %d)", i, n, t, bc.mint, bc.maxt)
		default:
			if err := bc.validHistogram(it, vt); err != nil {
				rp.errorf(file, off, series(), err, "chunk %d: %s sample %d at %d is not a valid histogram", i, vt, n, t)
				break
			}
			if n == 0 {
				first = t
			}
			last = t
			n++
			continue
		}
		bc.damaged = true
		return
	}
	bc.sum.Samples += uint64(n)
	if c.Encoding().IsHistogram() {
		bc.sum.HistogramChunks++
		bc.sum.HistogramSamples += uint64(n)
	}
	if err := it.Err(); err != nil {
		rp.fromErr(Error, file, off, series(), err, "chunk %d: sample %d does not decode", i, n)
		bc.damaged = true
		return
	}
	if err := histogramChunkEnd(c); err != nil {
		rp.fromErr(Error, file, off, series(), err, "chunk %d: its %d samples decode, but the chunk is malformed", i, n)
		bc.damaged = true
		return
	}
	switch {
	case n == 0:
		rp.errorf(file, off, series(), nil, "chunk %d holds no samples", i)
		bc.damaged = true
	case n != c.NumSamples():
		rp.errorf(file, off, series(), nil, "chunk %d: %d samples decode, its header counts %d", i, n, c.NumSamples())
		bc.damaged = true
	case first != m.MinTime || last != m.MaxTime:
		rp.warnf(file, off, series(), nil, "chunk %d: samples span [%d, %d], the index says [%d, %d]", i, first, last, m.MinTime, m.MaxTime)
	}
}

// staleNaN is the bit pattern of the float value that marks a series
// stale (Prometheus's value.StaleNaN). A histogram stale marker carries it
// as its Sum.
const staleNaN = value.StaleNaN

// validHistogram validates the histogram sample it is at, if it is at one
// of type vt, and returns the reason it is invalid. Stale markers are not
// validated. The decoded histograms are kept in bc for reuse.
func (bc *blockCheck) validHistogram(it chunks.Iterator, vt chunks.ValueType) error {
	switch vt {
	case chunks.ValHistogram:
		_, bc.h = it.AtHistogram(bc.h)
		if math.Float64bits(bc.h.Sum) == staleNaN {
			return nil
		}
		// A reused histogram keeps an empty, non-nil CustomValues after
		// one with custom bounds; Prometheus's iterator hands out nil,
		// which Validate requires of exponential schemas.
		if len(bc.h.CustomValues) == 0 {
			bc.h.CustomValues = nil
		}
		return bc.h.Validate()
	case chunks.ValFloatHistogram:
		_, bc.fh = it.AtFloatHistogram(bc.fh)
		if math.Float64bits(bc.fh.Sum) == staleNaN {
			return nil
		}
		if len(bc.fh.CustomValues) == 0 {
			bc.fh.CustomValues = nil
		}
		return bc.fh.Validate()
	}
	return nil
}

// histogramChunkEnd returns an error if c is a histogram chunk (of either
// encoding) whose bytes go on after its last sample, which a header
// counting too few samples makes them do, or whose padding bits are set,
// or whose layout has a span with a negative offset after the first.
// Opening an appender decodes the chunk to its end and checks exactly
// that: it copies the chunk's bytes first and never writes to them. Other
// chunks return nil.
func histogramChunkEnd(c chunks.Chunk) error {
	var err error
	switch c := c.(type) {
	case *chunks.HistogramChunk:
		_, err = c.Appender()
	case *chunks.FloatHistogramChunk:
		_, err = c.Appender()
	}
	return err
}

// chunkCastagnoli is the CRC-32C table of chunk records.
var chunkCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// scanChunkFiles reads every record of every chunk segment file in order,
// so that damage in chunks no series refers to is found too. Records that
// series refer to were verified by checkSeriesChunks; when the index could
// not be read (indexOK false) every record is verified here. Records that
// no series refers to are counted in one warning per file.
func (bc *blockCheck) scanChunkFiles(indexOK bool) {
	refs := slices.Clone(bc.refs)
	slices.Sort(refs)
	if d := len(refs) - len(slices.Compact(refs)); d > 0 {
		bc.c.rp.warnf(filepath.Join(bc.dir, indexFilename), -1, "", nil, "%d chunk references are shared by more than one chunk entry", d)
	}
	refs = slices.Compact(refs)
	ri := 0
	for seg, name := range bc.segFiles {
		path := filepath.Join(bc.chunksDir, name)
		m, err := bc.c.fs.Map(path)
		if err != nil {
			bc.c.rp.errorf(path, -1, "", err, "chunk file does not open")
			bc.damaged = true
			continue
		}
		b := m.Bytes()
		var unref scanUnreferenced
		switch {
		case len(b) > math.MaxUint32:
			bc.c.rp.errorf(path, -1, "", nil, "chunk file of %d bytes is larger than references can address", len(b))
			bc.damaged = true
		case validChunkHeader(b): // else NewSegmentReader reported it
			// Referenced records were verified by checkSeriesChunks if
			// the index and the chunk files could be read.
			ri, unref = bc.scanChunkRecords(path, seg, b, refs, ri, indexOK, indexOK && bc.sr != nil)
		}
		_ = m.Close()
		if unref.n > 0 {
			bc.c.rp.warnf(path, unref.first, "", nil, "%d chunks that no series refers to (first at the offset given)", unref.n)
		}
	}
}

// scanUnreferenced counts the records of a file no series refers to.
type scanUnreferenced struct {
	n     int
	first int64
}

// scanChunkRecords walks the records of segment file seg, whose header is
// valid. refs are the sorted chunk references of the index, of which
// refs[ri:] are not yet passed; it returns the new ri. indexOK says refs
// are all the references there are; with verified set, the records refs
// names were verified already and are not reported again.
func (bc *blockCheck) scanChunkRecords(path string, seg int, b []byte, refs []uint64, ri int, indexOK, verified bool) (int, scanUnreferenced) {
	var unref scanUnreferenced
	off := chunkseg.SegmentHeaderSize
	for off < len(b) {
		ref := chunkseg.BlockRef(uint32(seg), uint32(off))
		for ri < len(refs) && refs[ri] < ref {
			ri++
		}
		referenced := ri < len(refs) && refs[ri] == ref
		next, crcOK, ok := nextChunkRecord(b, off)
		if !ok {
			if !referenced || !verified {
				bc.c.rp.errorf(path, int64(off), "", nil, "chunk record runs past the end of the file or has a malformed length")
				bc.damaged = true
			}
			break
		}
		switch {
		case referenced && verified:
		case !crcOK:
			bc.c.rp.errorf(path, int64(off), "", nil, "chunk record checksum mismatch")
			bc.damaged = true
		case !knownEncoding(recordEncoding(b, off)):
			bc.c.rp.errorf(path, int64(off), "", nil, "chunk record has unknown encoding %d", recordEncoding(b, off))
			bc.damaged = true
		}
		if !referenced && indexOK {
			if unref.n == 0 {
				unref.first = int64(off)
			}
			unref.n++
		}
		off = next
	}
	return ri, unref
}

// nextChunkRecord parses the chunk record at b[off:]: length uvarint,
// encoding byte, data, CRC-32C of encoding and data. It returns the offset
// after the record, whether the checksum matches, and ok false if the
// record's length is malformed or runs past the end of b.
func nextChunkRecord(b []byte, off int) (next int, crcOK, ok bool) {
	n, k := binary.Uvarint(b[off:])
	if k <= 0 {
		return 0, false, false
	}
	rest := uint64(len(b) - off - k)
	if rest < 5 || n > rest-5 {
		return 0, false, false
	}
	start := off + k
	end := start + 1 + int(n) // end of the data
	want := binary.BigEndian.Uint32(b[end:])
	return end + 4, crc32.Checksum(b[start:end], chunkCastagnoli) == want, true
}

// recordEncoding returns the encoding byte of the chunk record at b[off:],
// which nextChunkRecord parsed.
func recordEncoding(b []byte, off int) chunks.Encoding {
	_, k := binary.Uvarint(b[off:])
	return chunks.Encoding(b[off+k])
}

// knownEncoding reports whether e is an encoding chunks.FromData reads.
func knownEncoding(e chunks.Encoding) bool {
	return e.IsKnown()
}

// validChunkHeader reports whether b starts with a valid segment header.
func validChunkHeader(b []byte) bool {
	return len(b) >= chunkseg.SegmentHeaderSize && binary.BigEndian.Uint32(b) == chunkseg.SegmentMagic &&
		b[4] == chunkseg.SegmentVersion && b[5] == 0 && b[6] == 0 && b[7] == 0
}
