package headchunks

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/vfs"
)

// LoadResult is what Open found in the directory.
type LoadResult struct {
	// Chunks is the number of in-order records passed to fn.
	Chunks int
	// OutOfOrder is the number of records skipped because their encoding
	// byte has OutOfOrderFlag set.
	OutOfOrder int
	// Files and Bytes are the number and total size of the files left
	// after repair.
	Files int
	Bytes int64
	// Repaired is the damage Open found and repaired, nil if none: the
	// file and offset where the valid data ends. A zero tail is not damage.
	Repaired *corrupt.Error
}

// candidate is a file of the directory whose name makes it a head chunk
// file.
type candidate struct {
	seq     uint32
	name    string // base name
	inRange bool   // the number fits in 32 bits
}

// Open loads the head chunk files in dir, creating dir if it is missing,
// and returns a Writer that adds files after them.
//
// It reads the files in sequence order, checks each file's header and
// every record (see the package documentation), and calls fn, if not nil,
// for each in-order record in file order. Records with OutOfOrderFlag set
// are counted and skipped. The chunk passed to fn reads the file's mapping
// in place and keeps it alive while the chunk is reachable; fn may keep
// it. An error from fn stops Open, which returns it wrapped, changing no
// file.
//
// Damage is repaired, not returned: a bad header, a torn or garbled
// record, a checksum mismatch, an unknown encoding, mint > maxt, a chunk
// chunks cannot decode, a sequence number out of range, or a gap in (or a
// repeat of) the sequence numbers. The files after the damaged one are
// removed, newest first; the damaged file is truncated to its last whole
// record, or removed if its header is bad or no record is left; and the
// directory is synced. LoadResult.Repaired holds the *corrupt.Error found.
// fn has by then seen the records before the damage, and only those.
// A file's zero tail (bytes from a record boundary to its end that are all
// zero) is the end of its data, not damage; it is left as it is.
//
// Every file that Open leaves opens cleanly in Prometheus.
func Open(fsys vfs.FS, dir string, opts Options, fn func(seriesRef uint64, mint, maxt int64, c chunks.Chunk) error) (*Writer, LoadResult, error) {
	var withRef RecordFunc
	if fn != nil {
		withRef = func(_, seriesRef uint64, mint, maxt int64, c chunks.Chunk) error {
			return fn(seriesRef, mint, maxt, c)
		}
	}
	return OpenRefs(fsys, dir, opts, withRef)
}

// RecordFunc is called by OpenRefs for each in-order record: ref is the
// record's reference (see Ref), which Writer.Chunk serves.
type RecordFunc func(ref, seriesRef uint64, mint, maxt int64, c chunks.Chunk) error

// OpenRefs is Open whose callback is also given each record's reference,
// for a caller that keeps references (and reads chunks with Writer.Chunk
// when needed) rather than the chunks themselves.
func OpenRefs(fsys vfs.FS, dir string, opts Options, fn RecordFunc) (*Writer, LoadResult, error) {
	maxSize := opts.MaxFileSize
	if maxSize == 0 {
		maxSize = DefaultMaxFileSize
	}
	if maxSize <= HeaderSize || maxSize > MaxFileSizeLimit {
		return nil, LoadResult{}, fmt.Errorf("%w: max file size %d not in (%d, %d]",
			ErrInvalidOption, maxSize, HeaderSize, int64(MaxFileSizeLimit))
	}
	if err := makeDir(fsys, dir); err != nil {
		return nil, LoadResult{}, err
	}
	w := &Writer{fsys: fsys, dir: dir, maxSize: maxSize, nextSeq: 1}
	files, remove, cut, res, err := scan(fsys, dir, fn)
	if err != nil {
		return nil, res, err
	}
	w.files = files
	if err := w.repair(remove, cut, res.Repaired); err != nil {
		return nil, res, err
	}
	if len(w.files) > 0 {
		w.nextSeq = uint64(w.files[len(w.files)-1].seq) + 1
	}
	res.Files = len(w.files)
	for _, f := range w.files {
		res.Bytes += f.size
	}
	return w, res, nil
}

// scan reads the files of dir in order, as Open does, calling fn for each
// in-order record, and stops at the first damage. files are the files
// loaded, each with its valid length (the last one may be damaged beyond
// it); remove are the files after them, which a repair removes; cut are
// the files loaded whose valid length is less than their length, which a
// repair cuts; res.Repaired is the damage, nil if there is none. It writes
// nothing.
func scan(fsys vfs.FS, dir string, fn RecordFunc) (files []*file, remove []candidate, cut []*file, res LoadResult, err error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, LoadResult{}, fmt.Errorf("headchunks: read directory: %w", err)
	}
	var cands []candidate
	for _, e := range entries {
		if seq, ok, inRange := parseFileName(e.Name()); ok {
			cands = append(cands, candidate{seq: seq, name: e.Name(), inRange: inRange})
		}
	}
	// Out-of-range numbers sort last: they come after every valid one.
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.inRange != b.inRange {
			if a.inRange {
				return -1
			}
			return 1
		}
		// Of two names of one number ("7", "000007"), the writer's own
		// comes first; the other is a repeat.
		return cmp.Or(cmp.Compare(a.seq, b.seq), compareBool(a.name != FileName(int(a.seq)), b.name != FileName(int(b.seq))), cmp.Compare(a.name, b.name))
	})

	// later is the index of the first candidate to remove; cut are the
	// files loaded whose valid length (f.size) is less than their length.
	later := len(cands)
	for i, c := range cands {
		path := filepath.Join(dir, c.name)
		if !c.inRange {
			res.Repaired = corrupt.Errorf(path, -1, "file number does not fit in 32 bits")
			later = i
			break
		}
		if i > 0 && uint64(c.seq) != uint64(cands[i-1].seq)+1 {
			res.Repaired = corrupt.Errorf(path, -1, "file number %d does not follow %d", c.seq, cands[i-1].seq)
			later = i
			break
		}
		f, n, cerr, err := loadFile(fsys, path, c.seq, &res, fn)
		if err != nil {
			return nil, nil, nil, res, err
		}
		if cerr != nil {
			res.Repaired, later = cerr, i+1
			if f == nil || n == HeaderSize {
				later = i // bad header, or no record left: remove the file too
				break
			}
		}
		if cerr != nil && n < f.mapped {
			// Only damage is cut away. A zero tail (Prometheus's
			// preallocation) stays: it is the end of the data for both
			// readers, and a directory without damage opens without a
			// write (an Open that then fails, on a WAL it cannot read,
			// changes nothing).
			cut = append(cut, f)
		}
		f.size, f.written, f.mapped = n, n, n
		files = append(files, f)
		if cerr != nil {
			break
		}
	}
	return files, cands[later:], cut, res, nil
}

// Verify reads the head chunk files in dir as Open does, checking every
// record, and writes nothing: it returns what Open would load (Files,
// Chunks, OutOfOrder and Bytes of the result) and, in Repaired, the
// damage Open would repair, nil if there is none. A missing directory
// holds no files. The error is for a directory or file that cannot be
// read.
func Verify(fsys vfs.FS, dir string) (LoadResult, error) {
	files, _, _, res, err := scan(fsys, dir, nil)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return LoadResult{}, nil
		}
		return res, err
	}
	res.Files = len(files)
	for _, f := range files {
		res.Bytes += f.size
	}
	return res, nil
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

// makeDir creates dir and any missing parents, and makes their entries
// durable by syncing the parent of each directory it created.
func makeDir(fsys vfs.FS, dir string) error {
	var created []string
	for d := dir; ; {
		_, err := fsys.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("headchunks: stat directory: %w", err)
		}
		created = append(created, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if len(created) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("headchunks: create directory: %w", err)
	}
	for _, d := range created {
		if err := fsys.SyncDir(filepath.Dir(d)); err != nil {
			return fmt.Errorf("headchunks: sync parent of %s: %w", d, err)
		}
	}
	return nil
}

// loadFile maps and scans one file, calling fn for its in-order records
// and counting them in res. It returns the file, nil if its header is bad,
// and n, the length of its whole records: the file's valid length. cerr
// is the damage found after them, if any; err is fn's error or a failure
// to map.
//
// f.mapped is set to the mapped length; the caller sets the sizes.
func loadFile(fsys vfs.FS, path string, seq uint32, res *LoadResult,
	fn RecordFunc,
) (f *file, n int64, cerr *corrupt.Error, err error) {
	m, err := fsys.Map(path)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("headchunks: map %s: %w", path, err)
	}
	mp := newMapping(m)
	b := mp.b
	if cerr := checkHeader(path, b); cerr != nil {
		runtime.KeepAlive(mp) // b must stay mapped while checkHeader reads it
		return nil, 0, cerr, nil
	}
	f = &file{seq: seq, name: path, maxt: math.MinInt64}
	f.setMapping(mp, int64(len(b)))
	// Parsing reads every page; a loaded chunk is read again only by a
	// query or a compaction, so the pages need not stay resident.
	defer mp.evict()
	off := HeaderSize
	for off < len(b) {
		rec, end, cerr := parseRecord(path, b, off)
		if cerr != nil {
			return f, int64(off), cerr, nil
		}
		if end {
			break
		}
		if rec.outOfOrder() {
			res.OutOfOrder++
		} else {
			c, cerr := rec.chunk(path, off, mp)
			if cerr != nil {
				return f, int64(off), cerr, nil
			}
			if fn != nil {
				if err := fn(Ref(seq, uint32(off)), rec.seriesRef, rec.mint, rec.maxt, c); err != nil {
					return nil, 0, nil, fmt.Errorf("headchunks: load %s at offset %d: %w", path, off, err)
				}
			}
			res.Chunks++
		}
		f.maxt = max(f.maxt, rec.maxt)
		off += rec.size
	}
	return f, int64(off), nil, nil
}

// repair removes the files of remove, newest first, so that an interrupted
// repair leaves contiguous numbers, and syncs the directory; then it cuts
// each file of cut to its size. damage is what made the repair necessary,
// for errors; nil when only zero tails are cut.
func (w *Writer) repair(remove []candidate, cut []*file, damage *corrupt.Error) error {
	for i := len(remove) - 1; i >= 0; i-- {
		path := filepath.Join(w.dir, remove[i].name)
		if err := w.fsys.Remove(path); err != nil {
			return fmt.Errorf("headchunks: repair (%v): remove %s: %w", damage, path, err)
		}
	}
	if len(remove) > 0 {
		if err := w.fsys.SyncDir(w.dir); err != nil {
			return fmt.Errorf("headchunks: repair (%v): sync directory: %w", damage, err)
		}
	}
	for _, f := range cut {
		if err := truncateFile(w.fsys, f.name, f.size); err != nil {
			return fmt.Errorf("headchunks: repair: %w", err)
		}
	}
	return nil
}

// truncateFile cuts the named file to size bytes and syncs it.
func truncateFile(fsys vfs.FS, name string, size int64) error {
	h, err := fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	err = h.Truncate(size)
	if err == nil {
		err = h.Sync()
	}
	if cerr := h.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("truncate %s to %d bytes: %w", name, size, err)
	}
	return nil
}
