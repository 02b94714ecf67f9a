package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/encoding"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// postingsSample is how often the in-memory copy of the postings offset
// table keeps a label value: a lookup decodes at most postingsSample-1
// entries of the table. The first and last value of every name are kept.
const postingsSample = 32

// Reader reads an index file held in memory (normally memory-mapped). Opening
// checks the header, the TOC and the checksums of the symbol table and the
// postings offset table; postings lists and series entries are checked when
// read. No length read from the file is trusted before it is checked
// against the data that is really there, so damaged files yield a
// *corrupt.Error, never a panic.
//
// A Reader is safe for concurrent use, except Close, which must come after
// every other use. Postings it returns and strings it passes to the
// ScratchBuilder in Series alias the file's memory and are only valid until
// Close; every other string it returns is a copy.
type Reader struct {
	b       []byte
	file    string
	closer  io.Closer
	version int
	toc     toc
	end     uint64 // offset of the TOC: every section lies before it

	seriesEnd uint64 // end of the series section

	symbols symbolTable
	// nameSyms caches the strings of label name symbols, which make up
	// half of all symbol lookups of Series.
	nameSyms map[uint32]string

	postingsTable []byte // entries of the postings offset table
	postingsBase  int64  // file offset of postingsTable[0]
	// postings holds, per label name, a sample of its entries in the
	// postings offset table. names holds the names, sorted, except "".
	postings map[string][]postingsSampleEntry
	names    []string
}

// postingsSampleEntry is a label value and where its entry starts in
// Reader.postingsTable.
type postingsSampleEntry struct {
	value string
	off   int
}

// NewReader returns a Reader over the index file contents b, which must not
// change while the Reader is in use.
func NewReader(b []byte) (*Reader, error) {
	return newReader(b, "", nil)
}

// NewFileReader opens the index file at path through fsys.Map.
func NewFileReader(fsys vfs.FS, path string) (*Reader, error) {
	m, err := fsys.Map(path)
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	r, err := newReader(m.Bytes(), path, m)
	if err != nil {
		return nil, errors.Join(err, m.Close())
	}
	return r, nil
}

func newReader(b []byte, file string, closer io.Closer) (*Reader, error) {
	r := &Reader{b: b, file: file, closer: closer}
	if len(b) < headerLen+tocLen {
		return nil, r.corrupt(0, fmt.Errorf("file of %d bytes is too short", len(b)))
	}
	if m := binary.BigEndian.Uint32(b); m != MagicIndex {
		return nil, r.corrupt(0, fmt.Errorf("bad magic %#x", m))
	}
	r.version = int(b[4])
	if r.version != FormatV2 && r.version != FormatV3 {
		return nil, fmt.Errorf("%w: %d in %s", ErrUnsupportedVersion, r.version, r.fileName())
	}
	if err := r.readTOC(); err != nil {
		return nil, err
	}
	if err := r.readSymbols(); err != nil {
		return nil, err
	}
	if err := r.readPostingsTable(); err != nil {
		return nil, err
	}
	r.nameSyms = make(map[uint32]string, len(r.names))
	for _, n := range r.names {
		if i, ok := r.symbols.reverseLookup([]byte(n)); ok {
			r.nameSyms[i] = n
		}
	}
	return r, nil
}

func (r *Reader) fileName() string {
	if r.file == "" {
		return "<memory>"
	}
	return r.file
}

// corrupt returns the error of damaged index data at off.
func (r *Reader) corrupt(off int64, err error) error {
	return corrupt.At(r.file, off, err)
}

// corruptIn returns the error of damaged data in the structure what that
// starts at off: err with what for context if a Decbuf located the damage
// already (at the field that failed), else a *corrupt.Error at off.
func (r *Reader) corruptIn(off int64, what string, err error) error {
	if _, _, ok := corrupt.Locate(err); ok {
		return fmt.Errorf("index: %s: %w", what, err)
	}
	return r.corrupt(off, fmt.Errorf("%s: %w", what, err))
}

func (r *Reader) readTOC() error {
	r.end = uint64(len(r.b) - tocLen)
	t := r.b[r.end:]
	if crc32.Checksum(t[:tocLen-4], castagnoli) != binary.BigEndian.Uint32(t[tocLen-4:]) {
		return r.corrupt(int64(r.end), fmt.Errorf("TOC: %w", ErrChecksum))
	}
	offs := make([]uint64, 6)
	for i := range offs {
		offs[i] = binary.BigEndian.Uint64(t[8*i:])
		// Zero marks an absent section.
		if offs[i] != 0 && (offs[i] < headerLen || offs[i] > r.end) {
			return r.corrupt(int64(r.end)+8*int64(i), fmt.Errorf("TOC entry %d: offset %d outside the file", i, offs[i]))
		}
	}
	r.toc = toc{offs[0], offs[1], offs[2], offs[3], offs[4], offs[5]}
	// The series section ends where the next section starts.
	r.seriesEnd = r.end
	for _, o := range offs {
		if o > r.toc.series && o < r.seriesEnd {
			r.seriesEnd = o
		}
	}
	return nil
}

// section returns the contents of the section whose 4-byte length starts
// at off, after checking its bounds and CRC32C.
func (r *Reader) section(off uint64, what string) ([]byte, error) {
	if off > r.end || r.end-off < 8 {
		return nil, r.corrupt(int64(off), fmt.Errorf("%s: %w", what, errShort))
	}
	size := uint64(binary.BigEndian.Uint32(r.b[off:]))
	if size > r.end-off-8 {
		return nil, r.corrupt(int64(off), fmt.Errorf("%s: length %d exceeds the file: %w", what, size, errShort))
	}
	data := r.b[off+4 : off+4+size]
	if crc32.Checksum(data, castagnoli) != binary.BigEndian.Uint32(r.b[off+4+size:]) {
		return nil, r.corrupt(int64(off), fmt.Errorf("%s: %w", what, ErrChecksum))
	}
	return data, nil
}

func (r *Reader) readSymbols() error {
	if r.toc.symbols == 0 {
		return nil
	}
	data, err := r.section(r.toc.symbols, "symbol table")
	if err != nil {
		return err
	}
	if len(data) < 4 {
		return r.corrupt(int64(r.toc.symbols), fmt.Errorf("symbol table: %w", errShort))
	}
	r.symbols, err = newSymbolTable(data[4:], r.file, int64(r.toc.symbols)+8, binary.BigEndian.Uint32(data))
	if err != nil {
		return r.corruptIn(int64(r.toc.symbols), "symbol table", err)
	}
	return nil
}

// postingsEntryAt decodes the postings offset table entry at off.
func (r *Reader) postingsEntryAt(off int) (name, value []byte, postingsOff uint64, next int, err error) {
	d := encoding.NewDecbuf(r.postingsTable[off:])
	if k := d.Uvarint(); k != 2 && !d.Failed() {
		return nil, nil, 0, 0, fmt.Errorf("entry with %d keys", k)
	}
	name = d.UvarintBytes()
	value = d.UvarintBytes()
	postingsOff = d.Uvarint()
	if d.Failed() {
		return nil, nil, 0, 0, d.ErrIn(r.file, r.postingsBase+int64(off))
	}
	return name, value, postingsOff, off + d.Offset(), nil
}

func (r *Reader) readPostingsTable() error {
	r.postings = make(map[string][]postingsSampleEntry)
	if r.toc.postingsTable == 0 {
		return nil
	}
	data, err := r.section(r.toc.postingsTable, "postings offset table")
	if err != nil {
		return err
	}
	if len(data) < 4 {
		return r.corrupt(int64(r.toc.postingsTable), fmt.Errorf("postings offset table: %w", errShort))
	}
	count := binary.BigEndian.Uint32(data)
	r.postingsTable = data[4:]
	r.postingsBase = int64(r.toc.postingsTable) + 8
	// Every entry takes at least 4 bytes, which bounds the allocations.
	if uint64(count) > uint64(len(r.postingsTable))/4 {
		return r.corrupt(int64(r.toc.postingsTable), fmt.Errorf("postings offset table of %d bytes claims %d entries", len(data), count))
	}
	var (
		prevName, prevValue []byte
		cur                 []postingsSampleEntry // samples of the current name
		nValues             int                   // entries of the current name so far
		lastOff             int                   // offset of the previous entry
		off                 int
	)
	// flush stores the samples of the name that just ended, adding its last
	// value when the sampling skipped it.
	flush := func() {
		if nValues == 0 {
			return
		}
		if (nValues-1)%postingsSample != 0 {
			cur = append(cur, postingsSampleEntry{string(prevValue), lastOff})
		}
		name := string(prevName)
		r.postings[name] = slices.Clip(cur)
		if name != allPostingsName {
			r.names = append(r.names, name)
		}
		cur, nValues = nil, 0
	}
	for i := range count {
		name, value, _, next, err := r.postingsEntryAt(off)
		if err != nil {
			return r.corruptIn(r.postingsBase+int64(off), fmt.Sprintf("postings offset table entry %d", i), err)
		}
		if i > 0 {
			c := bytes.Compare(name, prevName)
			if c < 0 || (c == 0 && bytes.Compare(value, prevValue) <= 0) {
				return r.corrupt(r.postingsBase+int64(off), fmt.Errorf("postings offset table entry %d out of order", i))
			}
			if c > 0 {
				flush()
			}
		}
		if nValues%postingsSample == 0 {
			cur = append(cur, postingsSampleEntry{string(value), off})
		}
		nValues++
		prevName, prevValue = name, value
		lastOff, off = off, next
	}
	flush()
	if off != len(r.postingsTable) {
		return r.corrupt(r.postingsBase+int64(off), fmt.Errorf("%d bytes after the postings offset table entries", len(r.postingsTable)-off))
	}
	return nil
}

// Version returns the format version of the file.
func (r *Reader) Version() int { return r.version }

// Size returns the size of the index file in bytes.
func (r *Reader) Size() int64 { return int64(len(r.b)) }

// Close releases the file's memory. The Reader, and all postings obtained
// from it, must not be used afterwards.
func (r *Reader) Close() error {
	if r.b == nil {
		return ErrClosed
	}
	r.b = nil
	if r.closer != nil {
		if err := r.closer.Close(); err != nil {
			return fmt.Errorf("index: close %s: %w", r.fileName(), err)
		}
	}
	return nil
}

// Symbols returns an iterator over the symbol table, in order.
func (r *Reader) Symbols() StringIter {
	return &symbolIter{d: r.symbols.decbuf(0), file: r.symbols.file, base: r.symbols.base, left: r.symbols.count}
}

// NumSymbols returns the number of symbols in the symbol table.
func (r *Reader) NumSymbols() int { return int(r.symbols.count) }

// LookupSymbol returns the symbol with the given index.
func (r *Reader) LookupSymbol(i uint32) (string, error) {
	if r.b == nil {
		return "", ErrClosed
	}
	s, ok := r.symbols.lookup(i)
	if !ok {
		return "", fmt.Errorf("%w: symbol %d of %d", ErrNotFound, i, r.symbols.count)
	}
	return string(s), nil
}

// LabelNames returns the sorted names of all labels in the index.
func (r *Reader) LabelNames() ([]string, error) {
	if r.b == nil {
		return nil, ErrClosed
	}
	return slices.Clone(r.names), nil
}

// SortedLabelValues returns the sorted values of the label name. It
// implements PostingsReader.
func (r *Reader) SortedLabelValues(name string) ([]string, error) {
	if r.b == nil {
		return nil, ErrClosed
	}
	if name == allPostingsName {
		return nil, nil
	}
	e := r.postings[name]
	if len(e) == 0 {
		return nil, nil
	}
	values := make([]string, 0, (len(e)-1)*postingsSample+1)
	err := r.walkValues(e, e[0].off, func(v []byte, _ uint64) bool {
		values = append(values, string(v))
		return true
	})
	return values, err
}

// ForEachValue calls f for every value of the label name, in sorted
// order, with the series carrying it. It stops at and returns the first
// error f returns. The value passed to f is a copy f may keep.
func (r *Reader) ForEachValue(name string, f func(value string, p Postings) error) error {
	if r.b == nil {
		return ErrClosed
	}
	e := r.postings[name]
	if len(e) == 0 || name == allPostingsName {
		return nil
	}
	var err error
	werr := r.walkValues(e, e[0].off, func(v []byte, po uint64) bool {
		var p Postings
		if p, err = r.postingsList(po); err != nil {
			return false
		}
		err = f(string(v), p)
		return err == nil
	})
	if werr != nil {
		return werr
	}
	return err
}

// walkValues calls f with each value and postings offset of the entries
// of one label name, whose samples are e, starting at the entry at off,
// until f returns false or the name's last entry is passed.
func (r *Reader) walkValues(e []postingsSampleEntry, off int, f func(value []byte, postingsOff uint64) bool) error {
	lastOff := e[len(e)-1].off
	for off <= lastOff {
		_, v, po, next, err := r.postingsEntryAt(off)
		if err != nil {
			return r.corruptIn(r.postingsBase+int64(off), "postings offset table", err)
		}
		if !f(v, po) {
			return nil
		}
		off = next
	}
	return nil
}

// postingsList returns the postings list at the given offset.
func (r *Reader) postingsList(off uint64) (Postings, error) {
	if off > r.end {
		return nil, r.corrupt(int64(min(off, math.MaxInt64)), fmt.Errorf("postings list: offset beyond the file: %w", errShort))
	}
	p, err := decodePostingsList(r.b[:r.end], off)
	if err != nil {
		return nil, r.corrupt(int64(off), fmt.Errorf("postings list: %w", err))
	}
	return p, nil
}

// AllPostings returns the references of all series. It implements
// PostingsReader.
func (r *Reader) AllPostings() (Postings, error) {
	return r.Postings(allPostingsName, allPostingsValue)
}

// Postings returns the union of the postings lists of name=v for each v in
// values, in any order. It implements PostingsReader. For sorted values it
// makes a single pass over the name's part of the postings offset table.
func (r *Reader) Postings(name string, values ...string) (Postings, error) {
	if r.b == nil {
		return nil, ErrClosed
	}
	e := r.postings[name]
	if len(e) == 0 || len(values) == 0 {
		return EmptyPostings(), nil
	}
	if !slices.IsSorted(values) {
		values = slices.Clone(values)
		slices.Sort(values)
	}
	its := make([]Postings, 0, len(values))
	lastOff := e[len(e)-1].off
	cursor := -1 // entry to continue from; its value is <= the next one sought
	for i, v := range values {
		if i > 0 && v == values[i-1] {
			continue
		}
		if v < e[0].value || v > e[len(e)-1].value {
			continue
		}
		// Start at the last sample <= v, unless the cursor is already past it.
		j := sort.Search(len(e), func(j int) bool { return e[j].value > v }) - 1
		if cursor < e[j].off {
			cursor = e[j].off
		}
		for cursor <= lastOff {
			_, val, po, next, err := r.postingsEntryAt(cursor)
			if err != nil {
				return nil, r.corruptIn(r.postingsBase+int64(cursor), "postings offset table", err)
			}
			c := strings.Compare(yoloString(val), v)
			if c > 0 {
				break
			}
			cursor = next
			if c == 0 {
				p, err := r.postingsList(po)
				if err != nil {
					return nil, err
				}
				its = append(its, p)
				break
			}
		}
	}
	return Merge(its...), nil
}

// PostingsForLabelMatching returns the union of the postings lists of the
// values of name for which match returns true.
func (r *Reader) PostingsForLabelMatching(name string, match func(value string) bool) (Postings, error) {
	if r.b == nil {
		return nil, ErrClosed
	}
	e := r.postings[name]
	if len(e) == 0 || name == allPostingsName {
		return EmptyPostings(), nil
	}
	var (
		its []Postings
		err error
	)
	werr := r.walkValues(e, e[0].off, func(v []byte, po uint64) bool {
		if !match(yoloString(v)) {
			return true
		}
		var p Postings
		if p, err = r.postingsList(po); err != nil {
			return false
		}
		its = append(its, p)
		return true
	})
	if werr != nil {
		return nil, werr
	}
	if err != nil {
		return nil, err
	}
	return Merge(its...), nil
}

// Series decodes the series with reference ref (its offset in the file
// divided by 16, as found in postings lists): its labels go to builder
// (after a Reset) and, unless chks is nil, its chunks replace the contents
// of *chks. The strings given to builder alias the file's memory; call
// builder.Labels(), which copies them, before closing the Reader.
func (r *Reader) Series(ref uint64, builder *labels.ScratchBuilder, chks *[]ChunkMeta) error {
	if r.b == nil {
		return ErrClosed
	}
	if ref > r.seriesEnd/seriesAlign || ref*seriesAlign < r.toc.series || ref*seriesAlign >= r.seriesEnd || r.toc.series == 0 {
		return fmt.Errorf("%w: series %d in %s", ErrNotFound, ref, r.fileName())
	}
	off := ref * seriesAlign
	d := encoding.NewDecbuf(r.b[off:r.seriesEnd])
	size := d.Uvarint()
	if !d.Failed() && (size > uint64(d.Len()) || uint64(d.Len())-size < 4) {
		d.Failf("entry of %d bytes and its CRC run past the series section: %w", size, encoding.ErrShort)
	}
	if d.Failed() {
		return r.corruptIn(int64(off), "series", d.ErrIn(r.file, int64(off)))
	}
	bodyOff := int64(off) + int64(d.Offset())
	b := d.Bytes()
	body := b[:size]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[size:]) {
		return r.corrupt(int64(off), fmt.Errorf("series: %w", ErrChecksum))
	}
	if err := r.decodeSeries(body, bodyOff, builder, chks); err != nil {
		return r.corruptIn(int64(off), "series", err)
	}
	return nil
}

// decodeSeries decodes the body of a series entry, b, which starts at
// offset base of the file.
func (r *Reader) decodeSeries(b []byte, base int64, builder *labels.ScratchBuilder, chks *[]ChunkMeta) error {
	builder.Reset()
	d := encoding.NewDecbuf(b)
	k := d.Uvarint()
	if k > uint64(d.Len())/2 {
		return fmt.Errorf("%d labels in %d bytes", k, len(b))
	}
	var prevName string
	for i := range k {
		ni, vi := d.Uvarint32(), d.Uvarint32()
		if d.Failed() {
			return d.ErrIn(r.file, base)
		}
		name, ok := r.nameSyms[ni]
		if !ok {
			nb, ok := r.symbols.lookup(ni)
			if !ok {
				return fmt.Errorf("label %d: unknown name symbol %d", i, ni)
			}
			name = yoloString(nb)
		}
		if i > 0 && name <= prevName {
			return fmt.Errorf("label %d: name %q not after %q", i, name, prevName)
		}
		prevName = name
		vb, ok := r.symbols.lookup(vi)
		if !ok {
			return fmt.Errorf("label %d: unknown value symbol %d", i, vi)
		}
		builder.Add(name, yoloString(vb))
	}
	if chks == nil {
		return d.ErrIn(r.file, base)
	}
	*chks = (*chks)[:0]
	k = d.Uvarint()
	if d.Failed() {
		return d.ErrIn(r.file, base)
	}
	// A chunk takes at least 3 bytes, which bounds the allocation.
	if k > uint64(d.Len())/3 {
		return fmt.Errorf("%d chunks in %d bytes", k, d.Len())
	}
	if k == 0 {
		if d.Len() != 0 {
			return fmt.Errorf("%d bytes after the chunks", d.Len())
		}
		return nil
	}
	*chks = slices.Grow(*chks, int(k))
	mint := d.Varint()
	maxt := mint + int64(d.Uvarint())
	ref := d.Uvarint()
	*chks = append(*chks, ChunkMeta{Ref: ref, MinTime: mint, MaxTime: maxt})
	for i := uint64(1); i < k; i++ {
		mint = maxt + int64(d.Uvarint())
		maxt = mint + int64(d.Uvarint())
		ref += uint64(d.Varint())
		*chks = append(*chks, ChunkMeta{Ref: ref, MinTime: mint, MaxTime: maxt})
	}
	if d.Failed() {
		*chks = (*chks)[:0]
		return d.ErrIn(r.file, base)
	}
	if d.Len() != 0 {
		return fmt.Errorf("%d bytes after the chunks", d.Len())
	}
	return nil
}

// yoloString returns b as a string without copying; b must not change
// while the string is in use.
func yoloString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
