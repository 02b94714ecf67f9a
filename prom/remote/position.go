package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/isotsdb/tsdb/internal/wlog"
)

// positionFile is the JSON content of DIR/remote/<name>.position: every
// sample in a WAL record ending at or before (Segment, Offset) was
// acknowledged by the receiver.
type positionFile struct {
	Segment int   `json:"segment"`
	Offset  int64 `json:"offset"`
}

// maxPositionFile bounds what readPosition accepts; the file holds two
// small numbers.
const maxPositionFile = 4 << 10

// positionPath returns where the sender named name keeps its position.
func positionPath(dir, name string) string {
	return filepath.Join(dir, "remote", name+".position")
}

// decodePosition parses a position file. It returns an error wrapping
// ErrPositionFile for anything but a valid, non-negative position.
func decodePosition(b []byte) (wlog.Position, error) {
	if len(b) > maxPositionFile {
		return wlog.Position{}, fmt.Errorf("%w: %d bytes", ErrPositionFile, len(b))
	}
	var p positionFile
	if err := json.Unmarshal(b, &p); err != nil {
		return wlog.Position{}, fmt.Errorf("%w: %w", ErrPositionFile, err)
	}
	if p.Segment < 0 || p.Offset < 0 {
		return wlog.Position{}, fmt.Errorf("%w: negative segment %d or offset %d", ErrPositionFile, p.Segment, p.Offset)
	}
	return wlog.Position{Segment: p.Segment, Offset: p.Offset}, nil
}

// encodePosition is the inverse of decodePosition.
func encodePosition(p wlog.Position) []byte {
	b, _ := json.Marshal(positionFile{Segment: p.Segment, Offset: p.Offset}) // cannot fail: two integers
	return append(b, '\n')
}

// readPosition reads the position file at path; ok is false if there is
// none.
func readPosition(path string) (p wlog.Position, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return wlog.Position{}, false, nil
	}
	if err != nil {
		return wlog.Position{}, false, fmt.Errorf("remote: read position: %w", err)
	}
	p, err = decodePosition(b)
	if err != nil {
		return wlog.Position{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return p, true, nil
}

// writePosition replaces the position file at path atomically: a reader
// (or a crash) sees the old content or the new one, never a mix. It writes
// a temporary file, fsyncs it, renames it over path and fsyncs the
// directory.
func writePosition(path string, p wlog.Position) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("remote: write position: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o666)
	if err != nil {
		return fmt.Errorf("remote: write position: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	_, err = f.Write(encodePosition(p))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("remote: write position: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("remote: write position: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("remote: sync position dir: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("remote: sync position dir: %w", err)
	}
	return nil
}
