package tsdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"

	"github.com/oklog/ulid/v2"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/internal/chunkseg"
	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/index"
	"github.com/isotsdb/tsdb/internal/lockorder"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// Files and directories of a block, as in Prometheus's block format.
const (
	metaFilename  = "meta.json"
	indexFilename = "index"
	chunksDirname = "chunks"
	metaVersion1  = 1
	// tmpPrefix starts the names of directories being written; Open removes
	// leftovers.
	tmpPrefix = ".tmp-"
)

// corruptBlockError is the error of a block whose contents are damaged. It
// wraps ErrCorruptBlock and the cause, and is matched by ErrCorrupt; if
// the cause holds no *CorruptionError, it also wraps one naming the block
// directory (offset unknown), so errors.As always gives a location.
type corruptBlockError struct {
	dir  string
	meta *BlockMeta // the block's meta.json if it could be read, else nil
	err  error
	loc  *CorruptionError // nil if err holds one
}

func (e *corruptBlockError) Error() string {
	return fmt.Sprintf("%v %s: %v", ErrCorruptBlock, e.dir, e.err)
}

func (e *corruptBlockError) Unwrap() []error {
	if e.loc != nil {
		return []error{ErrCorruptBlock, e.loc}
	}
	return []error{ErrCorruptBlock, e.err}
}

// blockOpenError classifies err, the failure to open or read the block in
// dir (meta is its meta.json if read already): damage to the block's
// contents gives a *corruptBlockError; a failure of the filesystem itself
// gives an error naming the block and wrapping err, not ErrCorruptBlock,
// so that no caller mistakes a transient fault for a bad block.
func blockOpenError(dir string, meta *BlockMeta, err error) error {
	if isIOFailure(err) {
		return fmt.Errorf("tsdb: open block %s: %w", dir, err)
	}
	e := &corruptBlockError{dir: dir, meta: meta, err: err}
	if _, _, ok := corrupt.Locate(err); !ok {
		e.loc = corrupt.At(dir, -1, err)
	}
	return e
}

// isIOFailure reports whether err says that the filesystem failed rather
// than that a file holds or lacks the wrong thing: somewhere in its tree it
// has an *fs.PathError, *os.LinkError, *os.SyscallError or bare errno
// whose cause is not a missing file (fs.ErrNotExist), a path through a
// non-directory (ENOTDIR) or a directory where a file should be (EISDIR).
// Decoding errors (bad JSON, magic, checksum, format) carry no such error.
func isIOFailure(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *fs.PathError:
		return !isContentErrno(e.Err)
	case *os.LinkError:
		return !isContentErrno(e.Err)
	case *os.SyscallError:
		return !isContentErrno(e.Err)
	case syscall.Errno:
		return !isContentErrno(e)
	case interface{ Unwrap() []error }:
		return slices.ContainsFunc(e.Unwrap(), isIOFailure)
	case interface{ Unwrap() error }:
		return isIOFailure(e.Unwrap())
	}
	return false
}

// isContentErrno reports whether err, the cause of a filesystem error, says
// something about the block's files (missing, or a file where a directory
// should be or the reverse) rather than about the filesystem.
func isContentErrno(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}

// BlockMeta is a block's meta.json: Prometheus's format, version 1.
type BlockMeta struct {
	ULID ulid.ULID `json:"ulid"`
	// MinTime is inclusive, MaxTime exclusive.
	MinTime    int64           `json:"minTime"`
	MaxTime    int64           `json:"maxTime"`
	Stats      BlockStats      `json:"stats,omitempty"`
	Compaction BlockCompaction `json:"compaction"`
	Version    int             `json:"version"`
	// Isotsdb holds what isotsdb adds to the format, under a key of its
	// own: Prometheus decodes meta.json into a struct, so it ignores the
	// key (and drops it when it rewrites a block). nil when there is
	// nothing to add, and in blocks written by Prometheus.
	Isotsdb *BlockIsotsdb `json:"isotsdb,omitempty"`
}

// BlockIsotsdb is isotsdb's part of meta.json, the WAL mark written as
// [segment, offset, maxTime] to keep the file short:
//
//	"isotsdb":{"walMark":[12,40960,7200000]}
type BlockIsotsdb struct {
	// WALMark says which WAL samples the blocks hold (wal_mark.go). A head
	// compaction sets it on the last block it writes; block compaction
	// carries the greatest of its inputs' marks.
	WALMark *WALMark `json:"walMark,omitempty"`
}

// WALMark records a head compaction: every sample the data directory's
// WAL logged before position (Segment, Offset) with a time before MaxTime
// is in the blocks, or was never stored (rejected, or dropped by a
// Delete); a sample logged after it with a time before MaxTime is a late
// one that arrived after the range was written.
type WALMark struct {
	Segment int
	Offset  int64
	MaxTime int64
}

// MarshalJSON writes m as [Segment, Offset, MaxTime].
func (m WALMark) MarshalJSON() ([]byte, error) {
	return json.Marshal([3]int64{int64(m.Segment), m.Offset, m.MaxTime})
}

// UnmarshalJSON reads what MarshalJSON writes: exactly three integers.
func (m *WALMark) UnmarshalJSON(data []byte) error {
	var v []int64
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if len(v) != 3 || v[0] < math.MinInt32 || v[0] > math.MaxInt32 {
		return fmt.Errorf("tsdb: WAL mark %s: want [segment, offset, maxTime]", data)
	}
	*m = WALMark{Segment: int(v[0]), Offset: v[1], MaxTime: v[2]}
	return nil
}

// UnmarshalJSON decodes isotsdb's part of meta.json. Garbage there does
// not make the block unreadable: it decodes to no mark (replay then
// behaves as for a block written by Prometheus). A mark out of range
// (negative, or a segment index the log cannot have) is no mark either.
func (b *BlockIsotsdb) UnmarshalJSON(data []byte) error {
	type plain BlockIsotsdb
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		*b = BlockIsotsdb{}
		return nil
	}
	if m := p.WALMark; m != nil && (m.Segment < 0 || m.Segment > maxWALSegment || m.Offset < 0) {
		p.WALMark = nil
	}
	*b = BlockIsotsdb(p)
	return nil
}

// maxWALSegment is the greatest segment index: segment names have at
// most nine digits.
const maxWALSegment = 999_999_999

// BlockStats counts what a block holds.
type BlockStats struct {
	NumSamples uint64 `json:"numSamples,omitempty"`
	// NumFloatSamples and NumHistogramSamples split NumSamples by the
	// encoding of the chunks holding them (XOR, or either histogram
	// encoding), as Prometheus records them.
	NumFloatSamples     uint64 `json:"numFloatSamples,omitempty"`
	NumHistogramSamples uint64 `json:"numHistogramSamples,omitempty"`
	NumSeries           uint64 `json:"numSeries,omitempty"`
	NumChunks           uint64 `json:"numChunks,omitempty"`
	NumTombstones       uint64 `json:"numTombstones,omitempty"`
}

// BlockCompaction records how a block was made.
type BlockCompaction struct {
	// Level is 1 for blocks cut from the head, and one more than the
	// highest of its parents for compacted blocks.
	Level int `json:"level"`
	// Sources are the level-1 blocks whose data this block holds.
	Sources []ulid.ULID `json:"sources,omitempty"`
	// Parents are the blocks this one was compacted from.
	Parents []BlockDesc `json:"parents,omitempty"`
	// Deletable marks a block with nothing left in it.
	Deletable bool `json:"deletable,omitempty"`
	// Failed marks a block whose data was found damaged when a
	// compaction read it: the planner leaves it out of every later
	// compaction (it is still queried, and retention deletes it in
	// time). Set by markCompactionFailed.
	Failed bool `json:"failed,omitempty"`
}

// BlockDesc identifies a parent block.
type BlockDesc struct {
	ULID    ulid.ULID `json:"ulid"`
	MinTime int64     `json:"minTime"`
	MaxTime int64     `json:"maxTime"`
}

// maxMetaSize bounds meta.json: a compacted block lists its sources, a few
// thousand at most.
const maxMetaSize = 16 << 20

// decodeMeta parses and checks a meta.json.
func decodeMeta(b []byte) (BlockMeta, error) {
	var m BlockMeta
	if len(b) > maxMetaSize {
		return m, fmt.Errorf("meta.json of %d bytes is too large", len(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("parse meta.json: %w", err)
	}
	switch {
	case m.Version != metaVersion1:
		return m, fmt.Errorf("meta.json: unsupported version %d", m.Version)
	case m.MinTime >= m.MaxTime:
		return m, fmt.Errorf("meta.json: empty time range [%d, %d)", m.MinTime, m.MaxTime)
	case m.ULID == (ulid.ULID{}):
		return m, errors.New("meta.json: no ULID")
	case slices.ContainsFunc(m.Compaction.Parents, func(p BlockDesc) bool { return p.ULID == m.ULID }):
		// Open deletes the parents of every block it loads: a block that
		// names itself would delete itself.
		return m, fmt.Errorf("meta.json: block %s lists itself as its parent", m.ULID)
	}
	return m, nil
}

// readMeta reads and decodes the meta.json of the block in dir. Damage
// (a directory in its place, a file too large, contents that do not
// decode) is a *CorruptionError naming the file; a failure to read it is
// returned as it is.
func readMeta(fsys vfs.FS, dir string) (BlockMeta, error) {
	path := filepath.Join(dir, metaFilename)
	f, err := fsys.Open(path)
	if err != nil {
		return BlockMeta{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return BlockMeta{}, err
	}
	if st.IsDir() {
		return BlockMeta{}, corrupt.Errorf(path, -1, "%s is a directory", metaFilename)
	}
	if st.Size() > maxMetaSize {
		return BlockMeta{}, corrupt.Errorf(path, -1, "meta.json of %d bytes is too large", st.Size())
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return BlockMeta{}, fmt.Errorf("read meta.json: %w", err)
	}
	m, err := decodeMeta(b)
	if err != nil {
		return m, corrupt.At(path, -1, err)
	}
	return m, nil
}

// writeMeta writes meta.json into dir through a temporary file, fsynced.
// The caller syncs dir. The JSON is compact, where Prometheus indents it:
// readers parse it either way, and a block then costs no more bytes than
// Prometheus's although its meta carries isotsdb's WAL mark too.
func writeMeta(fsys vfs.FS, dir string, m *BlockMeta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return replaceFile(fsys, filepath.Join(dir, metaFilename), b)
}

// replaceFile puts data at path through a temporary file that is fsynced
// and renamed over path. The caller syncs the directory to make the rename
// durable.
func replaceFile(fsys vfs.FS, path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Close(); err != nil {
		return err
	}
	return fsys.Rename(tmp, path)
}

// Block is an immutable block on disk, open for reading. It is safe for
// concurrent use. Readers take a reference (acquire) while they use it; a
// deleted block is closed once its last reader has released it.
type Block struct {
	dir string
	// meta is fixed at open except Stats.NumTombstones, which
	// setTombstones updates, and Compaction.Failed, which
	// markCompactionFailed sets; both hold mu and the DB's lock (and the
	// DB's cmtx): read those fields under either lock (DB.Blocks holds
	// the DB's, Meta holds mu) or under cmtx.
	meta   BlockMeta
	fs     vfs.FS
	index  *index.Reader
	chunks *chunkseg.SegmentReader
	size   int64 // bytes on disk of index and chunks

	// mu protects the fields below. It is taken under DB.mu (and a
	// querier's lock); nothing is locked under it.
	mu      lockorder.Mutex[lockorder.Block]
	tombs   tombstones.Reader
	tsize   int64 // bytes of the tombstones file
	readers int
	closing bool // no new readers; close when readers drops to 0
	closed  bool
}

// openBlock opens the block in dir. A block whose contents are damaged
// gives an error wrapping ErrCorruptBlock and naming dir; an I/O error
// gives an error naming dir and wrapping the cause, but not
// ErrCorruptBlock (see blockOpenError).
func openBlock(fsys vfs.FS, dir string) (*Block, error) {
	meta, err := readMeta(fsys, dir)
	if err != nil {
		return nil, blockOpenError(dir, nil, err)
	}
	b := &Block{dir: dir, meta: meta, fs: fsys}
	if err := b.openFiles(); err != nil {
		return nil, blockOpenError(dir, &meta, errors.Join(err, b.closeFiles()))
	}
	return b, nil
}

func (b *Block) openFiles() error {
	var err error
	if b.index, err = index.NewFileReader(b.fs, filepath.Join(b.dir, indexFilename)); err != nil {
		return err
	}
	if b.chunks, err = chunkseg.NewSegmentReader(b.fs, filepath.Join(b.dir, chunksDirname)); err != nil {
		return err
	}
	b.tombs, b.tsize, err = tombstones.ReadFile(b.fs, b.dir)
	switch {
	case errors.Is(err, tombstones.ErrMissing) && b.meta.Stats.NumTombstones == 0:
		// Nothing was deleted; Prometheus reads such a block the same way.
		b.tombs, b.tsize = tombstones.NewMemTombstones(), 0
	case errors.Is(err, tombstones.ErrMissing):
		// Serving the block would bring deleted samples back.
		return fmt.Errorf("meta.json counts %d tombstones but the block has no tombstones file: %w",
			b.meta.Stats.NumTombstones, err)
	case err != nil:
		return err
	}
	b.size = b.index.Size() + b.chunks.Size()
	return nil
}

// Meta returns the block's meta.json contents, a copy of its own.
func (b *Block) Meta() BlockMeta {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.meta.clone()
}

// clone returns m with slices of its own.
func (m BlockMeta) clone() BlockMeta {
	m.Compaction.Sources = slices.Clone(m.Compaction.Sources)
	m.Compaction.Parents = slices.Clone(m.Compaction.Parents)
	return m
}

// Dir returns the block's directory.
func (b *Block) Dir() string { return b.dir }

// Size returns the bytes the block takes on disk.
func (b *Block) Size() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size + b.tsize
}

// tombstones returns the block's current deletion intervals. Readers keep
// the value they got: a Delete replaces it, never changes it.
func (b *Block) tombstones() tombstones.Reader {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tombs
}

// setTombstones installs new deletion intervals, written to disk already.
func (b *Block) setTombstones(t tombstones.Reader, size int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tombs, b.tsize = t, size
	b.meta.Stats.NumTombstones = t.Total()
}

// acquire takes a reader reference; it fails if the block is being closed.
func (b *Block) acquire() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return false
	}
	b.readers++
	return true
}

// acquireHeld takes one more reader reference for a caller that holds one
// already (so the block cannot be closed meanwhile). Unlike acquire it
// succeeds on a block being closed: the files stay open until the last
// reference goes.
func (b *Block) acquireHeld() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.readers <= 0 || b.closed {
		panic("tsdb: acquireHeld on a block without readers") // a bug in this package, never an I/O error
	}
	b.readers++
}

// blockLease holds reader references on the blocks that one Select reads,
// for as long as anything the Select returned is reachable: the series set,
// its Series and their iterators read the blocks' mapped files (postings,
// chunks), which must stay mapped under them even after the Querier is
// closed and the blocks are deleted or the DB is closed. (On Linux a
// mapping outlives the unlinking of its file, so a deleted block's data
// stays readable until the lease goes.) A cleanup releases the references
// when the lease becomes unreachable, which is after the last of those
// values has become unreachable; until then a deleted block's files take
// disk space.
//
// Everything that reads block memory references the lease: the set, each
// blockSeries and, through its series, each blockIterator. Their methods
// end with runtime.KeepAlive on the lease, so that the lease cannot be
// collected while a call on the last reference to it is still reading.
type blockLease struct {
	blocks []*Block
}

// newBlockLease takes a reference on each of blocks, on which the caller
// holds one already (see acquireHeld).
func newBlockLease(blocks []*Block) *blockLease {
	if len(blocks) == 0 {
		return nil
	}
	for _, b := range blocks {
		b.acquireHeld()
	}
	l := &blockLease{blocks: blocks}
	runtime.AddCleanup(l, releaseBlocks, blocks)
	return l
}

// release drops a reader reference, closing the block if it was the last
// one of a block being closed.
func (b *Block) release() {
	b.mu.Lock()
	b.readers--
	last := b.readers == 0 && b.closing && !b.closed
	if last {
		b.closed = true
	}
	b.mu.Unlock()
	if last {
		_ = b.closeFiles()
	}
}

// close marks the block closing: it is closed now if no one reads it, else
// when its last reader releases it.
func (b *Block) close() error {
	b.mu.Lock()
	b.closing = true
	now := b.readers == 0 && !b.closed
	if now {
		b.closed = true
	}
	b.mu.Unlock()
	if now {
		return b.closeFiles()
	}
	return nil
}

func (b *Block) closeFiles() error {
	var errs []error
	if b.index != nil {
		errs = append(errs, b.index.Close())
	}
	if b.chunks != nil {
		errs = append(errs, b.chunks.Close())
	}
	if t := b.tombstones(); t != nil {
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}

// blockReadError is an error of reading the data of an open block (its
// index, chunks or tombstones). It names the block for compaction, which
// must know which block of a group is damaged (see compactBlocks); its
// message is err's, which names the block too.
type blockReadError struct {
	block ulid.ULID
	err   error
}

func (e *blockReadError) Error() string { return e.err.Error() }

// Unwrap returns err and, if err reports damaged data, ErrCorruptBlock and
// ErrCorrupt.
func (e *blockReadError) Unwrap() []error {
	if isCorruption(e.err) {
		return []error{ErrCorruptBlock, ErrCorrupt, e.err}
	}
	return []error{e.err}
}

// readError wraps err, an error of reading b's data, in a *blockReadError.
func (b *Block) readError(err error) error {
	return &blockReadError{block: b.meta.ULID, err: err}
}

// isCorruption reports whether err, from reading a block's files, says
// that their bytes are damaged: a checksum mismatch, undecodable data, a
// reference that points nowhere. I/O errors, closed readers and ended
// contexts are not damage.
func isCorruption(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, chunkseg.ErrInvalidRef) ||
		errors.Is(err, index.ErrNotFound)
}

// corruptBlockOf returns the block whose damaged data err reports, if err
// is such an error of a block read through readError.
func corruptBlockOf(err error) (ulid.ULID, bool) {
	var re *blockReadError
	if !errors.As(err, &re) || !isCorruption(re.err) {
		return ulid.ULID{}, false
	}
	return re.block, true
}

// overlaps reports whether the block has data in [mint, maxt] (inclusive).
func (b *Block) overlaps(mint, maxt int64) bool {
	return b.meta.MinTime <= maxt && mint < b.meta.MaxTime
}

// blockSeriesSet iterates the series of a block matching a selection.
type blockSeriesSet struct {
	ctx        context.Context
	b          *Block
	lease      *blockLease // keeps b's files mapped; nil if the caller holds b otherwise
	tombs      tombstones.Reader
	p          index.Postings
	mint, maxt int64
	builder    labels.ScratchBuilder
	metas      []index.ChunkMeta
	cur        *blockSeries
	spare      *blockSeries // not returned: next's to fill; nil if none
	err        error
	n          int
}

// selectSeries returns the block's series matching ms with samples in
// [mint, maxt] not deleted by tombs, sorted by labels. The caller holds a
// reader reference for as long as it uses the set and what it returns.
func (b *Block) selectSeries(ctx context.Context, tombs tombstones.Reader, mint, maxt int64, ms []*labels.Matcher) SeriesSet {
	return b.selectLeased(ctx, nil, tombs, mint, maxt, ms)
}

// selectLeased is selectSeries for a Querier: the set and everything it
// returns reference lease, which holds b, so they may outlive the caller's
// own reference.
func (b *Block) selectLeased(ctx context.Context, lease *blockLease, tombs tombstones.Reader, mint, maxt int64, ms []*labels.Matcher) SeriesSet {
	p, err := index.PostingsForMatchers(b.index, ms...)
	if err != nil {
		return errSeriesSet{b.readError(fmt.Errorf("tsdb: select block %s: %w", b.meta.ULID, err))}
	}
	// Postings are in series-reference order, which for an index file is
	// label order: no sorting needed.
	return &blockSeriesSet{ctx: ctx, b: b, lease: lease, tombs: tombs, p: p, mint: mint, maxt: maxt, builder: labels.NewScratchBuilder(16)}
}

func (s *blockSeriesSet) Next() bool {
	ok := s.next()
	runtime.KeepAlive(s.lease)
	return ok
}

func (s *blockSeriesSet) next() bool {
	for s.err == nil && s.p.Next() {
		if s.n++; s.n%ctxCheckInterval == 0 {
			if err := s.ctx.Err(); err != nil {
				s.err = err
				return false
			}
		}
		ref := s.p.At()
		if err := s.b.index.Series(ref, &s.builder, &s.metas); err != nil {
			s.err = s.b.readError(fmt.Errorf("tsdb: block %s: series %d: %w", s.b.dir, ref, err))
			return false
		}
		// The series is built in a spare left by a series skipped
		// below, or in a new one: one allocation for the series and up
		// to len(space) chunks.
		bs := s.spare
		if bs == nil {
			bs = &blockSeries{}
		}
		s.spare = bs
		chks := bs.space[:0]
		if len(s.metas) > len(bs.space) {
			chks = make([]chunkRef, 0, len(s.metas))
		}
		for _, m := range s.metas {
			if m.MaxTime < s.mint || m.MinTime > s.maxt {
				continue
			}
			c, err := s.b.chunks.Chunk(m.Ref)
			if err != nil {
				s.err = s.b.readError(fmt.Errorf("tsdb: block %s: series %s: %w", s.b.dir, s.builder.Labels(), err))
				return false
			}
			chks = append(chks, chunkRef{c: c, minTime: m.MinTime, maxTime: m.MaxTime})
		}
		if len(chks) == 0 {
			continue
		}
		itvs, err := s.tombs.Get(ref)
		if err != nil {
			s.err = s.b.readError(fmt.Errorf("tsdb: block %s: tombstones: %w", s.b.dir, err))
			return false
		}
		if coversAll(itvs, chks[0].minTime, chks[len(chks)-1].maxTime) {
			continue // deleted whole
		}
		var deleted tombstones.Intervals
		if len(itvs) > 0 {
			deleted = slices.Clone(itvs)
		}
		// Field by field: chks may be bs.space.
		bs.lset, bs.b, bs.lease, bs.chunks = s.builder.Labels(), s.b, s.lease, chks
		bs.mint, bs.maxt, bs.deleted = s.mint, s.maxt, deleted
		s.cur, s.spare = bs, nil
		return true
	}
	if s.err == nil {
		if err := s.p.Err(); err != nil {
			s.err = s.b.readError(fmt.Errorf("tsdb: block %s: postings: %w", s.b.dir, err))
		}
	}
	return false
}

func (s *blockSeriesSet) At() Series { return s.cur }
func (s *blockSeriesSet) Err() error { return s.err }

// coversAll reports whether one interval of itvs covers [mint, maxt].
func coversAll(itvs tombstones.Intervals, mint, maxt int64) bool {
	for _, iv := range itvs {
		if iv.Mint <= mint && iv.Maxt >= maxt {
			return true
		}
	}
	return false
}

// chunkRef is a chunk of a block series, over the mapped file.
type chunkRef struct {
	c                chunks.Chunk
	minTime, maxTime int64
}

// blockSeries is a series of a block, restricted to a time range and with
// its deleted intervals.
type blockSeries struct {
	lset       labels.Labels
	b          *Block
	lease      *blockLease // keeps the chunks' memory mapped; see blockLease
	chunks     []chunkRef
	mint, maxt int64
	deleted    tombstones.Intervals
	// space holds chunks if they fit: a 2 h block of 15 s scrapes has
	// four 120-sample chunks a series.
	space [4]chunkRef
}

func (s *blockSeries) Labels() labels.Labels { return s.lset }

func (s *blockSeries) Iterator(reuse chunks.Iterator) chunks.Iterator {
	it, ok := reuse.(*blockIterator)
	if !ok || it == nil {
		it = &blockIterator{}
	}
	*it = blockIterator{s: s, ci: -1, it: it.it, ts: it.ts[:0], vs: it.vs[:0]}
	return it
}

// blockIterator iterates a blockSeries' samples in range and not deleted,
// of every value type its chunks hold.
//
// An XOR chunk (floats) is decoded whole into ts and vs when the iterator
// reaches it (decoded is then true), and its samples are taken from there:
// a block read is a scan of whole chunks, and the per-sample calls through
// a chunk iterator cost more than the decode. Other chunks are read
// through their iterator, it.
//
// Invariant: valid is true exactly when the iterator is positioned on a
// sample; then vt is its type, t its time, and v its value if vt is
// ValFloat. Histograms are read from the chunk iterator, which stays on
// the current sample. When decoded, ts[i:] are the chunk's samples not yet
// returned, and decodeErr the error that ended the decode, to be reported
// after them.
type blockIterator struct {
	s     *blockSeries
	ci    int
	it    chunks.Iterator
	vt    chunks.ValueType
	t     int64
	v     float64
	valid bool
	done  bool
	err   error

	decoded   bool
	ts        []int64
	vs        []float64
	i         int
	decodeErr error
}

// nextChunk opens chunk ci.
func (it *blockIterator) nextChunk(ci int) bool {
	if ci >= len(it.s.chunks) || it.s.chunks[ci].minTime > it.s.maxt {
		return false
	}
	it.ci = ci
	if x, ok := it.s.chunks[ci].c.(*chunks.XORChunk); ok {
		it.ts, it.vs, it.decodeErr = x.AppendSamples(it.ts[:0], it.vs[:0], it.s.maxt)
		it.i, it.decoded = 0, true
		return true
	}
	it.decoded = false
	it.it = it.s.chunks[ci].c.Iterator(it.it)
	return true
}

// Next advances to the next sample; see chunks.Iterator.
func (it *blockIterator) Next() chunks.ValueType {
	vt := it.next()
	runtime.KeepAlive(it.s.lease)
	return vt
}

func (it *blockIterator) next() chunks.ValueType {
	if it.done {
		return chunks.ValNone
	}
	for {
		if it.ci >= 0 {
			if it.decoded {
				if vt := it.nextDecoded(); vt != chunks.ValNone || it.done {
					return vt
				}
			} else if vt := it.nextIterated(); vt != chunks.ValNone || it.done {
				return vt
			}
		}
		if !it.nextChunk(it.ci + 1) {
			it.done, it.valid = true, false
			return chunks.ValNone
		}
	}
}

// nextDecoded advances within a decoded chunk. It returns ValNone with
// done unset when the chunk has no more samples in range.
func (it *blockIterator) nextDecoded() chunks.ValueType {
	for it.i < len(it.ts) {
		t := it.ts[it.i]
		it.i++
		switch {
		case t > it.s.maxt:
			it.done, it.valid = true, false
			return chunks.ValNone
		case t < it.s.mint || it.s.deleted.Contains(t):
			continue
		}
		it.t, it.v, it.vt, it.valid = t, it.vs[it.i-1], chunks.ValFloat, true
		return chunks.ValFloat
	}
	if it.decodeErr != nil {
		return it.fail(it.decodeErr)
	}
	return chunks.ValNone
}

// nextIterated advances within a chunk read through its iterator; it
// returns as nextDecoded.
func (it *blockIterator) nextIterated() chunks.ValueType {
	for {
		vt := it.it.Next()
		if vt == chunks.ValNone {
			if err := it.it.Err(); err != nil {
				return it.fail(err)
			}
			return chunks.ValNone
		}
		if vt == chunks.ValFloat {
			it.t, it.v = it.it.At()
		} else {
			it.t = it.it.AtT()
		}
		switch {
		case it.t > it.s.maxt:
			it.done, it.valid = true, false
			return chunks.ValNone
		case it.t < it.s.mint || it.s.deleted.Contains(it.t):
			continue
		}
		it.vt, it.valid = vt, true
		return vt
	}
}

// fail ends the iteration with the chunk error err.
func (it *blockIterator) fail(err error) chunks.ValueType {
	it.err = it.s.b.readError(fmt.Errorf("tsdb: block %s: %w", it.s.b.dir, err))
	it.done, it.valid = true, false
	return chunks.ValNone
}

// Seek advances to the first sample at or after t; see chunks.Iterator.
func (it *blockIterator) Seek(t millis) chunks.ValueType {
	vt := it.seek(t)
	runtime.KeepAlive(it.s.lease)
	return vt
}

func (it *blockIterator) seek(t millis) chunks.ValueType {
	if it.done {
		return chunks.ValNone
	}
	if it.valid && it.t >= t {
		return it.vt
	}
	ci := max(it.ci, 0)
	for ci < len(it.s.chunks) && it.s.chunks[ci].maxTime < t {
		ci++
	}
	if ci != it.ci {
		if !it.nextChunk(ci) {
			it.done, it.valid = true, false
			return chunks.ValNone
		}
	}
	if it.decoded {
		// Skip the decoded samples before t at once; the chunk's times
		// ascend.
		j, _ := slices.BinarySearch(it.ts[it.i:], t)
		it.i += j
	}
	for vt := it.next(); vt != chunks.ValNone; vt = it.next() {
		if it.t >= t {
			return vt
		}
	}
	return chunks.ValNone
}

// NextFloats implements chunks.FloatBatcher: it copies samples of decoded
// XOR chunks, going on into the next chunk if that is one too, in a
// series without deletions.
func (it *blockIterator) NextFloats(ts []int64, vs []float64, maxt int64) int {
	if !it.valid || !it.decoded || len(it.s.deleted) > 0 {
		return 0
	}
	maxt = min(maxt, it.s.maxt)
	vs = vs[:len(ts)]
	n := 0
	for n < len(ts) {
		if it.i == len(it.ts) {
			// The chunk is used up: the next one, if it is an XOR chunk
			// that ends without error.
			next := it.ci + 1
			if it.decodeErr != nil || next >= len(it.s.chunks) || it.s.chunks[next].minTime > maxt {
				break
			}
			if _, ok := it.s.chunks[next].c.(*chunks.XORChunk); !ok {
				break
			}
			it.nextChunk(next)
			continue
		}
		// The samples after the current one are all after mint.
		k := min(len(ts)-n, len(it.ts)-it.i)
		src := it.ts[it.i : it.i+k]
		if src[k-1] > maxt {
			k, _ = slices.BinarySearch(src, maxt+1)
			if k == 0 {
				break
			}
		}
		copy(ts[n:], it.ts[it.i:it.i+k])
		copy(vs[n:], it.vs[it.i:it.i+k])
		it.i += k
		n += k
	}
	if n > 0 {
		it.t, it.v = ts[n-1], vs[n-1]
	}
	runtime.KeepAlive(it.s.lease)
	return n
}

// NextFloat implements chunks.FloatNexter.
func (it *blockIterator) NextFloat() (chunks.ValueType, int64, float64) {
	vt := it.Next()
	return vt, it.t, it.v
}

// At returns the current float sample; on a histogram sample it panics,
// like every chunks.Iterator.
func (it *blockIterator) At() (int64, float64) {
	if it.vt != chunks.ValFloat {
		panic(wrongValueType("At", it.vt))
	}
	return it.t, it.v
}

func (it *blockIterator) AtT() int64 { return it.t }

func (it *blockIterator) AtST() int64 {
	if it.decoded {
		return 0 // XOR chunks hold no start times
	}
	return it.it.AtST()
}

func (it *blockIterator) Err() error { return it.err }

// AtHistogram returns the current integer histogram sample; see
// chunks.Iterator.
func (it *blockIterator) AtHistogram(h *histogram.Histogram) (int64, *histogram.Histogram) {
	if it.decoded {
		panic(wrongValueType("AtHistogram", chunks.ValFloat))
	}
	t, h := it.it.AtHistogram(h)
	runtime.KeepAlive(it.s.lease)
	return t, h
}

// AtFloatHistogram returns the current histogram sample as a float
// histogram; see chunks.Iterator.
func (it *blockIterator) AtFloatHistogram(fh *histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	if it.decoded {
		panic(wrongValueType("AtFloatHistogram", chunks.ValFloat))
	}
	t, fh := it.it.AtFloatHistogram(fh)
	runtime.KeepAlive(it.s.lease)
	return t, fh
}

// isBlockDir reports whether name is a block directory's name (a ULID).
func isBlockDir(e fs.DirEntry) (ulid.ULID, bool) {
	if !e.IsDir() {
		return ulid.ULID{}, false
	}
	id, err := ulid.ParseStrict(e.Name())
	return id, err == nil
}
