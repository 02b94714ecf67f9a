// Package headchunks: TEMPORARY minimal stand-in for the head integration
// branch; replaced by the real package at merge.
package headchunks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

const (
	Magic              = 0x0130BC91
	HeaderSize         = 8
	DefaultMaxFileSize = 128 << 20
)

var ErrClosed = errors.New("headchunks: closed")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func Ref(seq, off uint32) uint64               { return uint64(seq)<<32 | uint64(off) }
func SplitRef(ref uint64) (seq, off uint32)    { return uint32(ref >> 32), uint32(ref) }
func FileName(seq int) string                  { return fmt.Sprintf("%06d", seq) }
func IsMapped(c chunks.Chunk) bool             { _, ok := c.(*mappedChunk); return ok }

type Options struct{ MaxFileSize int64 }

type LoadResult struct {
	Chunks, OutOfOrder, Files int
	Bytes                     int64
	Repaired                  error
}

type mapping struct {
	m vfs.Mapped
	b []byte
}

func newMapping(fsys vfs.FS, name string) (*mapping, error) {
	m, err := fsys.Map(name)
	if err != nil {
		return nil, err
	}
	mp := &mapping{m: m, b: m.Bytes()}
	runtime.AddCleanup(mp, func(m vfs.Mapped) { _ = m.Close() }, m)
	return mp, nil
}

type mappedChunk struct {
	chunks.Chunk
	m *mapping
}

func (c *mappedChunk) Compact() {}

type file struct {
	seq  int
	maxt int64
	size int64
	m    *mapping
}

type Writer struct {
	mu      sync.Mutex
	fsys    vfs.FS
	dir     string
	max     int64
	files   []*file
	cur     vfs.File
	curFile *file
	buf     []byte
	bufOff  int64
	closed  bool
}

func Open(fsys vfs.FS, dir string, opts Options, fn func(seriesRef uint64, mint, maxt int64, c chunks.Chunk) error) (*Writer, LoadResult, error) {
	var res LoadResult
	if err := fsys.MkdirAll(dir, 0o777); err != nil {
		return nil, res, err
	}
	if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
		return nil, res, err
	}
	w := &Writer{fsys: fsys, dir: dir, max: opts.MaxFileSize}
	if w.max == 0 {
		w.max = DefaultMaxFileSize
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, res, err
	}
	bad := false
	for _, e := range ents {
		seq, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if bad {
			_ = fsys.Remove(name)
			continue
		}
		mp, err := newMapping(fsys, name)
		if err != nil {
			return nil, res, err
		}
		f := &file{seq: seq, maxt: -1 << 63, m: mp}
		b := mp.b
		off := HeaderSize
		if len(b) < HeaderSize || binary.BigEndian.Uint32(b) != Magic {
			bad = true
			res.Repaired = corrupt.Errorf(name, 0, "bad header")
			_ = fsys.Remove(name)
			continue
		}
		for off < len(b) {
			if len(b)-off < 26 {
				break
			}
			ref := binary.BigEndian.Uint64(b[off:])
			mint := int64(binary.BigEndian.Uint64(b[off+8:]))
			maxt := int64(binary.BigEndian.Uint64(b[off+16:]))
			enc := b[off+24]
			if ref == 0 && mint == 0 && maxt == 0 && enc == 0 {
				break
			}
			n, k := binary.Uvarint(b[off+25:])
			if k <= 0 || uint64(len(b)-off-25-k) < n+4 {
				res.Repaired = corrupt.Errorf(name, int64(off), "torn")
				break
			}
			end := off + 25 + k + int(n)
			if crc32.Checksum(b[off:end], castagnoli) != binary.BigEndian.Uint32(b[end:]) {
				res.Repaired = corrupt.Errorf(name, int64(off), "crc")
				break
			}
			data := b[off+25+k : end : end]
			if enc&0x80 == 0 {
				c, err := chunks.FromData(chunks.Encoding(enc), data)
				if err != nil {
					res.Repaired = corrupt.At(name, int64(off), err)
					break
				}
				if err := fn(ref, mint, maxt, &mappedChunk{Chunk: c, m: mp}); err != nil {
					return nil, res, err
				}
				res.Chunks++
			}
			f.maxt = max(f.maxt, maxt)
			off = end + 4
		}
		if off < len(b) {
			if ff, err := fsys.OpenFile(name, 2, 0); err == nil {
				_ = ff.Truncate(int64(off))
				_ = ff.Sync()
				_ = ff.Close()
			}
		}
		if res.Repaired != nil {
			bad = true
		}
		f.size = int64(off)
		w.files = append(w.files, f)
	}
	return w, res, nil
}

func (w *Writer) Add(seriesRef uint64, mint, maxt int64, c chunks.Chunk) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	data := c.Bytes()
	need := int64(25 + binary.MaxVarintLen64 + len(data) + 4)
	if w.curFile == nil || w.curFile.size+int64(len(w.buf))+need > w.max {
		if err := w.cutLocked(); err != nil {
			return 0, err
		}
	}
	off := w.curFile.size + int64(len(w.buf))
	start := len(w.buf)
	w.buf = binary.BigEndian.AppendUint64(w.buf, seriesRef)
	w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(mint))
	w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(maxt))
	w.buf = append(w.buf, byte(c.Encoding()))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(data)))
	w.buf = append(w.buf, data...)
	w.buf = binary.BigEndian.AppendUint32(w.buf, crc32.Checksum(w.buf[start:], castagnoli))
	w.curFile.maxt = max(w.curFile.maxt, maxt)
	return Ref(uint32(w.curFile.seq), uint32(off)), nil
}

func (w *Writer) cutLocked() error {
	if err := w.flushLocked(); err != nil {
		return err
	}
	seq := 1
	if n := len(w.files); n > 0 {
		seq = w.files[n-1].seq + 1
	}
	f, err := w.fsys.Create(filepath.Join(w.dir, FileName(seq)))
	if err != nil {
		return err
	}
	hdr := []byte{0x01, 0x30, 0xBC, 0x91, 1, 0, 0, 0}
	if _, err := f.Write(hdr); err != nil {
		return err
	}
	if w.cur != nil {
		_ = w.cur.Sync()
		_ = w.cur.Close()
	}
	w.cur = f
	w.curFile = &file{seq: seq, maxt: -1 << 63, size: HeaderSize}
	w.files = append(w.files, w.curFile)
	return w.fsys.SyncDir(w.dir)
}

func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 || w.cur == nil {
		return nil
	}
	if _, err := w.cur.Write(w.buf); err != nil {
		return err
	}
	w.curFile.size += int64(len(w.buf))
	w.buf = w.buf[:0]
	mp, err := newMapping(w.fsys, filepath.Join(w.dir, FileName(w.curFile.seq)))
	if err != nil {
		return err
	}
	w.curFile.m = mp
	return nil
}

func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) Chunk(ref uint64) (chunks.Chunk, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seq, off := SplitRef(ref)
	for _, f := range w.files {
		if f.seq != int(seq) || f.m == nil {
			continue
		}
		b := f.m.b[off:]
		n, k := binary.Uvarint(b[25:])
		data := b[25+k : 25+k+int(n) : 25+k+int(n)]
		c, err := chunks.FromData(chunks.Encoding(b[24]), data)
		if err != nil {
			return nil, err
		}
		return &mappedChunk{Chunk: c, m: f.m}, nil
	}
	return nil, fmt.Errorf("headchunks: no chunk at %#x", ref)
}

func (w *Writer) Truncate(mint int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.curFile != nil && w.curFile.size > HeaderSize {
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
		_ = w.cur.Close()
		w.cur, w.curFile = nil, nil
	}
	n := 0
	for len(w.files) > 0 && w.files[0] != w.curFile && w.files[0].maxt < mint {
		if err := w.fsys.Remove(filepath.Join(w.dir, FileName(w.files[0].seq))); err != nil {
			return n, err
		}
		w.files = w.files[1:]
		n++
	}
	return n, w.fsys.SyncDir(w.dir)
}

func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flushLocked(); err != nil {
		return err
	}
	if w.cur != nil {
		return w.cur.Sync()
	}
	return nil
}

func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.flushLocked(); err != nil {
		return err
	}
	if w.cur != nil {
		if err := w.cur.Sync(); err != nil {
			return err
		}
		return w.cur.Close()
	}
	return nil
}

func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var s int64
	for _, f := range w.files {
		s += f.size
	}
	return s
}
func (w *Writer) Files() int { w.mu.Lock(); defer w.mu.Unlock(); return len(w.files) }
