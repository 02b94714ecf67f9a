package wlog

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// walContent is the decoded content of a log or checkpoint.
type walContent struct {
	series  map[uint64]string // ref -> labels.String()
	samples []record.RefSample
	stones  []record.Stone
	other   int // records of other types
}

func decodeAll(t *testing.T, fsys vfs.FS, dirs ...string) walContent {
	t.Helper()
	c := walContent{series: map[uint64]string{}}
	var dec record.Decoder
	for _, dir := range dirs {
		recs, err := readAll(t, fsys, dir)
		require.NoError(t, err)
		for _, rec := range recs {
			switch record.RecordType(rec) {
			case record.Series:
				s, err := dec.Series(rec, nil)
				require.NoError(t, err)
				for _, x := range s {
					c.series[x.Ref] = x.Labels.String()
				}
			case record.Samples:
				c.samples, err = dec.Samples(rec, c.samples)
				require.NoError(t, err)
			case record.Tombstones:
				c.stones, err = dec.Tombstones(rec, c.stones)
				require.NoError(t, err)
			default:
				c.other++
			}
		}
	}
	return c
}

// writeTestWAL logs, per segment, series refs [10*seg, 10*seg+10), samples
// of every series so far at times seg*100..seg*100+9, a tombstone per
// segment and a record of an unknown type, and cuts a segment after each.
func writeTestWAL(t *testing.T, w *WL, fromSeg, toSeg int) {
	t.Helper()
	var enc record.Encoder
	for seg := fromSeg; seg <= toSeg; seg++ {
		var series []record.RefSeries
		for r := 10 * seg; r < 10*seg+10; r++ {
			series = append(series, record.RefSeries{Ref: uint64(r), Labels: labels.FromStrings("__name__", "m", "i", fmt.Sprint(r))})
		}
		var samples []record.RefSample
		for r := 0; r < 10*seg+10; r++ {
			for ts := seg * 100; ts < seg*100+10; ts++ {
				samples = append(samples, record.RefSample{Ref: uint64(r), T: int64(ts), V: float64(r*1000 + ts)})
			}
		}
		stones := []record.Stone{{Ref: uint64(seg), Intervals: tombstones.Intervals{{Mint: int64(seg * 100), Maxt: int64(seg*100 + 5)}}}}
		require.NoError(t, w.Log(enc.Series(series, nil), enc.Samples(samples, nil), enc.Tombstones(stones, nil), []byte{byte(record.MmapMarkers), 1, 2, 3}))
		_, err := w.NextSegment()
		require.NoError(t, err)
	}
}

func TestCheckpoint(t *testing.T) {
	for _, compression := range []CompressionType{CompressionNone, CompressionSnappy} {
		t.Run(string(compression), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			w := openTest(t, fsys, Options{SegmentSize: smallSegment, Compression: compression})
			writeTestWAL(t, w, 0, 5) // segments 0..5, active 6

			_, err := Checkpoint(nil, fsys, w, 0, 6, func(uint64) bool { return true }, 0)
			require.ErrorIs(t, err, ErrInvalidRange, "the active segment cannot be checkpointed")
			_, _, err = LastCheckpoint(fsys, testDir)
			require.ErrorIs(t, err, ErrNotFound)

			keep := func(ref uint64) bool { return ref%2 == 0 }
			const mint = 250
			stats, err := Checkpoint(nil, fsys, w, 0, 3, keep, mint)
			require.NoError(t, err)
			name, idx, err := LastCheckpoint(fsys, testDir)
			require.NoError(t, err)
			require.Equal(t, 3, idx)
			require.Equal(t, filepath.Join(testDir, "checkpoint.00000003"), name)

			cp := decodeAll(t, fsys, name)
			require.Zero(t, cp.other)
			require.Len(t, cp.series, 20) // refs 0..39, even
			for ref := range cp.series {
				require.Zero(t, ref%2)
				require.Less(t, ref, uint64(40))
			}
			for _, s := range cp.samples {
				require.Zero(t, s.Ref%2)
				require.GreaterOrEqual(t, s.T, int64(mint))
				require.Equal(t, float64(int(s.Ref)*1000+int(s.T)), s.V)
			}
			// Only segment 3's samples (t 300..309) are >= mint: 40 series
			// x 10 samples, half of the series kept.
			require.Len(t, cp.samples, 200)
			// Tombstones: refs 0..3 of which 0 and 2 are kept; 0's ends at 5
			// < mint, 2's at 205 < mint: none kept.
			require.Empty(t, cp.stones)
			require.Equal(t, CheckpointStats{
				DroppedSeries: 20, TotalSeries: 40,
				DroppedSamples: (10+20+30+40)*10 - 200, TotalSamples: (10 + 20 + 30 + 40) * 10,
				DroppedTombstones: 4, TotalTombstones: 4,
				DroppedRecords: 4,
			}, *stats)

			// The owner then truncates; replaying checkpoint + the remaining
			// segments gives the same view of what is kept.
			require.NoError(t, w.Truncate(idx+1))
			require.NoError(t, DeleteCheckpoints(fsys, testDir, idx))
			first, _, err := w.Segments()
			require.NoError(t, err)
			require.Equal(t, 4, first)

			// A second checkpoint includes the first one's content.
			writeTestWAL(t, w, 6, 6) // active was 6: logs go to 6, then 7 is active
			_, err = Checkpoint(nil, fsys, w, 7, 6, keep, 0)
			require.ErrorIs(t, err, ErrInvalidRange)
			_, err = Checkpoint(nil, fsys, w, 6, 6, keep, 0)
			require.ErrorIs(t, err, ErrInvalidRange, "gap: segments 4 and 5 would be skipped")
			stats, err = Checkpoint(nil, fsys, w, 0, 5, keep, 400)
			require.NoError(t, err)
			require.NoError(t, DeleteCheckpoints(fsys, testDir, 5))
			name, idx, err = LastCheckpoint(fsys, testDir)
			require.NoError(t, err)
			require.Equal(t, 5, idx)
			_, err = fsys.Stat(filepath.Join(testDir, "checkpoint.00000003"))
			require.Error(t, err, "older checkpoint deleted")

			cp = decodeAll(t, fsys, name)
			require.Len(t, cp.series, 30) // even refs of 0..59
			// Series: 20 from the old checkpoint and 20 from segments 4 and 5,
			// of which the 10 odd ones are dropped.
			require.Equal(t, 40, stats.TotalSeries)
			require.Equal(t, 10, stats.DroppedSeries)
			for _, s := range cp.samples {
				require.GreaterOrEqual(t, s.T, int64(400))
			}
			require.Len(t, cp.samples, (50+60)*10/2)
			require.Equal(t, []record.Stone{{Ref: 4, Intervals: tombstones.Intervals{{Mint: 400, Maxt: 405}}}}, cp.stones)
			require.NoError(t, w.Close())
		})
	}
}

// TestCheckpointCrash crashes after every mutating operation of a
// checkpoint. After the crash, opening the log removes any temporary
// directory, and the newest checkpoint is either the old one or the
// complete new one.
func TestCheckpointCrash(t *testing.T) {
	keep := func(ref uint64) bool { return ref%3 != 0 }
	setup := func() (*vfs.MemFS, walContent) {
		fsys := vfs.NewMemFS()
		w, err := Open(nil, nil, fsys, testDir, Options{SegmentSize: smallSegment})
		require.NoError(t, err)
		writeTestWAL(t, w, 0, 2)
		_, err = Checkpoint(nil, fsys, w, 0, 1, keep, 0)
		require.NoError(t, err)
		writeTestWAL(t, w, 3, 4)
		require.NoError(t, w.Close())
		fsys.SyncAll()
		old := decodeAll(t, fsys, filepath.Join(testDir, "checkpoint.00000001"))
		return fsys, old
	}
	runCheckpoint := func(fsys *vfs.MemFS) error {
		w, err := Open(nil, nil, fsys, testDir, Options{SegmentSize: smallSegment})
		require.NoError(t, err)
		defer w.Close()
		_, err = Checkpoint(nil, fsys, w, 2, 4, keep, 0)
		return err
	}

	// The expected new checkpoint.
	fsys, old := setup()
	base := fsys.Ops()
	require.NoError(t, runCheckpoint(fsys))
	n := fsys.Ops() - base
	want := decodeAll(t, fsys, filepath.Join(testDir, "checkpoint.00000004"))
	require.Len(t, want.series, 33) // refs 0..49 minus multiples of 3
	require.NotEqual(t, len(old.series), len(want.series))

	sawOld, sawNew := false, false
	for k := 0; k <= n; k++ {
		fsys, _ := setup()
		fsys.CrashAfter(k)
		_ = runCheckpoint(fsys)
		crashed := fsys.CrashState()

		w, err := Open(nil, nil, crashed, testDir, Options{SegmentSize: smallSegment})
		require.NoError(t, err, "crash after op %d", k)
		require.NoError(t, w.Close())
		entries, err := crashed.ReadDir(testDir)
		require.NoError(t, err)
		for _, e := range entries {
			require.False(t, isTempCheckpoint(e), "crash after op %d: %s left behind", k, e.Name())
		}
		name, idx, err := LastCheckpoint(crashed, testDir)
		require.NoError(t, err)
		got := decodeAll(t, crashed, name)
		switch idx {
		case 1:
			sawOld = true
			require.Equal(t, old, got, "crash after op %d", k)
		case 4:
			sawNew = true
			require.Equal(t, want, got, "crash after op %d", k)
		default:
			require.Failf(t, "unexpected checkpoint", "crash after op %d: checkpoint %d", k, idx)
		}
	}
	require.True(t, sawOld)
	require.True(t, sawNew)
}

// TestCheckpointFailure fails a checkpoint midway: the error is returned,
// the temporary directory is removed and the old checkpoint stays.
func TestCheckpointFailure(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{SegmentSize: smallSegment})
	writeTestWAL(t, w, 0, 3)
	_, err := Checkpoint(nil, fsys, w, 0, 1, func(uint64) bool { return true }, 0)
	require.NoError(t, err)
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpCreate} {
		fsys.SetHook(func(o vfs.Op, path string) error {
			if o == op && strings.Contains(path, "checkpoint.00000003") {
				return fmt.Errorf("injected %s failure", o)
			}
			return nil
		})
		_, err := Checkpoint(nil, fsys, w, 2, 3, func(uint64) bool { return true }, 0)
		require.Error(t, err, "%s", op)
		fsys.SetHook(nil)
		_, err = fsys.Stat(filepath.Join(testDir, "checkpoint.00000003.tmp"))
		require.Error(t, err, "%s: temporary dir left", op)
		_, idx, err := LastCheckpoint(fsys, testDir)
		require.NoError(t, err)
		require.Equal(t, 1, idx, "%s", op)
	}
}

func TestCheckpointKeepsNaN(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	var enc record.Encoder
	stale := math.Float64frombits(0x7ff0000000000002)
	require.NoError(t, w.Log(
		enc.Series([]record.RefSeries{{Ref: 1, Labels: labels.FromStrings("a", "b")}}, nil),
		enc.Samples([]record.RefSample{{Ref: 1, T: 5, V: stale}}, nil)))
	_, err := w.NextSegment()
	require.NoError(t, err)
	_, err = Checkpoint(nil, fsys, w, 0, 0, func(uint64) bool { return true }, 0)
	require.NoError(t, err)
	name, _, err := LastCheckpoint(fsys, testDir)
	require.NoError(t, err)
	c := decodeAll(t, fsys, name)
	require.Len(t, c.samples, 1)
	require.Equal(t, uint64(0x7ff0000000000002), math.Float64bits(c.samples[0].V))
}

// TestCheckpointExemplars: a checkpoint keeps the exemplars of kept series
// from mint on, with their labels and exact values, and counts the rest
// as dropped.
func TestCheckpointExemplars(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	var enc record.Encoder
	stale := math.Float64frombits(0x7ff0000000000002)
	series := []record.RefSeries{{Ref: 1, Labels: labels.FromStrings("a", "1")}, {Ref: 2, Labels: labels.FromStrings("a", "2")}}
	exs := []record.RefExemplar{
		{Ref: 1, T: 5, V: 1, Labels: labels.FromStrings("trace_id", "old")},
		{Ref: 1, T: 10, V: stale, Labels: labels.FromStrings("trace_id", "kept")},
		{Ref: 2, T: 20, V: 3, Labels: labels.FromStrings("trace_id", "dropped series")},
		{Ref: 1, T: 30, V: 4},
	}
	require.NoError(t, w.Log(enc.Series(series, nil), enc.Exemplars(exs, nil), enc.Exemplars(exs[:1], nil)))
	_, err := w.NextSegment()
	require.NoError(t, err)
	stats, err := Checkpoint(nil, fsys, w, 0, 0, func(ref uint64) bool { return ref == 1 }, 10)
	require.NoError(t, err)
	require.Equal(t, 5, stats.TotalExemplars)
	require.Equal(t, 3, stats.DroppedExemplars)
	require.Zero(t, stats.DroppedRecords)
	name, _, err := LastCheckpoint(fsys, testDir)
	require.NoError(t, err)
	recs, err := readAll(t, fsys, name)
	require.NoError(t, err)
	var got []record.RefExemplar
	var dec record.Decoder
	for _, rec := range recs {
		if record.RecordType(rec) == record.Exemplars {
			got, err = dec.Exemplars(rec, got)
			require.NoError(t, err)
		}
	}
	require.Len(t, got, 2)
	require.Equal(t, uint64(1), got[0].Ref)
	require.Equal(t, int64(10), got[0].T)
	require.Equal(t, uint64(0x7ff0000000000002), math.Float64bits(got[0].V))
	require.Equal(t, `{trace_id="kept"}`, got[0].Labels.String())
	require.Equal(t, int64(30), got[1].T)
	require.True(t, got[1].Labels.IsEmpty())
}
