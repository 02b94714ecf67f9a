package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestWriterPostingsModel writes random label sets whose names and values
// come from small alphabets that share strings (a value may also be a
// name, and a value occurs under several names), so that postings lists
// are long and label pairs share symbols, and checks the symbol table, the
// label names and values, and every postings list the reader returns
// against a model. Grow gets a wrong hint in some rounds: it must only
// ever be a hint.
func TestWriterPostingsModel(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	alphabet := []string{"a", "b", "c", "d", "job", "x", "y", "zz", "0", "00"}
	for round := range 8 {
		var sets []labels.Labels
		for range 1 + rng.IntN(3000) {
			m := map[string]string{}
			for range 1 + rng.IntN(6) {
				m[alphabet[rng.IntN(len(alphabet))]] = alphabet[rng.IntN(len(alphabet))]
			}
			sets = append(sets, labels.FromMap(m))
		}
		slices.SortFunc(sets, labels.Compare)
		sets = slices.CompactFunc(sets, labels.Equal)

		fsys := vfs.NewMemFS()
		w, err := NewWriter(fsys, "index")
		require.NoError(t, err)
		if syms := symbolsOf(sets); round%4 < 2 {
			for _, s := range syms {
				require.NoError(t, w.AddSymbol(s))
			}
		} else {
			idx := map[string]uint32{}
			for i, s := range syms {
				idx[s] = uint32(i)
			}
			require.NoError(t, w.SetSymbols(syms, idx))
		}
		if round%2 == 1 {
			w.Grow(rng.IntN(2*len(sets)), rng.IntN(10*len(sets)))
		}
		for i, ls := range sets {
			require.NoError(t, w.AddSeries(uint64(i+1), ls, testChunks(i)...))
		}
		require.NoError(t, w.Close())
		r, err := NewFileReader(fsys, "index")
		require.NoError(t, err)
		t.Run(fmt.Sprintf("round=%d", round), func(t *testing.T) {
			checkAgainstModel(t, r, sets)
		})
		require.NoError(t, r.Close())
	}
}

// checkAgainstModel checks the symbols, label names and values and every
// postings list of r, an index of sets, against a model built from sets.
func checkAgainstModel(t *testing.T, r *Reader, sets []labels.Labels) {
	var syms []string
	it := r.Symbols()
	for it.Next() {
		syms = append(syms, it.At())
	}
	require.NoError(t, it.Err())
	require.Equal(t, symbolsOf(sets), syms)

	all, err := r.AllPostings()
	require.NoError(t, err)
	refs := expand(t, all)
	require.Len(t, refs, len(sets))
	builder := labels.NewScratchBuilder(8)
	model := map[string]map[string][]uint64{}
	for i, ls := range sets {
		require.NoError(t, r.Series(refs[i], &builder, nil))
		require.True(t, labels.Equal(ls, builder.Labels()), "series %d", i)
		ls.Range(func(l labels.Label) {
			if model[l.Name] == nil {
				model[l.Name] = map[string][]uint64{}
			}
			model[l.Name][l.Value] = append(model[l.Name][l.Value], refs[i])
		})
	}
	names, err := r.LabelNames()
	require.NoError(t, err)
	wantNames := make([]string, 0, len(model))
	for n := range model {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	require.Equal(t, wantNames, names)
	for _, n := range names {
		vals, err := r.SortedLabelValues(n)
		require.NoError(t, err)
		wantVals := make([]string, 0, len(model[n]))
		for v := range model[n] {
			wantVals = append(wantVals, v)
		}
		slices.Sort(wantVals)
		require.Equal(t, wantVals, vals, "values of %s", n)
		for _, v := range vals {
			p, err := r.Postings(n, v)
			require.NoError(t, err)
			require.Equal(t, model[n][v], expand(t, p), "postings %s=%s", n, v)
		}
	}
}

func TestWriterSetSymbolsErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before string // a symbol added with AddSymbol first, if not empty
		sorted []string
		index  map[string]uint32
		want   error
	}{
		{"unsorted", "", []string{"b", "a"}, map[string]uint32{"b": 0, "a": 1}, ErrOutOfOrder},
		{"duplicate", "", []string{"a", "a"}, map[string]uint32{"a": 0}, ErrUnknownSymbol},
		{"wrong position", "", []string{"a", "b"}, map[string]uint32{"a": 1, "b": 0}, ErrUnknownSymbol},
		{"missing from index", "", []string{"a", "b"}, map[string]uint32{"a": 0, "c": 1}, ErrUnknownSymbol},
		{"extra in index", "", []string{"a"}, map[string]uint32{"a": 0, "b": 1}, ErrUnknownSymbol},
		{"after AddSymbol", "0", []string{"a"}, map[string]uint32{"a": 0}, ErrOutOfOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWriter(vfs.NewMemFS(), "index")
			require.NoError(t, err)
			if tc.before != "" {
				require.NoError(t, w.AddSymbol(tc.before))
			}
			require.ErrorIs(t, w.SetSymbols(tc.sorted, tc.index), tc.want)
			require.NoError(t, w.Close())
		})
	}
	// Series added with a symbol table set must find their symbols, and
	// the table cannot be set after them.
	fsys := vfs.NewMemFS()
	w, err := NewWriter(fsys, "index")
	require.NoError(t, err)
	require.NoError(t, w.SetSymbols([]string{"a", "b"}, map[string]uint32{"a": 0, "b": 1}))
	require.NoError(t, w.AddSeries(1, labels.FromStrings("a", "b")))
	require.ErrorIs(t, w.AddSeries(2, labels.FromStrings("b", "c")), ErrUnknownSymbol)
	require.ErrorIs(t, w.SetSymbols([]string{"c"}, map[string]uint32{"c": 0}), ErrOutOfOrder)
	require.NoError(t, w.Close())
	r, err := NewFileReader(fsys, "index")
	require.NoError(t, err)
	defer r.Close()
	checkAgainstModel(t, r, []labels.Labels{labels.FromStrings("a", "b")})
}
