package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/oklog/ulid/v2"

	tsdb "github.com/isotsdb/tsdb"
)

// The inspection commands (ls, analyze, dump, check) only read: they take
// no lock and write nothing, so they can look at a directory that a running
// process has open. They share the helpers below.

// errNotTSDB is what the inspection commands report for a directory that
// holds no database.
var errNotTSDB = errors.New("not a TSDB data directory (no wal directory and no block)")

// openReadOnly opens dir with tsdb.OpenReadOnly, logging its warnings (a
// torn WAL tail, a block that does not open) to stderr.
func openReadOnly(dir string, stderr io.Writer) (*tsdb.DB, error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := tsdb.OpenReadOnly(dir, logger, nil)
	if errors.Is(err, tsdb.ErrNotTSDB) {
		return nil, fmt.Errorf("%s: %w", dir, errNotTSDB)
	}
	return db, err
}

// diskBlock is a block as found on disk, without opening the DB.
type diskBlock struct {
	dir  string
	meta tsdb.BlockMeta
}

// listBlocks reads the meta.json of every block directory of dir, oldest
// first. It fails with errNotTSDB if dir holds neither a wal directory nor
// a block, and reports blocks whose meta.json does not read to stderr.
func listBlocks(dir string, stderr io.Writer) ([]diskBlock, bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", errNotTSDB, err)
	}
	var blocks []diskBlock
	hasWAL, hasBlockDirs := false, false
	for _, e := range ents {
		if e.Name() == "wal" && e.IsDir() {
			hasWAL = true
		}
		if _, err := ulid.ParseStrict(e.Name()); err != nil || !e.IsDir() {
			continue
		}
		hasBlockDirs = true
		bdir := filepath.Join(dir, e.Name())
		m, err := readBlockMeta(bdir)
		if err != nil {
			fmt.Fprintf(stderr, "tsdb: skipping block %s: %v\n", bdir, err)
			continue
		}
		blocks = append(blocks, diskBlock{dir: bdir, meta: m})
	}
	if !hasWAL && !hasBlockDirs {
		return nil, false, fmt.Errorf("%s: %w", dir, errNotTSDB)
	}
	slices.SortFunc(blocks, func(a, b diskBlock) int {
		if a.meta.MinTime != b.meta.MinTime {
			return cmp.Compare(a.meta.MinTime, b.meta.MinTime)
		}
		return a.meta.ULID.Compare(b.meta.ULID)
	})
	return blocks, hasWAL, nil
}

// maxMetaSize bounds the meta.json files read.
const maxMetaSize = 16 << 20

func readBlockMeta(bdir string) (tsdb.BlockMeta, error) {
	var m tsdb.BlockMeta
	f, err := os.Open(filepath.Join(bdir, "meta.json"))
	if err != nil {
		return m, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMetaSize+1))
	if err != nil {
		return m, err
	}
	if len(b) > maxMetaSize {
		return m, fmt.Errorf("meta.json is larger than %d bytes", maxMetaSize)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("meta.json: %w", err)
	}
	if m.MinTime >= m.MaxTime {
		return m, fmt.Errorf("meta.json: empty time range [%d, %d)", m.MinTime, m.MaxTime)
	}
	return m, nil
}

// dirSize returns the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file that vanished counts as nothing
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// formatTime formats a millisecond timestamp in UTC, with milliseconds
// only when they are not zero.
func formatTime(ms int64) string {
	switch ms {
	case math.MinInt64:
		return "-inf"
	case math.MaxInt64:
		return "+inf"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.999Z")
}

// formatSpan formats the duration of [mint, maxt) in milliseconds.
func formatSpan(mint, maxt int64) string {
	d := maxt - mint
	if d < 0 || d > math.MaxInt64/int64(time.Millisecond) {
		return "?"
	}
	return (time.Duration(d) * time.Millisecond).String()
}

// reportError prints err for command cmd and returns exitError.
func reportError(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "tsdb %s: %v\n", cmd, err)
	return exitError
}
