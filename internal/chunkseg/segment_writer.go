package chunkseg

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/vfs"
)

// writeBufferSize is the size of the buffer in front of each segment file.
// Chunks are ~100-200 bytes each, so without it every chunk would cost
// three small writes; 1 MiB amortises the syscalls to noise while staying
// small next to the memory a compaction already uses.
const writeBufferSize = 1 << 20

// SegmentWriterOption configures NewSegmentWriter.
type SegmentWriterOption func(*segmentWriterOptions)

type segmentWriterOptions struct {
	maxSize int64
}

// WithMaxSegmentSize sets the size a segment file may reach before the
// writer starts the next one (DefaultMaxSegmentSize if not given). It must be
// greater than SegmentHeaderSize and at most MaxSegmentSize. Tests use small
// values to get many files.
func WithMaxSegmentSize(n int64) SegmentWriterOption {
	return func(o *segmentWriterOptions) { o.maxSize = n }
}

// SegmentWriter writes a block's chunks into numbered segment files
// 000001, 000002, ... in a chunks directory.
//
// A record never spans files. The writer starts a new file before a record
// that would take the current file past the size limit, unless the current
// file holds no chunk yet: a single chunk larger than the limit gets a file
// of its own, so the limit is exceeded only by such files. The size check
// uses each record's exact size, so a file may hold a few more chunks than
// Prometheus (which assumes 5-byte length fields) would put in it; readers
// do not care where files were cut.
//
// Files are written directly under their final names; publishing the block
// atomically (temporary directory, then rename) is the caller's job. After
// Close returns nil every file and directory entry written is durable.
//
// A SegmentWriter is not safe for concurrent use. After a failed write it is
// broken: WriteChunks and Close report the failure again and the files must
// be discarded.
type SegmentWriter struct {
	fsys    vfs.FS
	dir     string
	maxSize int64
	// syncDirs are the directories Close syncs: dir, then, if
	// NewSegmentWriter created dir, the parents of every directory it
	// created, so that their entries are durable too.
	syncDirs []string

	seq int           // segment files created so far; the current one is number seq, index seq-1
	f   vfs.File      // current segment file; nil before the first chunk and after Close
	bw  *bufio.Writer // buffers writes to f; nil until the first file is created
	n   int64         // bytes written to the current file, header included

	err     error // first write error; once set, nothing more is written
	closed  bool
	scratch [binary.MaxVarintLen64 + 1]byte
}

// NewSegmentWriter returns a writer of segment files in dir, a block's
// chunks directory, creating dir (and its parents) if it is missing. dir
// must not already hold segment files (names made only of digits): a reader
// would count them, and the references written here would point at the wrong
// files. That case yields an error wrapping fs.ErrExist.
//
// No file is created until the first chunk is written, so a block with no
// chunks has an empty chunks directory, as in Prometheus.
func NewSegmentWriter(fsys vfs.FS, dir string, opts ...SegmentWriterOption) (*SegmentWriter, error) {
	o := segmentWriterOptions{maxSize: DefaultMaxSegmentSize}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxSize <= SegmentHeaderSize || o.maxSize > MaxSegmentSize {
		return nil, fmt.Errorf("%w: max segment size %d not in (%d, %d]",
			ErrInvalidOption, o.maxSize, SegmentHeaderSize, int64(MaxSegmentSize))
	}

	w := &SegmentWriter{fsys: fsys, dir: dir, maxSize: o.maxSize, syncDirs: []string{dir}}
	switch _, err := fsys.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		// Find the directories MkdirAll will create: each one's entry
		// becomes durable only when its parent is synced.
		for d := dir; ; {
			parent := filepath.Dir(d)
			w.syncDirs = append(w.syncDirs, parent)
			if parent == d {
				break
			}
			if _, err := fsys.Stat(parent); err == nil {
				break
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("chunks: stat parent of chunks directory: %w", err)
			}
			d = parent
		}
		if err := fsys.MkdirAll(dir, 0o777); err != nil {
			return nil, fmt.Errorf("chunks: create chunks directory: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("chunks: stat chunks directory: %w", err)
	default:
		entries, err := fsys.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("chunks: read chunks directory: %w", err)
		}
		for _, e := range entries {
			if isSegmentFileName(e.Name()) {
				return nil, fmt.Errorf("chunks: %s already holds segment file %s: %w", dir, e.Name(), fs.ErrExist)
			}
		}
	}
	return w, nil
}

// WriteChunks appends the chunks to the segment files in order and sets
// each chks[i].Ref to where its chunk was written. Only Chunk is read (its
// chunks.Encoding and Bytes); MinTime and MaxTime are not stored in segment files.
//
// Every Chunk must be non-nil; otherwise nothing is written and the error
// wraps ErrNoChunk. On an I/O error the refs of the chunks not written are
// left unchanged and the writer is broken (see SegmentWriter).
func (w *SegmentWriter) WriteChunks(chks ...chunks.Meta) error {
	if w.closed {
		return fmt.Errorf("chunks: write chunks: %w", ErrClosed)
	}
	if w.err != nil {
		return fmt.Errorf("chunks: write chunks after an earlier failure: %w", w.err)
	}
	for i := range chks {
		if chks[i].Chunk == nil {
			return fmt.Errorf("chunks: write chunks: chunk %d of %d: %w", i, len(chks), ErrNoChunk)
		}
	}
	for i := range chks {
		if err := w.writeChunk(&chks[i]); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// writeChunk writes one record, first starting a new file if the record
// does not fit in the current one, and sets m.Ref.
func (w *SegmentWriter) writeChunk(m *chunks.Meta) error {
	enc, data := m.Chunk.Encoding(), m.Chunk.Bytes()
	size := recordSize(len(data))
	if w.f == nil || (w.n > SegmentHeaderSize && w.n+size > w.maxSize) {
		if err := w.cut(); err != nil {
			return err
		}
	}
	// w.n < MaxSegmentSize here: either the file holds only its header, or
	// w.n+size <= w.maxSize <= MaxSegmentSize with size > 0.
	ref := BlockRef(uint32(w.seq-1), uint32(w.n))

	k := binary.PutUvarint(w.scratch[:], uint64(len(data)))
	w.scratch[k] = byte(enc)
	if err := w.write(w.scratch[:k+1]); err != nil {
		return err
	}
	if err := w.write(data); err != nil {
		return err
	}
	if err := w.write(binary.BigEndian.AppendUint32(w.scratch[:0], chunkCRC(enc, data))); err != nil {
		return err
	}
	m.Ref = ref
	return nil
}

// write appends b to the current file through the buffer.
func (w *SegmentWriter) write(b []byte) error {
	n, err := w.bw.Write(b)
	w.n += int64(n)
	if err != nil {
		return fmt.Errorf("chunks: write segment file %s: %w", w.f.Name(), err)
	}
	return nil
}

// cut finishes the current file, if any, and starts the next one with its
// header.
func (w *SegmentWriter) cut() error {
	if err := w.finishFile(); err != nil {
		return err
	}
	if w.seq >= math.MaxUint32 {
		return fmt.Errorf("chunks: cannot start segment file %d: references hold 32-bit segment indexes", w.seq+1)
	}
	w.seq++
	name := filepath.Join(w.dir, SegmentFileName(w.seq))
	f, err := w.fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return fmt.Errorf("chunks: create segment file: %w", err)
	}
	w.f, w.n = f, 0
	if w.bw == nil {
		// A file is rarely larger than maxSize, so a bigger buffer is waste.
		w.bw = bufio.NewWriterSize(f, int(min(writeBufferSize, w.maxSize)))
	} else {
		w.bw.Reset(f)
	}
	var hdr [SegmentHeaderSize]byte
	binary.BigEndian.PutUint32(hdr[:], SegmentMagic)
	hdr[4] = SegmentVersion
	return w.write(hdr[:])
}

// finishFile flushes, syncs and closes the current file, if any. The file
// is closed even if flushing or syncing fails.
func (w *SegmentWriter) finishFile() error {
	f := w.f
	if f == nil {
		return nil
	}
	w.f = nil
	err := w.bw.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("chunks: finish segment file %s: %w", f.Name(), err)
	}
	return nil
}

// Close flushes and syncs the last file, closes it and syncs the chunks
// directory (and, if NewSegmentWriter created it, the parents of the
// directories it created). If a write
// failed earlier, Close only closes the file and returns an error wrapping
// that failure, so that a caller checking only Close does not publish
// incomplete files. Closing again returns nil.
func (w *SegmentWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	defer func() { w.bw = nil }()

	if w.err != nil {
		if w.f != nil {
			_ = w.f.Close() // the files are unusable; w.err is the error that matters
			w.f = nil
		}
		return fmt.Errorf("chunks: close segment writer after a failed write: %w", w.err)
	}
	if err := w.finishFile(); err != nil {
		return err
	}
	for _, d := range w.syncDirs {
		if err := w.fsys.SyncDir(d); err != nil {
			return fmt.Errorf("chunks: sync directory: %w", err)
		}
	}
	return nil
}
