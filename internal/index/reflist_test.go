package index

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomRefs returns n strictly increasing references whose gaps are
// drawn from a mix of dense, sparse and huge ones.
func randomRefs(rng *rand.Rand, n int) []uint64 {
	refs := make([]uint64, n)
	r := rng.Uint64N(1 << 20)
	for i := range refs {
		switch k := rng.IntN(10); {
		case k < 6:
			r++
		case k < 9:
			r += 1 + rng.Uint64N(300)
		default:
			r += 1 + rng.Uint64N(1<<40)
		}
		refs[i] = r
	}
	return refs
}

// TestRefListMatchesPlain checks that a list built by appends, plain or
// packed, iterates, seeks and counts as a plain slice of the same
// references does, for lengths around every block boundary.
func TestRefListMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 4097} {
		for round := range 5 {
			refs := randomRefs(rng, n)
			var l refList
			for _, r := range refs {
				l = l.appended(r)
			}
			require.NoError(t, l.check(), "n=%d", n)
			require.Equal(t, n > packAt, l.p != nil, "n=%d: packed above packAt only", n)
			s := l.snapshot()
			require.Equal(t, n, s.Len())
			if n == 0 {
				require.Empty(t, s.expand())
			} else {
				require.Equal(t, refs, s.expand())
			}
			got, err := ExpandPostings(s.Postings())
			require.NoError(t, err)
			if n > 0 {
				require.Equal(t, refs, got)
			}
			// Seeks in increasing order, each checked against the plain
			// list, with Next in between.
			want, p := NewListPostings(refs), s.Postings()
			target := uint64(0)
			for step := 0; ; step++ {
				if rng.IntN(3) == 0 {
					wok, gok := want.Next(), p.Next()
					require.Equal(t, wok, gok, "n=%d round=%d step=%d: Next", n, round, step)
					if !wok {
						break
					}
				} else {
					if len(refs) > 0 && rng.IntN(2) == 0 {
						target = max(target, refs[rng.IntN(len(refs))]+rng.Uint64N(3)-1)
					} else {
						target += rng.Uint64N(500)
					}
					wok, gok := want.Seek(target), p.Seek(target)
					require.Equal(t, wok, gok, "n=%d round=%d step=%d: Seek(%d)", n, round, step, target)
					if !wok {
						break
					}
				}
				require.Equal(t, want.At(), p.At(), "n=%d round=%d step=%d", n, round, step)
				target = max(target, p.At())
			}
			require.False(t, p.Next(), "exhausted")
		}
	}
}

// TestRefListPackedIsSmall checks the point of packing: a list of dense
// references takes about a byte per reference, not eight.
func TestRefListPackedIsSmall(t *testing.T) {
	var l refList
	for r := uint64(1); r <= 100_000; r += 1 + r%3 {
		l = l.appended(r)
	}
	n := l.len()
	bytes := len(l.p.data) + len(l.p.blocks)*16
	require.Less(t, float64(bytes)/float64(n), 1.5, "%d references in %d bytes", n, bytes)
}

// TestRefListSnapshotStable checks that a snapshot keeps what it saw
// while the list goes on growing, and that readers and an appender can
// run at once (run with -race: the appender writes only past every
// snapshot's length).
func TestRefListSnapshotStable(t *testing.T) {
	var mu sync.RWMutex
	var l refList
	const total = 20_000
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				mu.RLock()
				s := l.snapshot()
				mu.RUnlock()
				n := s.Len()
				i := uint64(0)
				for r := range s.All() {
					i++
					if r != 3*i {
						t.Errorf("reference %d of a snapshot of %d is %d, want %d", i, n, r, 3*i)
						return
					}
				}
				if i != uint64(n) {
					t.Errorf("snapshot of %d references iterated %d", n, i)
					return
				}
			}
		})
	}
	for r := uint64(3); r <= 3*total; r += 3 {
		mu.Lock()
		l = l.appended(r)
		mu.Unlock()
	}
	close(done)
	wg.Wait()
	require.Equal(t, total, l.len())
}
