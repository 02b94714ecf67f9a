package tombstones

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/isotsdb/tsdb/internal/corrupt"
	"github.com/isotsdb/tsdb/internal/encoding"
	"github.com/isotsdb/tsdb/vfs"
)

// The tombstones file, as in Prometheus's tsdb/docs/format/tombstones.md:
//
//	magic 0x0130BA30 <4b> | version 1 <1b>
//	(series ref <uvarint64> | mint <varint64> | maxt <varint64>)*
//	CRC32C <4b> of the entries (not of the magic and version)
//
// Each entry is one interval; a series with several intervals has several
// entries. Entries are written in increasing order of series reference,
// but any order is read.
const (
	// Filename is the name of the tombstones file in a block directory.
	Filename = "tombstones"
	// MagicTombstones starts every tombstones file.
	MagicTombstones = 0x0130BA30
	// FormatV1 is the only version of the format.
	FormatV1 = 1

	headerLen = 5
	crcLen    = 4
	minEntry  = 3 // bytes of the smallest entry: three one-byte varints
)

// castagnoli is the CRC32C table; it is never modified after
// initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors of the tombstones file.
var (
	// ErrChecksum is wrapped by the *corrupt.Error of a CRC32C that does
	// not match. Damage of any kind is a *corrupt.Error, for which
	// errors.Is(err, corrupt.ErrCorrupt) holds.
	ErrChecksum = errors.New("tombstones: checksum mismatch")
	// ErrUnsupportedVersion is returned for a file with the right magic
	// and an unknown version.
	ErrUnsupportedVersion = errors.New("tombstones: unsupported format version")
	// ErrMissing is wrapped, with fs.ErrNotExist, by the error ReadFile
	// returns when the block has no tombstones file. Every writer creates
	// one (empty if nothing is deleted), so the caller decides: a block
	// whose meta.json counts no tombstones can do without it, one that
	// counts some has lost its deletions.
	ErrMissing = errors.New("tombstones: file missing")
)

// Encode returns the contents of a tombstones file holding the intervals
// of tr.
func Encode(tr Reader) ([]byte, error) {
	b := make([]byte, 0, headerLen+crcLen+int(min(tr.Total(), 1<<20))*8)
	b = binary.BigEndian.AppendUint32(b, MagicTombstones)
	b = append(b, FormatV1)
	err := tr.Iter(func(ref uint64, ivs Intervals) error {
		for _, iv := range ivs {
			b = binary.AppendUvarint(b, ref)
			b = binary.AppendVarint(b, iv.Mint)
			b = binary.AppendVarint(b, iv.Maxt)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tombstones: encode: %w", err)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[headerLen:], castagnoli)), nil
}

// Decode parses the contents of a tombstones file. Intervals of one series
// are merged as by Intervals.Add; intervals with Mint > Maxt are dropped.
func Decode(b []byte) (*MemTombstones, error) {
	return decode(b, "")
}

func decode(b []byte, file string) (*MemTombstones, error) {
	damaged := func(off int, err error) error {
		return corrupt.At(file, int64(off), err)
	}
	if len(b) < headerLen+crcLen {
		return nil, damaged(0, fmt.Errorf("file of %d bytes is too short", len(b)))
	}
	if m := binary.BigEndian.Uint32(b); m != MagicTombstones {
		return nil, damaged(0, fmt.Errorf("bad magic %#x", m))
	}
	if v := b[4]; v != FormatV1 {
		return nil, fmt.Errorf("%w: %d", ErrUnsupportedVersion, v)
	}
	body := b[headerLen : len(b)-crcLen]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(b)-crcLen:]) {
		return nil, damaged(len(b)-crcLen, ErrChecksum)
	}
	// Collect first and merge per series after, so that many entries of
	// one series cost O(n log n), not O(n²).
	type entry struct {
		ref uint64
		iv  Interval
	}
	entries := make([]entry, 0, len(body)/minEntry)
	d := encoding.NewDecbuf(body)
	for n := 0; d.Len() > 0; n++ {
		ref := d.Uvarint()
		mint := d.Varint()
		maxt := d.Varint()
		if d.Failed() {
			// A *corrupt.Error at the field that failed.
			return nil, fmt.Errorf("tombstones: entry %d: %w", n, d.ErrIn(file, headerLen))
		}
		if mint <= maxt {
			entries = append(entries, entry{ref, Interval{mint, maxt}})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.ref != b.ref:
			if a.ref < b.ref {
				return -1
			}
			return 1
		case a.iv.Mint < b.iv.Mint:
			return -1
		case a.iv.Mint > b.iv.Mint:
			return 1
		}
		return 0
	})
	t := NewMemTombstones()
	for i := 0; i < len(entries); {
		j := i
		var ivs Intervals
		for ; j < len(entries) && entries[j].ref == entries[i].ref; j++ {
			// Sorted by Mint, an interval either extends the last one
			// (overlapping or adjacent, as Intervals.Add merges) or
			// starts a new one.
			iv := entries[j].iv
			if k := len(ivs) - 1; k >= 0 && (ivs[k].Maxt == maxInt64 || iv.Mint <= ivs[k].Maxt+1) {
				ivs[k].Maxt = max(ivs[k].Maxt, iv.Maxt)
				continue
			}
			ivs = append(ivs, iv)
		}
		t.m[entries[i].ref] = slices.Clip(ivs)
		i = j
	}
	return t, nil
}

// WriteFile writes the intervals of tr to the tombstones file of the block
// directory dir: through a temporary file that is synced, renamed into
// place, and made durable by syncing dir. It returns the file's size.
func WriteFile(fsys vfs.FS, dir string, tr Reader) (size int64, err error) {
	b, err := Encode(tr)
	if err != nil {
		return 0, err
	}
	path := filepath.Join(dir, Filename)
	tmp := path + ".tmp"
	f, err := fsys.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("tombstones: create %s: %w", tmp, err)
	}
	defer func() {
		if err != nil {
			if f != nil {
				_ = f.Close()
			}
			_ = fsys.Remove(tmp)
		}
	}()
	if _, err := f.Write(b); err != nil {
		return 0, fmt.Errorf("tombstones: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("tombstones: sync %s: %w", tmp, err)
	}
	cerr := f.Close()
	f = nil
	if cerr != nil {
		return 0, fmt.Errorf("tombstones: close %s: %w", tmp, cerr)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return 0, fmt.Errorf("tombstones: rename %s: %w", tmp, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return 0, fmt.Errorf("tombstones: sync dir %s: %w", dir, err)
	}
	return int64(len(b)), nil
}

// ReadFile reads the tombstones file of the block directory dir and
// returns its intervals and its size. A missing file is an error wrapping
// ErrMissing and fs.ErrNotExist (see ErrMissing).
func ReadFile(fsys vfs.FS, dir string) (Reader, int64, error) {
	path := filepath.Join(dir, Filename)
	m, err := fsys.Map(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%w: %s: %w", ErrMissing, path, err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("tombstones: read %s: %w", path, err)
	}
	defer m.Close()
	b := m.Bytes()
	t, err := decode(b, path)
	if err != nil {
		if errors.Is(err, ErrUnsupportedVersion) {
			err = fmt.Errorf("%w in %s", err, path)
		}
		return nil, 0, err
	}
	return t, int64(len(b)), nil
}
