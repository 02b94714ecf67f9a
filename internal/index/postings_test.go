package index

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func list(vs ...uint64) Postings { return NewListPostings(vs) }

func TestSetOperations(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name string
		p    func() Postings
		want []uint64
		err  error
	}{
		{"list", func() Postings { return list(1, 5, 9) }, []uint64{1, 5, 9}, nil},
		{"empty", EmptyPostings, nil, nil},
		{"intersect none", func() Postings { return Intersect() }, nil, nil},
		{"intersect one", func() Postings { return Intersect(list(1, 2)) }, []uint64{1, 2}, nil},
		{"intersect two", func() Postings { return Intersect(list(1, 2, 3, 7, 9), list(2, 3, 4, 9, 10)) }, []uint64{2, 3, 9}, nil},
		{"intersect three", func() Postings { return Intersect(list(1, 2, 3, 4), list(2, 3, 4), list(0, 4, 5)) }, []uint64{4}, nil},
		{"intersect disjoint", func() Postings { return Intersect(list(1, 3), list(2, 4)) }, nil, nil},
		{"intersect with empty", func() Postings { return Intersect(list(1, 3), EmptyPostings()) }, nil, nil},
		{"intersect err", func() Postings { return Intersect(list(1, 3), ErrPostings(boom)) }, nil, boom},
		{"merge none", func() Postings { return Merge() }, nil, nil},
		{"merge two dup", func() Postings { return Merge(list(1, 3, 5), list(1, 2, 5, 6)) }, []uint64{1, 2, 3, 5, 6}, nil},
		{"merge many", func() Postings {
			return Merge(list(1, 9), list(2, 9), list(3), list(), EmptyPostings(), list(0, 9, 10))
		}, []uint64{0, 1, 2, 3, 9, 10}, nil},
		{"merge two err", func() Postings { return Merge(list(1), ErrPostings(boom)) }, nil, boom},
		{"merge many err", func() Postings { return Merge(list(1), list(2), ErrPostings(boom)) }, nil, boom},
		{"without", func() Postings { return Without(list(1, 2, 3, 4, 5), list(0, 2, 4, 6)) }, []uint64{1, 3, 5}, nil},
		{"without empty drop", func() Postings { return Without(list(1, 2), EmptyPostings()) }, []uint64{1, 2}, nil},
		{"without empty full", func() Postings { return Without(EmptyPostings(), list(1)) }, nil, nil},
		{"without all", func() Postings { return Without(list(1, 2), list(1, 2)) }, nil, nil},
		{"without err", func() Postings { return Without(list(1, 2), ErrPostings(boom)) }, nil, boom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ExpandPostings(c.p())
			if c.err != nil {
				require.True(t, errors.Is(err, c.err), "got %v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestSeekDoesNotMoveWhenCurrentQualifies(t *testing.T) {
	for name, mk := range map[string]func() Postings{
		"list":      func() Postings { return list(2, 4, 6, 8) },
		"intersect": func() Postings { return Intersect(list(1, 2, 4, 6, 8), list(2, 4, 5, 6, 8)) },
		"merge2":    func() Postings { return Merge(list(2, 6), list(4, 8)) },
		"mergeN":    func() Postings { return Merge(list(2), list(4), list(6, 8)) },
		"without":   func() Postings { return Without(list(2, 3, 4, 5, 6, 8), list(3, 5)) },
	} {
		t.Run(name, func(t *testing.T) {
			p := mk()
			require.True(t, p.Seek(3))
			require.Equal(t, uint64(4), p.At())
			require.True(t, p.Seek(1))
			require.Equal(t, uint64(4), p.At())
			require.True(t, p.Seek(4))
			require.Equal(t, uint64(4), p.At())
			require.True(t, p.Next())
			require.Equal(t, uint64(6), p.At())
			require.True(t, p.Seek(8))
			require.Equal(t, uint64(8), p.At())
			require.True(t, !p.Seek(9))
			require.True(t, !p.Next())
			require.True(t, !p.Seek(0))
		})
	}
}

func TestSeekZeroBeforeNext(t *testing.T) {
	// A fresh iterator must not claim a value 0 it does not hold.
	p := list(3, 4)
	require.True(t, p.Seek(0))
	require.Equal(t, uint64(3), p.At())
}

// modelWalk drives p with a random mix of Next and Seek and checks every
// answer against the sorted slice want.
func modelWalk(t *testing.T, rng *rand.Rand, p Postings, want []uint64, seed uint64) {
	t.Helper()
	idx := -1
	var maxV uint64 = 1
	if len(want) > 0 {
		maxV = want[len(want)-1] + 3
	}
	for step := 0; ; step++ {
		if rng.IntN(3) == 0 {
			v := rng.Uint64N(maxV)
			if idx < 0 {
				idx = 0
			}
			if idx < len(want) && want[idx] < v {
				idx, _ = slices.BinarySearch(want, v)
			}
			ok := p.Seek(v)
			require.Equal(t, idx < len(want), ok, "seed %d step %d Seek(%d)", seed, step, v)
		} else {
			if idx < len(want) {
				idx++
			}
			ok := p.Next()
			require.Equal(t, idx < len(want), ok, "seed %d step %d Next", seed, step)
		}
		if idx >= len(want) {
			require.NoError(t, p.Err())
			return
		}
		require.Equal(t, want[idx], p.At(), "seed %d step %d", seed, step)
	}
}

func randList(rng *rand.Rand, maxLen int, maxV uint64) []uint64 {
	n := rng.IntN(maxLen + 1)
	seen := make(map[uint64]struct{}, n)
	for range n {
		seen[rng.Uint64N(maxV)] = struct{}{}
	}
	out := make([]uint64, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func TestPostingsAgainstModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for iter := range 2000 {
		k := 1 + rng.IntN(6)
		maxV := uint64(1 + rng.IntN(200))
		lists := make([][]uint64, k)
		for i := range lists {
			lists[i] = randList(rng, 60, maxV)
		}
		mk := func() []Postings {
			ps := make([]Postings, k)
			for i, l := range lists {
				ps[i] = NewListPostings(l)
			}
			return ps
		}
		var inter, union []uint64
		count := map[uint64]int{}
		for _, l := range lists {
			for _, v := range l {
				count[v]++
			}
		}
		for v, c := range count {
			union = append(union, v)
			if c == k {
				inter = append(inter, v)
			}
		}
		slices.Sort(inter)
		slices.Sort(union)
		var without []uint64
		for _, v := range lists[0] {
			if k == 1 || !slices.Contains(lists[1], v) {
				without = append(without, v)
			}
		}
		modelWalk(t, rng, encodeDecode(t, union), union, seed+uint64(iter))
		modelWalk(t, rng, Intersect(mk()...), inter, seed+uint64(iter))
		modelWalk(t, rng, Merge(mk()...), union, seed+uint64(iter))
		ps := mk()
		drop := EmptyPostings()
		if k > 1 {
			drop = ps[1]
		}
		modelWalk(t, rng, Without(ps[0], drop), without, seed+uint64(iter))
		// Nested: (l0 ∩ l1) ∪ l2 \ l3 exercise operators as inputs of each other.
		got, err := ExpandPostings(Without(Merge(Intersect(mk()[0], mk()[min(1, k-1)]), mk()[min(2, k-1)]), mk()[min(3, k-1)]))
		require.NoError(t, err)
		var want []uint64
		for _, v := range union {
			in := func(i int) bool { return slices.Contains(lists[min(i, k-1)], v) }
			if ((in(0) && in(1)) || in(2)) && !in(3) {
				want = append(want, v)
			}
		}
		require.Equal(t, want, got, "seed %d iter %d", seed, iter)
	}
}

func BenchmarkIntersect(b *testing.B) {
	a, c, d := make([]uint64, 0, 1e6), make([]uint64, 0, 1e6), make([]uint64, 0, 1e6)
	for i := range uint64(1e6) {
		a = append(a, i)
		if i%2 == 0 {
			c = append(c, i)
		}
		if i%3 == 0 {
			d = append(d, i)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		p := Intersect(NewListPostings(a), NewListPostings(c), NewListPostings(d))
		for p.Next() {
			n++
		}
		if n != 166667 {
			b.Fatalf("got %d", n)
		}
	}
}

func benchMerge(b *testing.B, k int) {
	lists := make([][]uint64, k)
	for i := range uint64(1e6) {
		lists[i%uint64(k)] = append(lists[i%uint64(k)], i)
	}
	its := make([]Postings, k)
	b.ReportAllocs()
	for b.Loop() {
		for i := range its {
			its[i] = NewListPostings(lists[i])
		}
		n := 0
		p := Merge(its...)
		for p.Next() {
			n++
		}
		if n != 1e6 {
			b.Fatalf("got %d", n)
		}
	}
}

func BenchmarkMerge2(b *testing.B)   { benchMerge(b, 2) }
func BenchmarkMerge100(b *testing.B) { benchMerge(b, 100) }

// encodeDecode passes refs through the file encoding of postings lists.
func encodeDecode(t testing.TB, refs []uint64) Postings {
	t.Helper()
	r32 := make([]uint32, len(refs))
	for i, r := range refs {
		r32[i] = uint32(r)
	}
	var enc []byte
	_, err := encodePostingsList(nil, r32, func(b []byte) error {
		enc = append(enc, b...)
		return nil
	})
	require.NoError(t, err)
	p, err := decodePostingsList(enc, 0)
	require.NoError(t, err)
	return p
}
