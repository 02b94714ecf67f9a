package tsdb

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadSnapshotVisible(t *testing.T) {
	iso := newIsolation()
	var w1, w2, w3 inflightWrite
	iso.beginCommit(&w1) // 1
	iso.beginCommit(&w2) // 2
	iso.endCommit(&w1)
	iso.beginCommit(&w3) // 3, in flight with 2
	snap := iso.snapshot()
	defer snap.release()
	require.Equal(t, uint64(3), snap.maxWriteID)
	require.Equal(t, []uint64{2, 3}, snap.inflight)
	require.Equal(t, uint64(2), snap.lowMark)

	for _, tc := range []struct {
		id   uint64
		want bool
	}{
		{0, true},  // replayed data
		{1, true},  // completed before the snapshot
		{2, false}, // in flight at the snapshot
		{3, false}, // in flight at the snapshot
		{4, false}, // started after the snapshot
		{100, false},
	} {
		require.Equal(t, tc.want, snap.visible(tc.id), "id %d", tc.id)
	}
	// Completing the in-flight commits later changes nothing for snap.
	iso.endCommit(&w2)
	iso.endCommit(&w3)
	require.False(t, snap.visible(2))
	require.False(t, snap.visible(3))

	var nilSnap *readSnapshot
	require.True(t, nilSnap.visible(12345), "isolation off sees everything")
}

func TestReadSnapshotVisibleManyInflight(t *testing.T) {
	// More than 8 commits in flight takes the binary-search path.
	iso := newIsolation()
	ws := make([]inflightWrite, 20)
	for i := range ws {
		iso.beginCommit(&ws[i])
	}
	for i := 0; i < len(ws); i += 2 {
		iso.endCommit(&ws[i]) // odd IDs complete, even ones stay in flight
	}
	snap := iso.snapshot()
	defer snap.release()
	for id := uint64(1); id <= 25; id++ {
		want := id <= 20 && id%2 == 1
		require.Equal(t, want, snap.visible(id), "id %d", id)
	}
}

func TestLowWatermark(t *testing.T) {
	iso := newIsolation()
	require.Equal(t, uint64(1), iso.lowWatermark(), "empty: the next ID")

	var w1, w2 inflightWrite
	require.Equal(t, uint64(1), iso.beginCommit(&w1))
	require.Equal(t, uint64(1), iso.lowWatermark(), "held by the commit in flight")
	iso.beginCommit(&w2)
	iso.endCommit(&w2)
	require.Equal(t, uint64(1), iso.lowWatermark(), "a later commit ending does not move it")

	r1 := iso.snapshot() // low mark 1: commit 1 still in flight
	iso.endCommit(&w1)
	require.Equal(t, uint64(1), iso.lowWatermark(), "held by the oldest read")

	var w3 inflightWrite
	iso.beginCommit(&w3)
	iso.endCommit(&w3)
	r2 := iso.snapshot() // low mark 4
	require.Equal(t, uint64(1), iso.lowWatermark())

	r1.release()
	require.Equal(t, uint64(4), iso.lowWatermark(), "advances to the next oldest read")
	r1.release() // idempotent
	require.Equal(t, uint64(4), iso.lowWatermark())
	r2.release()
	require.Equal(t, uint64(4), iso.lowWatermark(), "no reads, no writes: the next ID")
	reads, inflight := iso.stats()
	require.Zero(t, reads)
	require.Zero(t, inflight)
}

// TestLowWatermarkModel drives the isolation state with random operations
// and compares the O(1) watermark with a brute-force definition: the
// smallest ID that some open read cannot see or that is in flight.
func TestLowWatermarkModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	iso := newIsolation()
	var writes []*inflightWrite
	var reads []*readSnapshot
	steps := 20000
	if raceEnabled {
		steps = 3000
	}
	for step := 0; step < steps; step++ {
		switch op := rng.IntN(4); {
		case op == 0 || len(writes) == 0 && len(reads) == 0:
			w := &inflightWrite{}
			iso.beginCommit(w)
			writes = append(writes, w)
		case op == 1 && len(writes) > 0:
			i := rng.IntN(len(writes))
			iso.endCommit(writes[i])
			writes = slices.Delete(writes, i, i+1)
		case op == 2:
			reads = append(reads, iso.snapshot())
		case len(reads) > 0:
			i := rng.IntN(len(reads))
			reads[i].release()
			reads = slices.Delete(reads, i, i+1)
		}
		// Brute force: the first ID that is invisible to a read or in flight.
		want := iso.highWatermark() + 1
		for _, w := range writes {
			want = min(want, w.id)
		}
		for _, r := range reads {
			for id := uint64(1); id < want; id++ {
				if !r.visible(id) {
					want = id
					break
				}
			}
		}
		require.Equal(t, want, iso.lowWatermark(), "step %d (seed %d)", step, seed)
	}
}

func TestWriteIDRingTrimAndShrink(t *testing.T) {
	var r writeIDRing
	// With no reads, each push's watermark is its own ID: one ID is held.
	for id := uint64(1); id <= 1_000_000; id++ {
		r.push(id, id)
		if r.len() != 1 {
			t.Fatalf("after id %d: ring holds %d IDs, want 1", id, r.len())
		}
	}
	require.Nil(t, r.big, "one ID is held inline, nothing allocated")

	// A read pins the watermark at 1_000_001: the ring grows.
	const pinned = 1_000_001
	for id := uint64(pinned); id < pinned+1000; id++ {
		r.push(id, pinned)
	}
	require.Equal(t, 1000, r.len())
	require.Equal(t, uint64(pinned), r.at(0))
	require.Equal(t, uint64(pinned+999), r.at(999))
	require.GreaterOrEqual(t, r.cap(), 1000)

	// The read closes; the next push trims everything below its watermark
	// and the ring shrinks back.
	r.push(pinned+1000, pinned+1000)
	require.Equal(t, 1, r.len())
	require.Equal(t, uint64(pinned+1000), r.at(0))
	require.Nil(t, r.big, "back to one inline ID")
}

func TestWriteIDRingWrapAround(t *testing.T) {
	var r writeIDRing
	var model []uint64
	rng := rand.New(rand.NewPCG(1, 2))
	next := uint64(1)
	for step := 0; step < 50000; step++ {
		// Random watermark between the oldest held and the next ID.
		lo := next
		if len(model) > 0 {
			lo = model[0]
		}
		watermark := lo + rng.Uint64N(next-lo+1)
		if rng.IntN(10) < 7 {
			watermark = lo // mostly hold: let the ring grow and wrap
		}
		r.push(next, watermark)
		for len(model) > 0 && model[0] < watermark {
			model = model[1:]
		}
		model = append(model, next)
		next++
		require.Equal(t, len(model), r.len())
		for i, id := range model {
			if r.at(i) != id {
				t.Fatalf("step %d: at(%d) = %d, want %d", step, i, r.at(i), id)
			}
		}
		if c := r.cap(); c > minRingCap {
			require.Greater(t, len(model), c/4, "step %d: IDs held in a ring of capacity %d", step, c)
		}
		require.Equal(t, len(model) > 1, r.big != nil, "step %d: %d IDs held, spilled", step, len(model))
	}
}

func TestInvisibleSamples(t *testing.T) {
	iso := newIsolation()
	var w [6]inflightWrite
	var r writeIDRing
	// Two commits in flight write one series in either order: 2 before 1.
	for i := range w {
		iso.beginCommit(&w[i]) // IDs 1..6
	}
	iso.endCommit(&w[1]) // 2 done
	iso.endCommit(&w[3]) // 4 done
	for _, id := range []uint64{2, 1, 4, 3} {
		r.push(id, 1)
	}
	snap := iso.snapshot() // sees 2 and 4; not 1, 3, 5, 6
	defer snap.release()
	// The series has had 10 samples; the ring covers the last 4 (6..9).
	got := invisibleSamples(snap, &r, 10, nil)
	require.Equal(t, []uint64{7, 9}, got, "a visible sample may follow an invisible one")
	require.Nil(t, invisibleSamples(nil, &r, 10, nil), "isolation off")
}
