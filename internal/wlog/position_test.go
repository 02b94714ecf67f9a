package wlog

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

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
