package ship

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/isotsdb/tsdb"
)

// Names of a block's files, as the block format has them.
const (
	metaFilename       = "meta.json"
	indexFilename      = "index"
	tombstonesFilename = "tombstones"
	chunksDirname      = "chunks"
)

// localBlock is a complete block found in the data directory.
type localBlock struct {
	dir  string         // the block's directory
	meta tsdb.BlockMeta // its meta.json, decoded
	raw  []byte         // its meta.json as read, to extend without losing keys
}

// scanBlocks returns the complete blocks of dataDir, oldest ULID first.
// A directory counts as a block when its name is a ULID and its meta.json
// decodes; others (a block being written, "*.tmp*" directories, the WAL)
// are skipped without error, since the DB writes meta.json last.
func scanBlocks(dataDir string) ([]localBlock, error) {
	ents, err := os.ReadDir(dataDir)
	if err != nil {
		return nil, fmt.Errorf("ship: list %s: %w", dataDir, err)
	}
	var out []localBlock
	for _, e := range ents {
		if !e.IsDir() || strings.Contains(e.Name(), ".tmp") {
			continue
		}
		id, err := ulid.ParseStrict(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(dataDir, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, metaFilename))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ship: read %s: %w", filepath.Join(dir, metaFilename), err)
		}
		var m tsdb.BlockMeta
		if err := json.Unmarshal(raw, &m); err != nil || m.ULID != id {
			continue // partly written or foreign: not a block to ship
		}
		out = append(out, localBlock{dir: dir, meta: m, raw: raw})
	}
	slices.SortFunc(out, func(a, b localBlock) int { return a.meta.ULID.Compare(b.meta.ULID) })
	return out, nil
}

// blockFile is one file of a block to upload.
type blockFile struct {
	rel  string   // path in the block, slash-separated ("chunks/000001")
	f    *os.File // open, so a block deleted mid-upload can still be read
	size int64
}

// openBlockFiles opens the files of the block in dir in upload order:
// chunks/* by name, index, then tombstones when present. meta.json is not
// among them. Opening them all first lets an upload finish even if the DB
// deletes the block (compaction, retention) meanwhile. The caller closes
// the files.
func openBlockFiles(dir string) (files []blockFile, err error) {
	defer func() {
		if err != nil {
			closeBlockFiles(files)
			files = nil
		}
	}()
	open := func(rel string, optional bool) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		f, err := os.Open(p)
		if optional && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("ship: open %s: %w", p, err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return fmt.Errorf("ship: stat %s: %w", p, err)
		}
		files = append(files, blockFile{rel: rel, f: f, size: fi.Size()})
		return nil
	}
	ents, err := os.ReadDir(filepath.Join(dir, chunksDirname))
	if err != nil {
		return nil, fmt.Errorf("ship: list chunks of %s: %w", dir, err)
	}
	for _, e := range ents { // ReadDir sorts by name
		if e.Type().IsRegular() {
			if err := open(path.Join(chunksDirname, e.Name()), false); err != nil {
				return files, err
			}
		}
	}
	if err := open(indexFilename, false); err != nil {
		return files, err
	}
	if err := open(tombstonesFilename, true); err != nil {
		return files, err
	}
	return files, nil
}

func closeBlockFiles(files []blockFile) {
	for _, bf := range files {
		bf.f.Close() // read-only: nothing to lose
	}
}

// thanosMeta is the "thanos" section of meta.json as Thanos's metadata
// package defines it (the fields a shipper fills in).
type thanosMeta struct {
	Labels     map[string]string `json:"labels"`
	Downsample thanosDownsample  `json:"downsample"`
	Source     string            `json:"source"`
	// SegmentFiles are the block's chunk segment files, by name within
	// chunks/ ("000001"), sorted: Thanos's store gateway fetches the
	// segments this lists instead of listing the bucket.
	SegmentFiles []string     `json:"segment_files,omitempty"`
	Files        []thanosFile `json:"files,omitempty"`
}

type thanosDownsample struct {
	Resolution int64 `json:"resolution"`
}

// thanosFile is one entry of thanos.files. meta.json is listed without a
// size, as Thanos lists it (its size changes when the section is added).
// Thanos lists chunks/*, index and meta.json; tombstones, when the block
// has the file, is listed too, since it is uploaded.
type thanosFile struct {
	RelPath   string `json:"rel_path"`
	SizeBytes int64  `json:"size_bytes,omitempty"`
}

// bucketMeta returns the block's meta.json with the thanos section set
// (replacing any there), keeping every other key of the local file as is.
func bucketMeta(raw []byte, files []blockFile, labels map[string]string, source string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("ship: decode meta.json: %w", err)
	}
	if labels == nil {
		labels = map[string]string{}
	}
	t := thanosMeta{Labels: labels, Source: source}
	for _, bf := range files {
		t.Files = append(t.Files, thanosFile{RelPath: bf.rel, SizeBytes: bf.size})
		if seg, ok := strings.CutPrefix(bf.rel, "chunks/"); ok {
			t.SegmentFiles = append(t.SegmentFiles, seg)
		}
	}
	slices.Sort(t.SegmentFiles)
	t.Files = append(t.Files, thanosFile{RelPath: metaFilename})
	// Sorted by path, as Thanos sorts the list it gathers.
	slices.SortFunc(t.Files, func(a, b thanosFile) int { return strings.Compare(a.RelPath, b.RelPath) })
	tb, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("ship: encode thanos section: %w", err)
	}
	m["thanos"] = tb
	out, err := json.MarshalIndent(m, "", "\t")
	if err != nil {
		return nil, fmt.Errorf("ship: encode meta.json: %w", err)
	}
	return out, nil
}
