package ship

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/oklog/ulid/v2"
)

// ShipperFile is the name of the file in the data directory that lists
// the blocks shipped, as Thanos's sidecar names it.
const ShipperFile = "thanos.shipper.json"

// shipperFileVersion is the only version of the file Thanos writes.
const shipperFileVersion = 1

// shipperMeta is the content of thanos.shipper.json:
//
//	{"version":1,"uploaded":["01H...","01H..."]}
//
// A Thanos sidecar pointed at the same data directory reads it as its own.
type shipperMeta struct {
	Version  int         `json:"version"`
	Uploaded []ulid.ULID `json:"uploaded"`
}

// readShipperFile returns the blocks the file in dir lists as shipped; a
// missing file lists none.
func readShipperFile(dir string) (map[ulid.ULID]struct{}, error) {
	path := filepath.Join(dir, ShipperFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[ulid.ULID]struct{}{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrShipperFile, err)
	}
	var m shipperMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrShipperFile, path, err)
	}
	if m.Version != shipperFileVersion {
		return nil, fmt.Errorf("%w: %s: version %d, want %d", ErrShipperFile, path, m.Version, shipperFileVersion)
	}
	set := make(map[ulid.ULID]struct{}, len(m.Uploaded))
	for _, id := range m.Uploaded {
		set[id] = struct{}{}
	}
	return set, nil
}

// writeShipperFile replaces the file in dir by one listing ids, atomically:
// a crash leaves the old file or the new one, never a mix.
func writeShipperFile(dir string, ids []ulid.ULID) error {
	if ids == nil {
		ids = []ulid.ULID{} // "uploaded":[] rather than null, as Thanos writes it
	}
	b, err := json.MarshalIndent(shipperMeta{Version: shipperFileVersion, Uploaded: ids}, "", "\t")
	if err != nil {
		return fmt.Errorf("ship: encode %s: %w", ShipperFile, err)
	}
	return writeFileAtomic(dir, ShipperFile, b)
}

// writeFileAtomic writes data to dir/name through a temporary file that it
// syncs and renames over the target, then syncs dir so the rename is
// durable.
func writeFileAtomic(dir, name string, data []byte) (err error) {
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return fmt.Errorf("ship: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp) // best effort; the error says what went wrong
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("ship: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("ship: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("ship: close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("ship: rename %s: %w", tmp, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("ship: sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("ship: sync dir %s: %w", dir, err)
	}
	return nil
}
