package headchunks

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"weak"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// maxKeptBuffer is the largest write buffer a file keeps between flushes.
// A head flushes a few hundred kilobytes of chunks at a time; a larger
// buffer (left by a long run of Adds without a Flush) is dropped rather
// than held for the life of the file.
const maxKeptBuffer = 1 << 20

// Options configures Open.
type Options struct {
	// MaxFileSize is the size a file may reach before the writer starts
	// the next one; 0 means DefaultMaxFileSize. It must be more than
	// HeaderSize and at most MaxFileSizeLimit. A record larger than the
	// limit gets a file of its own.
	MaxFileSize int64
}

// file is one live head chunk file: loaded by Open or started by Add.
type file struct {
	seq  uint32
	name string // path, for I/O and errors
	// size is the file's length once everything added is written: written
	// plus len(buf). The next record goes at this offset.
	size    int64
	written int64  // bytes written to the file, header included
	buf     []byte // bytes added but not written yet (the header first, for a new file)
	maxt    int64  // greatest maxt of the file's records; math.MinInt64 if none

	f     vfs.File // open for writing until its bytes are synced and it is finished; else nil
	dirty bool     // bytes written to f since its last Sync

	m      *mapping // newest mapping of the file; nil before the first Flush of a new file
	mapped int64    // bytes of the file that Chunk may read through m: <= written
	// maps are every mapping of the file made so far (a file that grows
	// is mapped again at each Flush, and chunks keep the mapping they were
	// read from), weakly: a mapping no chunk references is closed by its
	// cleanup. Truncate evicts the pages of those still alive when it
	// removes the file.
	maps []weak.Pointer[mapping]
}

// setMapping makes mp, a mapping of the file's first n bytes, the newest.
func (f *file) setMapping(mp *mapping, n int64) {
	f.m, f.mapped = mp, n
	f.maps = slices.DeleteFunc(f.maps, func(p weak.Pointer[mapping]) bool { return p.Value() == nil })
	f.maps = append(f.maps, weak.Make(mp))
}

// evict drops the pages of every live mapping of the file from the
// process's resident set. Readers of its chunks fault them back in, so it
// is safe while they read; it is for a file just removed, whose chunks are
// no longer read except by queries already running (and which would
// otherwise stay resident until the last chunk is collected).
func (f *file) evict() {
	for _, p := range f.maps {
		if mp := p.Value(); mp != nil {
			mp.evict()
		}
	}
	f.maps = nil
}

// Writer appends records to head chunk files in a directory and reads
// chunks back by reference. Open returns it.
//
// It never appends to a file it did not start: the first Add after Open
// (and after Truncate) starts a new file, numbered one past the last.
//
// All methods are safe for concurrent use by multiple goroutines: Add,
// Flush, Sync, Truncate and Close take the Writer's lock exclusively; Chunk,
// Size and Files share it, so reads run in parallel with each other but not
// with writes.
//
// After a failed write or fsync the Writer is broken: its files may hold a
// torn record, so Add, Flush, Sync and Truncate report the failure again,
// Close only closes the files, and the next Open repairs them. Chunks
// already flushed stay readable.
type Writer struct {
	fsys    vfs.FS
	dir     string
	maxSize int64

	mu sync.RWMutex // protects the fields below
	// files are the live files, oldest first, with contiguous sequence
	// numbers; cur, if not nil, is the last of them.
	files []*file
	// cur is the file Add appends to; nil until the first Add, and after
	// Truncate finished it.
	cur      *file
	nextSeq  uint64 // sequence number of the next file started
	dirDirty bool   // files created or removed since the directory was last synced
	err      error  // first write or fsync error; once set, nothing more is written
	closed   bool
}

// Add appends the record of chunk c of series seriesRef, covering [mint,
// maxt], to an in-memory buffer, and returns the record's reference. It
// starts a new file first if the record would take the current one past
// the size limit. Nothing is written until Flush (or Sync, Truncate,
// Close); Chunk serves the reference once it has been flushed.
//
// c's bytes are copied; c may change afterwards. Add refuses, with an
// error wrapping ErrInvalidChunk, a record a reader would reject or stop
// at: an encoding chunks does not know (or with OutOfOrderFlag set), mint
// > maxt, a series ref, mint and maxt all zero (Prometheus's end-of-data
// marker), and a chunk of fewer than 4 bytes (an empty chunk; Prometheus
// rejects a file that ends in so short a record) or of 2 GiB or more.
func (w *Writer) Add(seriesRef uint64, mint, maxt int64, c chunks.Chunk) (ref uint64, err error) {
	enc, data := c.Encoding(), c.Bytes()
	switch {
	case !enc.IsKnown():
		return 0, fmt.Errorf("%w: unknown encoding %d", ErrInvalidChunk, uint8(enc))
	case mint > maxt:
		return 0, fmt.Errorf("%w: mint %d > maxt %d", ErrInvalidChunk, mint, maxt)
	case seriesRef == 0 && mint == 0 && maxt == 0:
		return 0, fmt.Errorf("%w: series ref, mint and maxt all zero", ErrInvalidChunk)
	case len(data) < minDataSize || len(data) > maxDataSize:
		return 0, fmt.Errorf("%w: %d bytes, want %d to %d", ErrInvalidChunk, len(data), minDataSize, maxDataSize)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked("add chunk"); err != nil {
		return 0, err
	}
	size := recordSize(len(data))
	if w.cur == nil || (w.cur.size > HeaderSize && w.cur.size+size > w.maxSize) {
		if err := w.cutLocked(); err != nil {
			return 0, err
		}
	}
	f := w.cur
	// f.size < w.maxSize <= MaxFileSizeLimit: f holds only its header, or
	// f.size+size <= w.maxSize with size > 0.
	ref = Ref(f.seq, uint32(f.size))
	f.buf = appendRecord(f.buf, seriesRef, mint, maxt, byte(enc), data)
	f.size += size
	f.maxt = max(f.maxt, maxt)
	return ref, nil
}

// RecordSize returns the bytes a chunk with dataLen bytes of data takes in
// a file, for Grow.
func RecordSize(dataLen int) int64 { return recordSize(dataLen) }

// Grow makes room in the write buffer for n more bytes of records (the
// sum of RecordSize of the chunks about to be added), so that a caller
// adding many chunks before a Flush has the buffer allocated once instead
// of regrown, and copied, as it fills. Records that go to a file cut
// later allocate their own. A closed or broken Writer ignores it.
func (w *Writer) Grow(n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.usableLocked("grow") != nil || n <= 0 {
		return
	}
	if w.cur == nil && w.cutLocked() != nil {
		return // Add reports it
	}
	f := w.cur
	n = min(n, w.maxSize-f.size)
	if n > 0 {
		f.buf = slices.Grow(f.buf, int(n))
	}
}

// usableLocked returns an error for op if the Writer is closed or broken.
func (w *Writer) usableLocked(op string) error {
	if w.closed {
		return fmt.Errorf("headchunks: %s: %w", op, ErrClosed)
	}
	if w.err != nil {
		return fmt.Errorf("headchunks: %s after an earlier failure: %w", op, w.err)
	}
	return nil
}

// cutLocked starts the next file in memory: its header goes to the buffer,
// and Flush creates it.
func (w *Writer) cutLocked() error {
	if w.nextSeq > math.MaxUint32 {
		return fmt.Errorf("headchunks: cannot start file %d: references hold 32-bit sequence numbers", w.nextSeq)
	}
	seq := uint32(w.nextSeq)
	w.nextSeq++
	f := &file{
		seq:  seq,
		name: filepath.Join(w.dir, FileName(int(seq))),
		size: HeaderSize,
		buf:  appendHeader(make([]byte, 0, 4096)),
		maxt: math.MinInt64,
	}
	w.files = append(w.files, f)
	w.cur = f
	return nil
}

// Flush writes the records added so far to their files, without syncing
// them, and maps each file written to anew, so that Chunk serves every
// reference Add returned before it. Older mappings stay alive while chunks
// read them.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked("flush"); err != nil {
		return err
	}
	return w.flushLocked()
}

// flushLocked writes every buffered byte and maps what is written.
// A failed write breaks the Writer; a failed Map does not (the next Flush
// maps again).
func (w *Writer) flushLocked() error {
	for _, f := range w.files {
		if len(f.buf) > 0 {
			if err := w.writeLocked(f); err != nil {
				w.err = err
				return err
			}
		}
		if f.mapped < f.written {
			m, err := w.fsys.Map(f.name)
			if err != nil {
				return fmt.Errorf("headchunks: map %s: %w", f.name, err)
			}
			mp := newMapping(m)
			if int64(len(mp.b)) < f.written {
				return fmt.Errorf("headchunks: map %s: %d bytes mapped, %d written", f.name, len(mp.b), f.written)
			}
			f.setMapping(mp, f.written)
		}
	}
	return nil
}

// writeLocked writes f's buffer to f, creating the file first if needed.
func (w *Writer) writeLocked(f *file) error {
	if f.f == nil {
		if f.written > 0 {
			// Only a file this Writer started has a buffer, and it stays
			// open until it has no more to write.
			return fmt.Errorf("headchunks: write %s: file already finished", f.name)
		}
		h, err := w.fsys.OpenFile(f.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return fmt.Errorf("headchunks: create file: %w", err)
		}
		f.f = h
		w.dirDirty = true
	}
	n, err := f.f.Write(f.buf)
	f.written += int64(n)
	f.dirty = true
	if err != nil {
		return fmt.Errorf("headchunks: write %s: %w", f.name, err)
	}
	if cap(f.buf) > maxKeptBuffer || f != w.cur {
		f.buf = nil // a finished file gets no more records
	} else {
		f.buf = f.buf[:0]
	}
	return nil
}

// Sync flushes (see Flush) and then makes every file written durable:
// it fsyncs each file written since the last Sync, closes the finished
// ones and syncs the directory if files were created.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked("sync"); err != nil {
		return err
	}
	return w.syncLocked()
}

// syncLocked is Sync with the lock held. A failed fsync breaks the Writer:
// what the failed file holds on disk is unknown.
func (w *Writer) syncLocked() error {
	if err := w.flushLocked(); err != nil {
		return err
	}
	for _, f := range w.files {
		if f.f == nil {
			continue
		}
		if f.dirty {
			if err := f.f.Sync(); err != nil {
				w.err = fmt.Errorf("headchunks: sync %s: %w", f.name, err)
				return w.err
			}
			f.dirty = false
		}
		if f != w.cur {
			h := f.f
			f.f = nil
			if err := h.Close(); err != nil {
				return fmt.Errorf("headchunks: close %s: %w", f.name, err)
			}
		}
	}
	return w.syncDirLocked()
}

// syncDirLocked syncs the directory if files were created or removed
// since it was last synced.
func (w *Writer) syncDirLocked() error {
	if !w.dirDirty {
		return nil
	}
	if err := w.fsys.SyncDir(w.dir); err != nil {
		return fmt.Errorf("headchunks: sync directory: %w", err)
	}
	w.dirDirty = false
	return nil
}

// Truncate drops the files no longer needed for data at or after mint.
// It first finishes the current file if it holds records (the next Add
// starts a new one) and syncs everything (see Sync). Then it removes,
// oldest first, the files whose every record has maxt < mint, stopping at
// the first file that has a later one, so that the remaining files stay
// numbered without gaps. It syncs the directory and returns how many files
// it removed.
//
// Removing a file unmaps nothing: chunks read from it earlier stay valid
// (see the package documentation). Chunk no longer serves its references.
func (w *Writer) Truncate(mint int64) (removed int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked("truncate"); err != nil {
		return 0, err
	}
	if w.cur != nil && w.cur.size > HeaderSize {
		w.cur = nil // syncLocked closes it as a finished file
	}
	if err := w.syncLocked(); err != nil {
		return 0, err
	}
	for len(w.files) > 0 {
		f := w.files[0]
		if f == w.cur || f.maxt >= mint {
			break
		}
		if err := w.fsys.Remove(f.name); err != nil {
			return removed, errors.Join(fmt.Errorf("headchunks: remove %s: %w", f.name, err), w.syncDirLocked())
		}
		f.evict()
		w.files[0] = nil
		w.files = w.files[1:]
		w.dirDirty = true
		removed++
	}
	return removed, w.syncDirLocked()
}

// Chunk returns the chunk whose record starts at ref, reading the newest
// mapping of its file in place; the chunk keeps that mapping alive (see the
// package documentation). Its encoding is the stored one without
// OutOfOrderFlag.
//
// A reference returned by Add but not flushed yet yields an error wrapping
// ErrNotFlushed; one naming no live file, or an offset in a file's header,
// past its end or on its zero tail, one wrapping ErrInvalidRef. A record
// that does not check out (torn, checksum mismatch, or ref pointing
// inside a record rather than at its start) yields a *corrupt.Error naming
// the file and offset.
func (w *Writer) Chunk(ref uint64) (chunks.Chunk, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	f, off, err := w.refFileLocked(ref)
	if err != nil {
		return nil, err
	}
	if int64(off) >= f.mapped {
		if int64(off) < f.size {
			return nil, fmt.Errorf("%w: ref %#x in %s", ErrNotFlushed, ref, f.name)
		}
		return nil, fmt.Errorf("%w %#x: offset %d past the end of %s", ErrInvalidRef, ref, off, f.name)
	}
	rec, end, cerr := parseRecord(f.name, f.m.b[:f.mapped], int(off))
	if cerr != nil {
		return nil, cerr
	}
	if end {
		return nil, fmt.Errorf("%w %#x: offset %d is in the zero tail of %s", ErrInvalidRef, ref, off, f.name)
	}
	c, cerr := rec.chunk(f.name, int(off), f.m)
	if cerr != nil {
		return nil, cerr
	}
	return c, nil
}

// Added returns the chunk of record ref, which this Writer added for a chunk
// of encoding enc and dataLen bytes and has flushed since, reading the
// mapping in place as Chunk does. Unlike Chunk it does not parse or check
// the record: it computes where the data lies from dataLen, so it touches
// none of the file's pages. Reading a page of a mapping makes it part of
// the process's resident set, and a head maps its closed chunks long before
// anything reads them (most never are before they are truncated).
//
// A ref Chunk would reject, or one not flushed yet, yields the same errors
// as Chunk; a record of another encoding or length is the caller's bug and
// is not detected. Only XOR chunks are built without reading their bytes;
// other encodings are checked as Chunk checks them.
func (w *Writer) Added(ref uint64, enc chunks.Encoding, dataLen int) (chunks.Chunk, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	f, off, err := w.refFileLocked(ref)
	if err != nil {
		return nil, err
	}
	end := int64(off) + recordSize(dataLen)
	if end > f.mapped {
		if end <= f.size {
			return nil, fmt.Errorf("%w: ref %#x in %s", ErrNotFlushed, ref, f.name)
		}
		return nil, fmt.Errorf("%w %#x: record of %d bytes past the end of %s", ErrInvalidRef, ref, dataLen, f.name)
	}
	start := int(off) + metaSize + uvarintLen(uint64(dataLen))
	stop := start + dataLen
	b := f.m.b[start:stop:stop]
	if enc == chunks.EncXOR {
		return &mappedXOR{b: b, m: f.m}, nil
	}
	c, err := chunks.FromData(enc, b)
	if err != nil {
		return nil, corrupt.At(f.name, int64(off), err)
	}
	return &mappedChunk{Chunk: c, m: f.m}, nil
}

// refFileLocked returns the live file ref points into and the offset in
// it, after the checks Chunk and Added share: the Writer is open, the file
// is live, the offset is past the header. Requires w.mu held.
func (w *Writer) refFileLocked(ref uint64) (*file, uint32, error) {
	if w.closed {
		return nil, 0, fmt.Errorf("headchunks: read chunk %#x: %w", ref, ErrClosed)
	}
	seq, off := SplitRef(ref)
	f := w.fileLocked(seq)
	if f == nil {
		return nil, 0, fmt.Errorf("%w %#x: no file %s", ErrInvalidRef, ref, FileName(int(seq)))
	}
	if off < HeaderSize {
		return nil, 0, fmt.Errorf("%w %#x: offset %d in the header of %s", ErrInvalidRef, ref, off, f.name)
	}
	return f, off, nil
}

// fileLocked returns the live file with sequence number seq, or nil.
func (w *Writer) fileLocked(seq uint32) *file {
	if len(w.files) == 0 || seq < w.files[0].seq {
		return nil
	}
	i := uint64(seq - w.files[0].seq)
	if i >= uint64(len(w.files)) {
		return nil
	}
	return w.files[i]
}

// Size returns the total size in bytes of the live files, counting records
// added but not flushed yet.
func (w *Writer) Size() int64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	var n int64
	for _, f := range w.files {
		n += f.size
	}
	return n
}

// Files returns the number of live files, counting one started by Add but
// not flushed yet.
func (w *Writer) Files() int {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return len(w.files)
}

// Close flushes and syncs everything (see Sync), closes the files, removes
// a current file that holds only its header, and syncs the directory.
// Chunks returned earlier stay valid. Closing again returns nil; every
// other method then returns an error wrapping ErrClosed.
//
// If the Writer is broken, Close only closes the files and returns an
// error wrapping the earlier failure.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	defer func() {
		// Drop the Writer's references to the mappings: chunks handed out
		// hold their own, and nothing else needs them now.
		for _, f := range w.files {
			f.m, f.mapped = nil, 0
		}
	}()
	if w.err != nil {
		for _, f := range w.files {
			if f.f != nil {
				_ = f.f.Close() // the broken write is the error that matters
				f.f = nil
			}
		}
		return fmt.Errorf("headchunks: close after an earlier failure: %w", w.err)
	}
	err := w.syncLocked()
	for _, f := range w.files {
		if f.f == nil {
			continue
		}
		if cerr := f.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("headchunks: close %s: %w", f.name, cerr)
		}
		f.f = nil
	}
	// Add starts a file only with a record, so this is a safeguard: a file
	// holding only its header is not left behind.
	if cur := w.cur; err == nil && cur != nil && cur.size == HeaderSize && cur.written > 0 {
		if err := w.fsys.Remove(cur.name); err != nil {
			return fmt.Errorf("headchunks: remove empty file %s: %w", cur.name, err)
		}
		w.files = w.files[:len(w.files)-1]
		w.dirDirty = true
		err = w.syncDirLocked()
	}
	w.cur = nil
	return err
}
