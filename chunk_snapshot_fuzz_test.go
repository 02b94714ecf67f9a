package tsdb

import (
	"encoding/binary"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/metricnames"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/vfs"
)

// snapRecords joins records as the fuzz input encodes them: each one a
// uvarint length and its bytes.
func snapRecords(recs [][]byte) []byte {
	var b []byte
	for _, r := range recs {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

// splitSnapRecords is the inverse of snapRecords; a malformed tail ends
// the list.
func splitSnapRecords(b []byte) [][]byte {
	var recs [][]byte
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			break
		}
		recs = append(recs, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	return recs
}

// snapshotLogRecords returns the records of the two logs of the snapshot
// of a small workload of every kind.
func snapshotLogRecords(t testing.TB) (main, extra [][]byte) {
	fsys := vfs.NewMemFS()
	o := snapOptions(fsys)
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	snapWorkloadN(t, db, 0, 90, 4, true)
	require.NoError(t, db.Close())
	dirs := snapDirs(t, fsys)
	require.Len(t, dirs, 1)
	dir := filepath.Join("data", dirs[0])
	for i, d := range []string{dir, filepath.Join(dir, chunkSnapshotExtraDir)} {
		require.NoError(t, readSnapshotLog(fsys, d, func(rec []byte) error {
			rec = append([]byte(nil), rec...)
			if i == 0 {
				main = append(main, rec)
			} else {
				extra = append(extra, rec)
			}
			return nil
		}))
	}
	return main, extra
}

// FuzzChunkSnapshot: the snapshot decoder, given any records in its two
// logs, returns a snapshot or an error, never panics; a snapshot it
// accepts restores into an empty head without panicking, and the head's
// invariants hold. Seeded with the records of a real snapshot, whole and
// with one record left out of either log.
func FuzzChunkSnapshot(f *testing.F) {
	main, extra := snapshotLogRecords(f)
	f.Add(snapRecords(main), snapRecords(extra))
	for i := range main {
		f.Add(snapRecords(append(append([][]byte(nil), main[:i]...), main[i+1:]...)), snapRecords(extra))
	}
	for i := range extra {
		f.Add(snapRecords(main), snapRecords(append(append([][]byte(nil), extra[:i]...), extra[i+1:]...)))
	}
	f.Fuzz(func(t *testing.T, mainB, extraB []byte) {
		fsys := vfs.NewMemFS()
		dir := "snap"
		for _, l := range []struct {
			dir  string
			recs [][]byte
		}{{dir, splitSnapRecords(mainB)}, {filepath.Join(dir, chunkSnapshotExtraDir), splitSnapRecords(extraB)}} {
			w, err := wlog.Open(nil, nil, fsys, l.dir, wlog.Options{})
			require.NoError(t, err)
			for _, r := range l.recs {
				require.NoError(t, w.Log(r))
			}
			require.NoError(t, w.Close())
		}
		cs, err := readChunkSnapshot(fsys, dir)
		if err != nil {
			require.ErrorIs(t, err, errChunkSnapshot)
			return
		}
		h := newHead(slog.New(slog.DiscardHandler), nil, headOptions{chunkRange: 7200_000, samplesPerChunk: 120, stripeSize: 16, lateWindow: 7200_000, maxExemplars: 100})
		m := newWALMetrics(nil, metricnames.Namer{})
		err = h.restoreChunkSnapshot(fsys, cs, nil, m)
		if err != nil {
			require.ErrorIs(t, err, errChunkSnapshot)
			return
		}
		require.NoError(t, h.checkInvariants(true))
	})
}
