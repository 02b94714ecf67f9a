package tsdb

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSortSeriesTimes checks sortSeriesTimes against a comparison sort on
// the shapes replay gives it (dense refs, each series' times in log order
// with some out of order, duplicates) and on those it must fall back for
// (sparse refs, short inputs).
func TestSortSeriesTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gen := map[string]func() []seriesTime{
		"empty": func() []seriesTime { return nil },
		"short": func() []seriesTime {
			return []seriesTime{{3, 5}, {1, 9}, {3, 1}, {2, 2}}
		},
		"dense, in log order": func() []seriesTime {
			var s []seriesTime
			for tm := range int64(200) {
				for ref := range uint64(50) {
					s = append(s, seriesTime{ref + 1, tm * 1000})
				}
			}
			return s
		},
		"dense, some out of order and repeated": func() []seriesTime {
			var s []seriesTime
			for range 20000 {
				s = append(s, seriesTime{uint64(rng.IntN(3000)), int64(rng.IntN(100))})
			}
			return s
		},
		"sparse refs": func() []seriesTime {
			var s []seriesTime
			for range 1000 {
				s = append(s, seriesTime{rng.Uint64N(1 << 40), rng.Int64()})
			}
			return s
		},
		"ref zero and the maximum dense ref": func() []seriesTime {
			s := make([]seriesTime, 0, 100)
			for i := range 100 {
				s = append(s, seriesTime{uint64(i % 2 * 399), int64(100 - i)})
			}
			return s
		},
	}
	for name, g := range gen {
		t.Run(name, func(t *testing.T) {
			in := g()
			want := slices.Clone(in)
			slices.SortFunc(want, cmpSeriesTime)
			got := sortSeriesTimes(slices.Clone(in))
			require.Equal(t, len(want), len(got))
			// (Not require.Equal: its diff of long slices takes minutes.)
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("at %d of %d: got %v, want %v", i, len(want), got[i], want[i])
				}
			}
		})
	}
}

func BenchmarkSortSeriesTimes(b *testing.B) {
	// 1.5 million late samples of 20,000 series, each series' times in
	// log order: what a late-heavy WBL holds.
	var in []seriesTime
	for tm := range int64(75) {
		for ref := range uint64(20000) {
			in = append(in, seriesTime{ref + 1, tm * 15000})
		}
	}
	for _, c := range []struct {
		name string
		sort func([]seriesTime) []seriesTime
	}{
		{"counting", sortSeriesTimes},
		{"comparison", func(s []seriesTime) []seriesTime { slices.SortFunc(s, cmpSeriesTime); return s }},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := make([]seriesTime, len(in))
			for b.Loop() {
				copy(s, in)
				_ = c.sort(s)
			}
		})
	}
}
