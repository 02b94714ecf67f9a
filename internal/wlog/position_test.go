package wlog

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/tombstones"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestPositionOrdersRecords: a Position taken between two Log calls
// separates their records as a Reader sees them (Before), whatever the
// record sizes (fragments over pages, segment cuts, a page padded because
// its tail was too short), with and without compression.
func TestPositionOrdersRecords(t *testing.T) {
	for _, comp := range []CompressionType{CompressionNone, CompressionSnappy} {
		t.Run(string(comp), func(t *testing.T) {
			seed := rand.Uint64()
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 0))
			fsys := vfs.NewMemFS()
			w := openTest(t, fsys, Options{SegmentSize: smallSegment, Compression: comp})
			const n = 400
			marks := make([]Position, n) // marks[i]: taken after record i was logged
			for i := range n {
				size := rng.IntN(3 * PageSize / 2)
				if rng.IntN(3) == 0 {
					size = PageSize - headerSize*2 - rng.IntN(3) // near a page's end
				}
				require.NoError(t, w.Log(testRecord(rng, i, size)))
				p, err := w.Position()
				require.NoError(t, err)
				if i > 0 {
					require.Positive(t, p.Compare(marks[i-1]), "positions grow")
				}
				marks[i] = p
			}
			sr, err := NewSegmentsReader(fsys, testDir)
			require.NoError(t, err)
			defer sr.Close()
			r := NewReader(sr)
			for i := 0; r.Next(); i++ {
				end := Position{Segment: r.Segment(), Offset: r.Offset()}
				require.True(t, marks[i].Before(end), "record %d before the position taken after it", i)
				if i > 0 {
					require.False(t, marks[i-1].Before(end), "record %d after the position taken before it", i)
				}
				require.True(t, EndOf(r.Segment()).Compare(end) > 0)
			}
			require.NoError(t, r.Err())
		})
	}
}

// TestStartAfter: a log whose active segment is at or below a position's
// segment gets empty segments up to it and starts after it; the segments
// stay numbered without a gap, and records logged then lie after the
// position. A log already after it is left alone; one too far behind, or
// one that logged already, is refused without a change.
func TestStartAfter(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	require.NoError(t, w.StartAfter(-1)) // already after
	require.Equal(t, 0, w.ActiveSegment())
	require.NoError(t, w.StartAfter(3))
	require.Equal(t, 4, w.ActiveSegment())
	mark := Position{Segment: 3, Offset: 1 << 20}
	require.NoError(t, w.Log([]byte("after")))
	first, last, err := w.Segments()
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 4}, [2]int{first, last})
	sr, err := NewSegmentsReader(fsys, testDir) // fails on a gap
	require.NoError(t, err)
	r := NewReader(sr)
	require.True(t, r.Next())
	require.False(t, mark.Before(Position{Segment: r.Segment(), Offset: r.Offset()}))
	require.False(t, r.Next())
	require.NoError(t, r.Err())
	require.NoError(t, sr.Close())

	require.Error(t, w.StartAfter(10), "records were logged into the active segment")
	require.Equal(t, 4, w.ActiveSegment())
	require.NoError(t, w.Close())

	w = openTest(t, vfs.NewMemFS(), Options{})
	require.ErrorIs(t, w.StartAfter(maxSkip+5), ErrTooFarBehind)
	require.Equal(t, 0, w.ActiveSegment())
}

// TestCheckpointMarked: the samples of records before the mark with a
// time before its MaxTime are dropped, those after it kept; the records
// of the previous checkpoint stand at its end. Tombstones are kept as
// mintOf says.
func TestCheckpointMarked(t *testing.T) {
	fsys := vfs.NewMemFS()
	w := openTest(t, fsys, Options{})
	var enc record.Encoder
	logSample := func(ref uint64, ts int64) Position {
		require.NoError(t, w.Log(enc.Samples([]record.RefSample{{Ref: ref, T: ts, V: 1}}, nil)))
		p, err := w.Position()
		require.NoError(t, err)
		return p
	}
	series := []record.RefSeries{{Ref: 1, Labels: labels.FromStrings("__name__", "a")}}
	require.NoError(t, w.Log(enc.Series(series, nil)))
	logSample(1, 10) // segment 0: before the mark, in the previous checkpoint
	_, err := w.NextSegment()
	require.NoError(t, err)
	_, err = CheckpointFrom(nil, fsys, w, 0, 0, func(uint64) (int64, bool) { return 0, true })
	require.NoError(t, err)
	logSample(1, 20) // segment 1
	mark := logSample(1, 30)
	logSample(1, 40) // after the mark: a late sample
	logSample(1, 150)
	require.NoError(t, w.Log(enc.Tombstones([]record.Stone{{Ref: 1, Intervals: tombstones.Intervals{{Mint: 0, Maxt: 5}}}}, nil)))
	_, err = w.NextSegment()
	require.NoError(t, err)

	all := func(uint64) (int64, bool) { return 0, true }
	_, err = CheckpointMarked(nil, fsys, w, 1, 1, all, &Mark{Position: mark, MaxTime: 100})
	require.NoError(t, err)
	c := decodeAll(t, fsys, filepath.Join(testDir, checkpointName(1)))
	var times []int64
	for _, s := range c.samples {
		times = append(times, s.T)
	}
	require.Equal(t, []int64{40, 150}, times, "before the mark and its time: dropped")
	require.Len(t, c.stones, 1, "tombstones are not the mark's")

	// The previous checkpoint (index 0) is at the end of segment 0: with
	// a mark in segment 1 its samples lie before it; with a mark in
	// segment 0, after it.
	for _, tc := range []struct {
		mark Position
		want []int64
	}{
		{Position{Segment: 1, Offset: 0}, []int64{20, 30, 40, 150}},
		{Position{Segment: 0, Offset: 1 << 40}, []int64{10, 20, 30, 40, 150}},
	} {
		fs2 := vfs.NewMemFS()
		w2 := openTest(t, fs2, Options{})
		require.NoError(t, w2.Log(enc.Series(series, nil), enc.Samples([]record.RefSample{{Ref: 1, T: 10, V: 1}}, nil)))
		_, err := w2.NextSegment()
		require.NoError(t, err)
		_, err = CheckpointFrom(nil, fs2, w2, 0, 0, all)
		require.NoError(t, err)
		for _, ts := range []int64{20, 30, 40, 150} {
			require.NoError(t, w2.Log(enc.Samples([]record.RefSample{{Ref: 1, T: ts, V: 1}}, nil)))
		}
		_, err = w2.NextSegment()
		require.NoError(t, err)
		_, err = CheckpointMarked(nil, fs2, w2, 1, 1, all, &Mark{Position: tc.mark, MaxTime: 15})
		require.NoError(t, err)
		c := decodeAll(t, fs2, filepath.Join(testDir, checkpointName(1)))
		var times []int64
		for _, s := range c.samples {
			times = append(times, s.T)
		}
		require.Equal(t, tc.want, times, "mark %+v", tc.mark)
	}
}
