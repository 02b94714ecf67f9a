package wlog

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/isotsdb/tsdb/vfs"
)

// segmentRef names one segment file.
type segmentRef struct {
	dir   string
	index int
}

func (s segmentRef) path() string { return SegmentName(s.dir, s.index) }

// parseSegmentName returns the index of a segment file name: a non-empty
// string of ASCII digits (eight when we write it; Prometheus's readers
// accept other widths, so we do too).
func parseSegmentName(name string) (int, bool) {
	if name == "" || len(name) > 9 { // 9 digits always fit an int
		return 0, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	k, err := strconv.Atoi(name)
	return k, err == nil
}

// listSegments returns the segments in dir in index order. Other entries
// (checkpoints, temporary files) are ignored. A gap in the numbering, or
// two names for one index, is an error wrapping ErrNotSequential.
func listSegments(fsys vfs.FS, dir string) ([]segmentRef, error) {
	refs, err := listAllSegments(fsys, dir)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(refs); i++ {
		if refs[i].index != refs[i-1].index+1 {
			return nil, fmt.Errorf("%w: %s: segment %d follows %d", ErrNotSequential, dir, refs[i].index, refs[i-1].index)
		}
	}
	return refs, nil
}

// listAllSegments returns the segments in dir in index order, gaps
// included.
func listAllSegments(fsys vfs.FS, dir string) ([]segmentRef, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wlog: list segments: %w", err)
	}
	var refs []segmentRef
	for _, e := range entries {
		k, ok := parseSegmentName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		refs = append(refs, segmentRef{dir: dir, index: k})
	}
	slices.SortFunc(refs, func(a, b segmentRef) int { return a.index - b.index })
	return refs, nil
}

// SegmentIndexes returns the indexes of the segment files in dir in
// increasing order. Unlike the rest of the package it accepts gaps in the
// numbering, so that an owner can tell which segments are missing before
// it opens the log. The error wraps fs.ErrNotExist if dir does not exist.
func SegmentIndexes(fsys vfs.FS, dir string) ([]int, error) {
	refs, err := listAllSegments(fsys, dir)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(refs))
	for i, r := range refs {
		out[i] = r.index
	}
	return out, nil
}

// segmentRange returns the first and last segment index in dir, or -1, -1
// if there is none.
func segmentRange(fsys vfs.FS, dir string) (first, last int, err error) {
	refs, err := listSegments(fsys, dir)
	if err != nil {
		return 0, 0, err
	}
	if len(refs) == 0 {
		return -1, -1, nil
	}
	return refs[0].index, refs[len(refs)-1].index, nil
}

// syncParent makes the directory entry of path durable.
func syncParent(fsys vfs.FS, path string) error {
	return fsys.SyncDir(filepath.Dir(path))
}
