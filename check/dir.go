package check

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/isotsdb/tsdb/internal/headchunks"
	"github.com/isotsdb/tsdb/vfs"
)

// Names in a data directory and a block directory.
const (
	walDirname    = "wal"
	headChunksDir = "chunks_head"
	metaFilename  = "meta.json"
	indexFilename = "index"
	chunksDirname = "chunks"
	// deleteIntentFilename is where the DB records a Delete in progress.
	deleteIntentFilename = "delete-intent.json"
	// tmpPrefix starts the names of directories being written (ours are
	// ".tmp-...", Prometheus's "....tmp-for-creation" style names also
	// start with ".tmp" or end in ".tmp").
	tmpPrefix = ".tmp"
)

// Dir checks the data directory dir through fsys and returns what it
// found. The error is non-nil only when dir cannot be read or holds
// neither a wal directory nor a block (it then wraps ErrNotTSDB); damage
// is reported in the Report, never as an error (see Report.Err).
//
// Dir only reads: it takes no lock and writes nothing. Run it on a
// directory no process is writing to for an exact answer; on a live
// directory the WAL's last segment may show a torn tail (a warning) and
// blocks may appear or vanish while it runs.
func Dir(fsys vfs.FS, dir string) (*Report, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotTSDB, dir, err)
	}
	rep := &Report{Dir: dir, WAL: WALSummary{FirstSegment: -1, LastSegment: -1}}
	c := &checker{fs: fsys, dir: dir, rp: newReporter(rep)}
	var blocks []string
	hasWAL, hasHeadChunks := false, false
	for _, e := range ents {
		name := e.Name()
		switch {
		case name == walDirname && e.IsDir():
			hasWAL = true
		case name == headChunksDir && e.IsDir():
			hasHeadChunks = true
		case e.IsDir() && isULID(name):
			blocks = append(blocks, name)
		case strings.HasPrefix(name, tmpPrefix) || strings.HasSuffix(name, ".tmp"):
			c.rp.warnf(filepath.Join(dir, name), -1, "", nil, "leftover of an interrupted write (removed by the next open)")
		case name == deleteIntentFilename:
			c.rp.warnf(filepath.Join(dir, name), -1, "", nil, "a Delete was interrupted (the next open applies it again)")
		}
	}
	if !hasWAL && len(blocks) == 0 {
		return nil, fmt.Errorf("%w: %s has no wal directory and no block", ErrNotTSDB, dir)
	}
	for _, name := range blocks {
		rep.Blocks = append(rep.Blocks, c.checkBlock(filepath.Join(dir, name), name))
	}
	c.checkOverlaps()
	if hasWAL {
		c.checkWAL(filepath.Join(dir, walDirname))
	}
	if hasHeadChunks {
		c.checkHeadChunks(filepath.Join(dir, headChunksDir), &rep.HeadChunks)
	}
	c.rp.finish()
	return rep, nil
}

// checker holds the state of one Dir call.
type checker struct {
	fs  vfs.FS
	dir string
	rp  *reporter
	// metas are the readable meta.json files, for the overlap check.
	metas []blockMeta
}

// checkHeadChunks reads the head chunk files in dir (Prometheus's
// chunks_head format), checking every record, and fills in sum. Damage is
// a warning: the next open cuts the damaged file after its last whole
// chunk and removes the files after it, and the WAL, which holds every
// sample the files do, replays the rest.
func (c *checker) checkHeadChunks(dir string, sum *HeadChunksSummary) {
	res, err := headchunks.Verify(c.fs, dir)
	if err != nil {
		c.rp.errorf(dir, -1, "", err, "head chunk files cannot be read")
		return
	}
	*sum = HeadChunksSummary{Dir: dir, Files: res.Files, Chunks: res.Chunks, OutOfOrderChunks: res.OutOfOrder, Bytes: res.Bytes}
	if res.Repaired != nil {
		c.rp.fromErr(Warning, dir, -1, "", res.Repaired, "damaged head chunk file (the next open cuts it after its last whole chunk; the WAL replays the rest)")
	}
}

// isULID reports whether name is a block directory's name.
func isULID(name string) bool {
	_, err := ulid.ParseStrict(name)
	return err == nil
}

// checkOverlaps warns about blocks whose time ranges overlap: queries merge
// them, but they hold duplicate data until compacted together.
func (c *checker) checkOverlaps() {
	ms := slices.Clone(c.metas)
	slices.SortFunc(ms, func(a, b blockMeta) int {
		switch {
		case a.MinTime < b.MinTime:
			return -1
		case a.MinTime > b.MinTime:
			return 1
		}
		return strings.Compare(a.dir, b.dir)
	})
	if len(ms) == 0 {
		return
	}
	furthest := ms[0] // of the blocks before m, the one reaching furthest
	for _, m := range ms[1:] {
		if m.MinTime < furthest.MaxTime {
			c.rp.warnf(m.dir, -1, "", nil, "block [%d, %d) overlaps block %s [%d, %d)",
				m.MinTime, m.MaxTime, filepath.Base(furthest.dir), furthest.MinTime, furthest.MaxTime)
		}
		if m.MaxTime > furthest.MaxTime {
			furthest = m
		}
	}
}
