package index

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strings"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// Format constants.
const (
	// MagicIndex starts every index file.
	MagicIndex = 0xBAAAD700
	// FormatV2 is the format version the Writer writes.
	FormatV2 = 2
	// FormatV3 is read like FormatV2; it only promises that the unused
	// label index sections are absent.
	FormatV3 = 3

	headerLen   = 5       // magic and version
	tocLen      = 6*8 + 4 // six section offsets and a CRC32C
	seriesAlign = 16      // series entries start at multiples of this
	// maxSeriesOffset is the highest offset a series can start at: its
	// reference, offset/16, must fit the 4-byte entries of postings lists.
	maxSeriesOffset = math.MaxUint32 * seriesAlign
)

// ChunkMeta is what the index records about one chunk of a series.
type ChunkMeta struct {
	// Ref locates the chunk in the block's chunk files: the upper 4 bytes
	// are the segment file's index, the lower 4 the byte offset in it.
	Ref uint64
	// MinTime and MaxTime are the timestamps of the first and last sample.
	MinTime, MaxTime int64
}

// toc holds the section offsets of the table of contents, in file order.
type toc struct {
	symbols, series, labelIndices, labelIndicesTable, postings, postingsTable uint64
}

type writerStage uint8

const (
	stageSymbols writerStage = iota // AddSymbol may be called
	stageSeries                     // symbols written; AddSeries may be called
	stageClosed
)

// Writer writes an index file. Its methods must be called in order: every
// symbol with AddSymbol, sorted; then every series with AddSeries, sorted
// by label set; then Close. A Writer is not safe for concurrent use. After
// any error the Writer is unusable; Close still releases the file.
//
// The file is written sequentially through a buffer. Memory use is the
// symbol table, a map entry per distinct label pair, and 4 bytes per label
// of every series (the pair it is), plus another 4 per label while Close
// lays out the postings lists. Grow saves the copies of growing these.
type Writer struct {
	f    vfs.File
	path string
	bw   *bufio.Writer
	pos  uint64 // bytes written so far
	err  error  // first failure; sticky

	stage writerStage
	toc   toc

	symbols   []string          // all symbols, in order
	symbolIdx map[string]uint32 // symbol -> its index in symbols

	hasSeries  bool
	lastSeries labels.Labels
	lastRef    uint64
	// The postings, which Close builds from what AddSeries records in flat
	// slices (a map of growing lists per label pair costs several times the
	// 4 bytes per label that the lists themselves take). pairs numbers the
	// distinct (name, value) label pairs, keyed by name symbol << 32 | value
	// symbol, in order of first appearance; counts[p] is the number of
	// series with pair p. occ holds the pair number of every label of every
	// series, in the order added; ids is every series' reference (offset/16)
	// and ends[i] where the labels of series ids[i] end in occ.
	pairs  map[uint64]uint32
	counts []uint32
	occ    []uint32
	ids    []uint32
	ends   []uint32

	buf  []byte   // scratch for encoding entries
	syms []uint32 // scratch for AddSeries
}

// NewWriter creates (or truncates) the index file at path and writes its
// header. The caller publishes the file (for example by renaming its
// directory) after a successful Close.
func NewWriter(fsys vfs.FS, path string) (*Writer, error) {
	f, err := fsys.Create(path)
	if err != nil {
		return nil, fmt.Errorf("index: create %s: %w", path, err)
	}
	w := &Writer{
		f:     f,
		path:  path,
		bw:    bufio.NewWriterSize(f, 1<<20),
		pairs: make(map[uint64]uint32, 1<<10),
		buf:   make([]byte, 0, 1024),
	}
	var hdr [headerLen]byte
	binary.BigEndian.PutUint32(hdr[:], MagicIndex)
	hdr[4] = FormatV2
	if err := w.write(hdr[:]); err != nil {
		_ = f.Close()
		return nil, err
	}
	return w, nil
}

// write appends b to the file, keeping pos and the sticky error.
func (w *Writer) write(b []byte) error {
	if w.err != nil {
		return w.err
	}
	n, err := w.bw.Write(b)
	w.pos += uint64(n)
	if err != nil {
		w.err = fmt.Errorf("index: write %s: %w", w.path, err)
	}
	return w.err
}

// zeros is padding. A package variable: a local array would escape to the
// heap through the buffered writer, once per series.
var zeros [seriesAlign]byte

// pad writes zero bytes up to the next multiple of align.
func (w *Writer) pad(align uint64) error {
	if r := w.pos % align; r != 0 {
		return w.write(zeros[:align-r])
	}
	return w.err
}

// fail records err as the sticky error and returns it.
func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// AddSymbol adds s to the symbol table. Symbols must be added in strictly
// increasing order, before any series, and must include every label name
// and value of every series.
func (w *Writer) AddSymbol(s string) error {
	if w.err != nil {
		return w.err
	}
	switch w.stage {
	case stageClosed:
		return ErrClosed
	case stageSeries:
		return fmt.Errorf("%w: symbol %q added after series", ErrOutOfOrder, s)
	}
	if n := len(w.symbols); n > 0 && s <= w.symbols[n-1] {
		return fmt.Errorf("%w: symbol %q after %q", ErrOutOfOrder, s, w.symbols[n-1])
	}
	if len(w.symbols) == math.MaxUint32 {
		return fmt.Errorf("%w: more than %d symbols", ErrTooLarge, uint32(math.MaxUint32))
	}
	if w.symbolIdx == nil {
		w.symbolIdx = make(map[string]uint32, 1<<12)
	}
	w.symbolIdx[s] = uint32(len(w.symbols))
	w.symbols = append(w.symbols, s)
	return nil
}

// SetSymbols makes sorted the symbol table, in place of AddSymbol calls:
// a caller that collects the symbols in a map anyway saves the Writer a
// second one. sorted must be strictly increasing, and index must map each
// of its strings to its position in sorted and hold nothing else. The
// Writer takes both over. No symbol may have been added before, and none
// may be added after.
func (w *Writer) SetSymbols(sorted []string, index map[string]uint32) error {
	if w.err != nil {
		return w.err
	}
	switch w.stage {
	case stageClosed:
		return ErrClosed
	case stageSeries:
		return fmt.Errorf("%w: symbols set after series", ErrOutOfOrder)
	}
	if len(w.symbols) > 0 {
		return fmt.Errorf("%w: symbols set after AddSymbol", ErrOutOfOrder)
	}
	if uint64(len(sorted)) > math.MaxUint32 {
		return fmt.Errorf("%w: more than %d symbols", ErrTooLarge, uint32(math.MaxUint32))
	}
	if len(index) != len(sorted) {
		return fmt.Errorf("%w: index of %d symbols for %d", ErrUnknownSymbol, len(index), len(sorted))
	}
	for i, s := range sorted {
		if i > 0 && s <= sorted[i-1] {
			return fmt.Errorf("%w: symbol %q after %q", ErrOutOfOrder, s, sorted[i-1])
		}
		if j, ok := index[s]; !ok || j != uint32(i) {
			return fmt.Errorf("%w: symbol %q at %d, index says %d", ErrUnknownSymbol, s, i, j)
		}
	}
	w.symbols, w.symbolIdx = sorted, index
	return nil
}

// writeSymbols writes the symbol table and moves to stageSeries.
func (w *Writer) writeSymbols() error {
	size := uint64(4) // count
	for _, s := range w.symbols {
		size += uint64(uvarintStrLen(s))
	}
	if size > math.MaxUint32 {
		return w.fail(fmt.Errorf("%w: symbol table of %d bytes", ErrTooLarge, size))
	}
	w.toc.symbols = w.pos
	b := binary.BigEndian.AppendUint32(w.buf[:0], uint32(size))
	if err := w.write(b); err != nil {
		return err
	}
	b = binary.BigEndian.AppendUint32(b[:0], uint32(len(w.symbols)))
	crc := crc32.Update(0, castagnoli, b)
	for _, s := range w.symbols {
		if len(b) >= flushAt {
			if err := w.write(b); err != nil {
				return err
			}
			b = b[:0]
		}
		start := len(b)
		b = appendUvarintStr(b, s)
		crc = crc32.Update(crc, castagnoli, b[start:])
	}
	b = binary.BigEndian.AppendUint32(b, crc)
	w.buf = b[:0]
	if err := w.write(b); err != nil {
		return err
	}
	w.stage = stageSeries
	w.toc.series = w.pos
	return nil
}

// AddSeries adds a series with its chunks. Series must be added in strictly
// increasing order of their label sets, and ref, the caller's identifier of
// the series, must strictly increase too; in the file the series is known by
// its offset divided by 16 instead. Label names must be non-empty and
// unique. The chunks must be sorted by time and must not overlap.
func (w *Writer) AddSeries(ref uint64, lset labels.Labels, chks ...ChunkMeta) error {
	if w.err != nil {
		return w.err
	}
	switch w.stage {
	case stageClosed:
		return ErrClosed
	case stageSymbols:
		if err := w.writeSymbols(); err != nil {
			return err
		}
	}
	if w.hasSeries {
		if labels.Compare(lset, w.lastSeries) <= 0 {
			return fmt.Errorf("%w: series %s after %s", ErrOutOfOrder, lset, w.lastSeries)
		}
		if ref <= w.lastRef {
			return fmt.Errorf("%w: series reference %d after %d", ErrOutOfOrder, ref, w.lastRef)
		}
	}
	for i, c := range chks {
		if c.MaxTime < c.MinTime {
			return fmt.Errorf("%w: series %s chunk %d: maxt %d < mint %d", ErrInvalidChunk, lset, i, c.MaxTime, c.MinTime)
		}
		if i > 0 && c.MinTime <= chks[i-1].MaxTime {
			return fmt.Errorf("%w: series %s chunk %d: mint %d not after previous maxt %d", ErrInvalidChunk, lset, i, c.MinTime, chks[i-1].MaxTime)
		}
	}

	// Encode the entry body before writing anything, so a bad label set
	// leaves the file untouched.
	b := binary.AppendUvarint(w.buf[:0], uint64(lset.Len()))
	var (
		err      error
		prevName string
		first    = true
		syms     = w.syms[:0]
	)
	lset.Range(func(l labels.Label) {
		if err != nil {
			return
		}
		if l.Name == "" {
			err = fmt.Errorf("%w: empty label name in %s", ErrInvalidLabels, lset)
			return
		}
		if !first && strings.Compare(l.Name, prevName) <= 0 {
			err = fmt.Errorf("%w: duplicate label name %q in %s", ErrInvalidLabels, l.Name, lset)
			return
		}
		first, prevName = false, l.Name
		n, ok := w.symbolIdx[l.Name]
		if !ok {
			err = fmt.Errorf("%w: label name %q", ErrUnknownSymbol, l.Name)
			return
		}
		v, ok := w.symbolIdx[l.Value]
		if !ok {
			err = fmt.Errorf("%w: label value %q", ErrUnknownSymbol, l.Value)
			return
		}
		syms = append(syms, n, v)
		b = binary.AppendUvarint(b, uint64(n))
		b = binary.AppendUvarint(b, uint64(v))
	})
	if err != nil {
		w.buf = b[:0]
		return err
	}
	b = binary.AppendUvarint(b, uint64(len(chks)))
	if len(chks) > 0 {
		c := chks[0]
		b = binary.AppendVarint(b, c.MinTime)
		b = binary.AppendUvarint(b, uint64(c.MaxTime-c.MinTime))
		b = binary.AppendUvarint(b, c.Ref)
		for i := 1; i < len(chks); i++ {
			prev, c := chks[i-1], chks[i]
			b = binary.AppendUvarint(b, uint64(c.MinTime-prev.MaxTime))
			b = binary.AppendUvarint(b, uint64(c.MaxTime-c.MinTime))
			b = binary.AppendVarint(b, int64(c.Ref-prev.Ref))
		}
	}
	w.buf = b[:0]
	w.syms = syms[:0]

	if err := w.pad(seriesAlign); err != nil {
		return err
	}
	if w.pos > maxSeriesOffset {
		return w.fail(fmt.Errorf("%w: series at offset %d", ErrTooLarge, w.pos))
	}
	id := uint32(w.pos / seriesAlign)

	var hdr [binary.MaxVarintLen64]byte
	if err := w.write(binary.AppendUvarint(hdr[:0], uint64(len(b)))); err != nil {
		return err
	}
	if err := w.write(b); err != nil {
		return err
	}
	if err := w.write(binary.BigEndian.AppendUint32(hdr[:0], crc32.Checksum(b, castagnoli))); err != nil {
		return err
	}

	if uint64(len(w.occ))+uint64(len(syms)/2) > math.MaxUint32 {
		return w.fail(fmt.Errorf("%w: more than %d labels in all series", ErrTooLarge, uint32(math.MaxUint32)))
	}
	for i := 0; i < len(syms); i += 2 {
		key := uint64(syms[i])<<32 | uint64(syms[i+1])
		p, ok := w.pairs[key]
		if !ok {
			p = uint32(len(w.counts))
			w.pairs[key] = p
			w.counts = append(w.counts, 0)
		}
		w.counts[p]++
		w.occ = append(w.occ, p)
	}
	w.ids = append(w.ids, id)
	w.ends = append(w.ends, uint32(len(w.occ)))
	w.hasSeries = true
	w.lastSeries = lset
	w.lastRef = ref
	return nil
}

// Grow reserves room for series more series with labels labels in all,
// so that a caller who knows the size of the index saves AddSeries the
// copies of growing its bookkeeping. It is only a hint.
func (w *Writer) Grow(series, labels int) {
	if series > 0 {
		w.ids = slices.Grow(w.ids, series)
		w.ends = slices.Grow(w.ends, series)
	}
	if labels > 0 {
		w.occ = slices.Grow(w.occ, labels)
	}
}

// Close writes the postings lists of every label pair and of all series,
// the postings offset table and the table of contents, then syncs and
// closes the file. It returns the first error of the Writer's life.
func (w *Writer) Close() error {
	if w.stage == stageClosed {
		return ErrClosed
	}
	err := w.finish()
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("index: close %s: %w", w.path, cerr)
	}
	w.stage = stageClosed
	w.pairs, w.counts, w.occ, w.ids, w.ends = nil, nil, nil, nil, nil
	w.symbolIdx, w.symbols = nil, nil
	return err
}

func (w *Writer) finish() error {
	if w.err != nil {
		return w.err
	}
	if w.stage == stageSymbols {
		if err := w.writeSymbols(); err != nil {
			return err
		}
	}
	if err := w.pad(4); err != nil {
		return err
	}
	// No label index sections: their TOC entries mark where they would
	// end, which is where the postings start, as Prometheus does.
	w.toc.labelIndices = w.pos
	w.toc.postings = w.pos

	allOff, err := w.writePostingsList(w.ids)
	if err != nil {
		return err
	}
	keys, offs, err := w.writePairPostings()
	if err != nil {
		return err
	}
	if err := w.writePostingsTable(allOff, keys, offs); err != nil {
		return err
	}
	if err := w.writeTOC(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return w.fail(fmt.Errorf("index: write %s: %w", w.path, err))
	}
	if err := w.f.Sync(); err != nil {
		return w.fail(fmt.Errorf("index: sync %s: %w", w.path, err))
	}
	return nil
}

// writePairPostings writes the postings list of every label pair, in
// order of name then value, and returns the pairs' keys (name symbol << 32
// | value symbol) in that order with the offsets of their lists. Symbol
// indices sort like the symbols themselves, so the keys sort like the
// pairs. It drops what AddSeries recorded as soon as it is used up.
func (w *Writer) writePairPostings() (keys, offs []uint64, err error) {
	keys = make([]uint64, len(w.counts))
	for k, p := range w.pairs {
		keys[p] = k
	}
	w.pairs = nil
	// order: pair numbers sorted by key.
	order := make([]uint32, len(keys))
	for p := range order {
		order[p] = uint32(p)
	}
	slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(keys[a], keys[b]) })
	// Lay the lists out in refs in that order: next[p] is where the next
	// reference of pair p goes. Series were added in order, so every list
	// comes out increasing.
	next := w.counts
	var at uint32
	for _, p := range order {
		at, next[p] = at+next[p], at
	}
	refs := make([]uint32, len(w.occ))
	var start uint32
	for i, id := range w.ids {
		for _, p := range w.occ[start:w.ends[i]] {
			refs[next[p]] = id
			next[p]++
		}
		start = w.ends[i]
	}
	w.occ, w.ids, w.ends, w.counts = nil, nil, nil, nil
	// next[p] is now the end of pair p's list, the start of the next one
	// in order.
	offs = make([]uint64, len(order))
	sorted := make([]uint64, len(order))
	start = 0
	for i, p := range order {
		off, err := w.writePostingsList(refs[start:next[p]])
		if err != nil {
			return nil, nil, err
		}
		offs[i], sorted[i] = off, keys[p]
		start = next[p]
	}
	return sorted, offs, nil
}

// writePostingsList writes one postings list, 4-byte aligned, and returns
// its offset.
func (w *Writer) writePostingsList(refs []uint32) (uint64, error) {
	if err := w.pad(4); err != nil {
		return 0, err
	}
	off := w.pos
	b, err := encodePostingsList(w.buf[:0], refs, w.write)
	w.buf = b[:0]
	if err != nil {
		return 0, w.fail(err)
	}
	return off, nil
}

// writePostingsTable writes the postings offset table: the list of all
// series at allOff, then the pair keys[i] (as from writePairPostings) at
// offs[i].
func (w *Writer) writePostingsTable(allOff uint64, keys, offs []uint64) error {
	w.toc.labelIndicesTable = w.pos
	w.toc.postingsTable = w.pos
	entry := func(i int) (name, value string, off uint64) {
		if i == 0 {
			return allPostingsName, allPostingsValue, allOff
		}
		k := keys[i-1]
		return w.symbols[k>>32], w.symbols[uint32(k)], offs[i-1]
	}
	n := 1 + len(keys)
	size := uint64(4)
	for i := range n {
		name, value, off := entry(i)
		size += 1 + uint64(uvarintStrLen(name)+uvarintStrLen(value)+uvarintLen(off))
	}
	if size > math.MaxUint32 {
		return w.fail(fmt.Errorf("%w: postings offset table of %d bytes", ErrTooLarge, size))
	}
	b := binary.BigEndian.AppendUint32(w.buf[:0], uint32(size))
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	crc := crc32.Update(0, castagnoli, b[4:])
	for i := range n {
		name, value, off := entry(i)
		if len(b) >= flushAt {
			if err := w.write(b); err != nil {
				return err
			}
			b = b[:0]
		}
		start := len(b)
		b = append(b, 2) // number of strings in the key
		b = appendUvarintStr(b, name)
		b = appendUvarintStr(b, value)
		b = binary.AppendUvarint(b, off)
		crc = crc32.Update(crc, castagnoli, b[start:])
	}
	b = binary.BigEndian.AppendUint32(b, crc)
	w.buf = b[:0]
	return w.write(b)
}

func (w *Writer) writeTOC() error {
	b := w.buf[:0]
	for _, v := range [...]uint64{w.toc.symbols, w.toc.series, w.toc.labelIndices, w.toc.labelIndicesTable, w.toc.postings, w.toc.postingsTable} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	w.buf = b[:0]
	return w.write(b)
}
