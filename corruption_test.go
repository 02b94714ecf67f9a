package tsdb

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// TestCorruptionErrorContract damages each kind of file in turn and checks
// the one contract of corruption errors: errors.Is(err, ErrCorrupt) holds,
// and errors.As gives a *CorruptionError naming the damaged file (for the
// bytes of a chunk, which know no file, the offset in them). The error is
// produced through the public API where that reports it, else through the
// internal reader whose error the public API acts on (Open repairs a
// damaged WAL silently, and skips a block that does not open).
func TestCorruptionErrorContract(t *testing.T) {
	base := advBaseDB(t)
	b0 := filepath.Join("data", base.blocks[0].ULID.String())

	// openB0 damages a copy of the base DB and opens block 0 as Open does.
	openB0 := func(damage func(*vfs.MemFS)) func(t *testing.T) error {
		return func(t *testing.T) error {
			fsys := base.fs.Crash()
			damage(fsys)
			b, err := openBlock(fsys, b0)
			if err == nil {
				require.NoError(t, b.close())
			}
			require.ErrorIs(t, err, ErrCorruptBlock)
			return err
		}
	}
	// setByte sets the byte at off of path (from the end if off < 0).
	setByte := func(t *testing.T, fsys *vfs.MemFS, path string, off int, v byte) {
		b, err := fsys.ReadFile(path)
		require.NoError(t, err)
		if off < 0 {
			off += len(b)
		}
		b[off] = v
		mustWrite(t, fsys, path, b)
	}
	// readWAL reads every record of the base DB's WAL segments after
	// damage.
	readWAL := func(damage func(t *testing.T, fsys *vfs.MemFS, seg string)) func(t *testing.T) error {
		return func(t *testing.T) error {
			fsys := base.fs.Crash()
			seg, _ := advWALFiles(t, fsys)
			damage(t, fsys, seg)
			sr, err := wlog.NewSegmentsReader(fsys, advWALDir)
			require.NoError(t, err)
			defer sr.Close()
			r := wlog.NewReader(sr)
			for r.Next() {
			}
			return r.Err()
		}
	}

	for _, tc := range []struct {
		name string
		file string // the file the error must name, relative to the data dir
		err  func(t *testing.T) error
	}{
		{
			name: "garbled index",
			file: filepath.Join(b0, "index"),
			err: func(t *testing.T) error {
				return openB0(func(fsys *vfs.MemFS) { setByte(t, fsys, filepath.Join(b0, "index"), -1, 0) })(t)
			},
		},
		{
			name: "garbled chunk segment header",
			file: filepath.Join(b0, "chunks", "000001"),
			err: func(t *testing.T) error {
				return openB0(func(fsys *vfs.MemFS) { setByte(t, fsys, filepath.Join(b0, "chunks", "000001"), 0, 0) })(t)
			},
		},
		{
			name: "garbled chunk segment data, found by a query",
			file: filepath.Join(b0, "chunks", "000001"),
			err: func(t *testing.T) error {
				fsys := base.fs.Crash()
				flipByte(t, fsys, filepath.Join(b0, "chunks", "000001"), 0.5)
				db, err := openAdv(fsys, nil)
				require.NoError(t, err)
				defer func() { require.NoError(t, db.Close()) }()
				_, err = fullQuery(db)
				require.ErrorIs(t, err, ErrCorruptBlock)
				return err
			},
		},
		{
			name: "garbled tombstones",
			file: filepath.Join(b0, "tombstones"),
			err: func(t *testing.T) error {
				return openB0(func(fsys *vfs.MemFS) { setByte(t, fsys, filepath.Join(b0, "tombstones"), 0, 0) })(t)
			},
		},
		{
			name: "garbled meta.json",
			file: filepath.Join(b0, "meta.json"),
			err: func(t *testing.T) error {
				return openB0(func(fsys *vfs.MemFS) { setByte(t, fsys, filepath.Join(b0, "meta.json"), 0, '[') })(t)
			},
		},
		{
			name: "missing index",
			file: b0,
			err: func(t *testing.T) error {
				return openB0(func(fsys *vfs.MemFS) { remove(t, fsys, filepath.Join(b0, "index")) })(t)
			},
		},
		{
			name: "torn WAL record",
			file: "newest segment",
			err: readWAL(func(t *testing.T, fsys *vfs.MemFS, seg string) {
				b, err := fsys.ReadFile(seg)
				require.NoError(t, err)
				// The first fragment's 7-byte header and 3 bytes of its data.
				mustWrite(t, fsys, seg, b[:10])
			}),
		},
		{
			name: "garbled WAL record",
			file: "newest segment",
			err: readWAL(func(t *testing.T, fsys *vfs.MemFS, seg string) {
				setByte(t, fsys, seg, 10, 0xff)
			}),
		},
		{
			name: "WAL record that does not decode",
			file: filepath.Join("wal", "00000000"),
			err: func(t *testing.T) error {
				fsys := vfs.NewMemFS()
				w, err := wlog.Open(nil, nil, fsys, "wal", wlog.Options{})
				require.NoError(t, err)
				// A series record cut inside its first reference.
				require.NoError(t, w.Log([]byte{byte(record.Series), 0x80}))
				require.NoError(t, w.Close())
				db, err := openAdv(vfs.NewMemFS(), func(o *Options) { o.NoWAL = true })
				require.NoError(t, err)
				defer func() { require.NoError(t, db.Close()) }()
				sr, err := wlog.NewSegmentsReader(fsys, "wal")
				require.NoError(t, err)
				defer sr.Close()
				rp := newReplayer(db.head, newWALMetrics(nil, db.metricNames))
				defer rp.close()
				return rp.replay(wlog.NewReader(sr), "wal", -1)
			},
		},
		{
			name: "corrupt chunk bytes",
			file: "",
			err: func(t *testing.T) error {
				c, err := chunks.FromData(chunks.EncXOR, []byte{0, 3, 0xff})
				if err != nil {
					return err
				}
				it := c.Iterator(nil)
				for it.Next() != chunks.ValNone {
				}
				return it.Err()
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			require.ErrorIs(t, err, ErrCorrupt)
			var ce *CorruptionError
			require.ErrorAs(t, err, &ce)
			switch tc.file {
			case "newest segment":
				_, seg, _, ok := wlog.CorruptSegment(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, wlog.SegmentName(advWALDir, seg), ce.File)
			case "":
				require.Empty(t, ce.File)
				require.GreaterOrEqual(t, ce.Offset, int64(0))
			default:
				require.Equal(t, tc.file, ce.File, "%v", err)
			}
			require.Contains(t, err.Error(), ce.File)
			// Wrapping keeps the contract.
			wrapped := fmt.Errorf("caller: %w", err)
			require.True(t, errors.Is(wrapped, ErrCorrupt) && errors.As(wrapped, &ce))
		})
	}
}
