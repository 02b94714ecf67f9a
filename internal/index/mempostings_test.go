package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

func expand(t testing.TB, p Postings) []uint64 {
	t.Helper()
	got, err := ExpandPostings(p)
	require.NoError(t, err)
	return got
}

func TestMemPostingsAddGet(t *testing.T) {
	p := NewMemPostings()
	p.Add(5, labels.FromStrings("a", "1", "b", "x"))
	p.Add(3, labels.FromStrings("a", "1"))
	p.Add(9, labels.FromStrings("a", "2", "b", "x"))
	p.Add(1, labels.FromStrings("a", "1", "c", "y"))
	p.Add(3, labels.FromStrings("a", "1")) // duplicate: no effect

	cases := []struct {
		name, value string
		want        []uint64
	}{
		{"a", "1", []uint64{1, 3, 5}},
		{"a", "2", []uint64{9}},
		{"b", "x", []uint64{5, 9}},
		{"c", "y", []uint64{1}},
		{"c", "z", nil},
		{"nope", "1", nil},
		{"", "", []uint64{1, 3, 5, 9}},
	}
	for _, c := range cases {
		require.Equal(t, c.want, expand(t, p.Get(c.name, c.value)), "%s=%s", c.name, c.value)
	}
	p.Add(11, labels.FromStrings("", "x", "a", "9")) // empty name: not indexed
	require.Equal(t, []uint64(nil), expand(t, p.Get("", "x")))
	require.Equal(t, []uint64{11}, expand(t, p.Get("a", "9")))
	p.Delete(map[uint64]struct{}{11: {}})
	require.Equal(t, []uint64{1, 3, 5, 9}, expand(t, p.All()))
	require.Equal(t, 4, p.NumSeries())
	require.Equal(t, []string{"a", "b", "c"}, p.LabelNames())
	require.Equal(t, []string{"1", "2"}, p.LabelValues("a"))
	require.Equal(t, []string(nil), p.LabelValues(""))
	require.Equal(t, []string{}, p.LabelValues("nope"))

	got, err := p.Postings("a", "2", "1", "3")
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 3, 5, 9}, expand(t, got))
	require.Equal(t, []uint64{5, 9}, expand(t, p.PostingsForLabelMatching("b", func(string) bool { return true })))

	var seen []string
	require.NoError(t, p.ForEachValue("a", func(v string, ps Postings) error {
		seen = append(seen, fmt.Sprint(v, expand(t, ps)))
		return nil
	}))
	require.Equal(t, []string{"1[1 3 5]", "2[9]"}, seen)
	stop := errors.New("stop")
	require.Equal(t, stop, p.ForEachValue("a", func(string, Postings) error { return stop }))
}

func TestMemPostingsSnapshots(t *testing.T) {
	p := NewMemPostings()
	for _, ref := range []uint64{10, 20, 30} {
		p.Add(ref, labels.FromStrings("a", "1"))
	}
	before := p.Get("a", "1")
	p.Add(15, labels.FromStrings("a", "1")) // out of order: must not disturb before
	p.Add(40, labels.FromStrings("a", "1"))
	require.Equal(t, []uint64{10, 20, 30}, expand(t, before))

	mid := p.Get("a", "1")
	p.Delete(map[uint64]struct{}{20: {}})
	require.Equal(t, []uint64{10, 15, 20, 30, 40}, expand(t, mid))
	require.Equal(t, []uint64{10, 15, 30, 40}, expand(t, p.Get("a", "1")))
}

func TestMemPostingsDelete(t *testing.T) {
	build := func() *MemPostings {
		p := NewMemPostings()
		p.Add(1, labels.FromStrings("a", "1", "b", "1"))
		p.Add(2, labels.FromStrings("a", "1", "b", "2"))
		p.Add(3, labels.FromStrings("a", "2", "c", "1"))
		return p
	}
	check := func(t *testing.T, p *MemPostings) {
		require.Equal(t, []uint64{1}, expand(t, p.Get("a", "1")))
		require.Equal(t, []uint64(nil), expand(t, p.Get("b", "2")))
		require.Equal(t, []uint64(nil), expand(t, p.Get("c", "1")))
		require.Equal(t, []uint64{1}, expand(t, p.All()))
		require.Equal(t, []string{"a", "b"}, p.LabelNames())
		require.Equal(t, []string{"1"}, p.LabelValues("a"))
	}
	refs := map[uint64]struct{}{2: {}, 3: {}, 99: {}}
	t.Run("all", func(t *testing.T) {
		p := build()
		p.Delete(refs)
		check(t, p)
	})
	t.Run("affected", func(t *testing.T) {
		p := build()
		p.DeleteAffected(refs, map[labels.Label]struct{}{
			{Name: "a", Value: "1"}: {}, {Name: "b", Value: "2"}: {},
			{Name: "a", Value: "2"}: {}, {Name: "c", Value: "1"}: {},
		})
		check(t, p)
	})
}

// TestMemPostingsConcurrent adds refs out of order from several goroutines
// while readers iterate; run with -race. Every list read must be sorted and
// the final lists complete.
func TestMemPostingsConcurrent(t *testing.T) {
	p := NewMemPostings()
	const writers, perWriter = 4, 1000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readerErr error
	var readerMu sync.Mutex
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, ps := range []Postings{p.All(), p.Get("w", "1"), Merge(p.Get("w", "0"), p.Get("w", "2"))} {
					got, err := ExpandPostings(ps)
					if err == nil && !slices.IsSorted(got) {
						err = fmt.Errorf("unsorted list %v", got)
					}
					if err != nil {
						readerMu.Lock()
						readerErr = err
						readerMu.Unlock()
						return
					}
				}
				_ = p.LabelValues("w")
			}
		}()
	}
	var ww sync.WaitGroup
	for w := range writers {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for i := range perWriter {
				// Interleaved refs: each writer owns refs ≡ w (mod writers).
				ref := uint64(i*writers + w)
				p.Add(ref, labels.FromStrings("w", fmt.Sprint(w), "i", fmt.Sprint(i%7)))
			}
		}()
	}
	ww.Wait()
	close(stop)
	wg.Wait()
	require.NoError(t, readerErr)
	all := expand(t, p.All())
	require.Len(t, all, writers*perWriter)
	for i, v := range all {
		require.Equal(t, uint64(i), v)
	}
}

// seriesModel is a brute-force index: refs and label sets.
type seriesModel struct {
	refs []uint64
	sets []labels.Labels
}

func (m *seriesModel) eval(ms []*labels.Matcher) []uint64 {
	var out []uint64
outer:
	for i, ls := range m.sets {
		for _, mt := range ms {
			if !mt.Matches(ls.Get(mt.Name)) {
				continue outer
			}
		}
		out = append(out, m.refs[i])
	}
	return out
}

var (
	testNames  = []string{"a", "b", "c", "d"}
	testValues = []string{"1", "2", "3", "10", "foo", "fob"}
	testRegexs = []string{"", ".*", ".+", "1|2", "foo|", "1.*", "f.*|3", "fo.", "1|10|x", "(2|3)?", "nope"}
)

func randSeries(rng *rand.Rand, n int) *seriesModel {
	m := &seriesModel{}
	seen := map[string]bool{}
	for len(m.sets) < n {
		var kv []string
		for _, name := range testNames {
			if rng.IntN(3) > 0 {
				kv = append(kv, name, testValues[rng.IntN(len(testValues))])
			}
		}
		ls := labels.FromStrings(kv...)
		if seen[ls.String()] {
			continue
		}
		seen[ls.String()] = true
		m.sets = append(m.sets, ls)
	}
	slices.SortFunc(m.sets, labels.Compare)
	for i := range m.sets {
		m.refs = append(m.refs, uint64(i+1))
	}
	return m
}

func randMatchers(t testing.TB, rng *rand.Rand) []*labels.Matcher {
	n := rng.IntN(4)
	ms := make([]*labels.Matcher, 0, n)
	for range n {
		name := testNames[rng.IntN(len(testNames))]
		if rng.IntN(8) == 0 {
			name = "z" // a label no series has
		}
		typ := []labels.MatchType{labels.MatchEqual, labels.MatchNotEqual, labels.MatchRegexp, labels.MatchNotRegexp}[rng.IntN(4)]
		var v string
		if typ == labels.MatchEqual || typ == labels.MatchNotEqual {
			if rng.IntN(5) > 0 {
				v = testValues[rng.IntN(len(testValues))]
			}
		} else {
			v = testRegexs[rng.IntN(len(testRegexs))]
		}
		m, err := labels.NewMatcher(typ, name, v)
		require.NoError(t, err)
		ms = append(ms, m)
	}
	return ms
}

func checkMatchersAgainstModel(t *testing.T, ix PostingsReader, model *seriesModel, rng *rand.Rand, seed uint64, rounds int) {
	t.Helper()
	for round := range rounds {
		ms := randMatchers(t, rng)
		p, err := PostingsForMatchers(ix, ms...)
		require.NoError(t, err, "seed %d round %d %v", seed, round, ms)
		got := expand(t, p)
		require.Equal(t, model.eval(ms), got, "seed %d round %d matchers %v", seed, round, ms)
	}
}

func TestPostingsForMatchersMemAgainstModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	model := randSeries(rng, 300)
	mp := NewMemPostings()
	for i, ls := range model.sets {
		mp.Add(model.refs[i], ls)
	}
	checkMatchersAgainstModel(t, mp, model, rng, seed, 3000)
}

func TestPostingsForMatchersCases(t *testing.T) {
	mp := NewMemPostings()
	sets := []labels.Labels{
		labels.FromStrings("n", "1"),
		labels.FromStrings("n", "1", "i", "a"),
		labels.FromStrings("n", "1", "i", "b"),
		labels.FromStrings("n", "2"),
		labels.FromStrings("n", "2.5"),
	}
	for i, ls := range sets {
		mp.Add(uint64(i), ls)
	}
	mk := func(typ labels.MatchType, n, v string) *labels.Matcher {
		m, err := labels.NewMatcher(typ, n, v)
		require.NoError(t, err)
		return m
	}
	cases := []struct {
		ms   []*labels.Matcher
		want []uint64
	}{
		{nil, []uint64{0, 1, 2, 3, 4}},
		{[]*labels.Matcher{mk(labels.MatchEqual, "n", "1")}, []uint64{0, 1, 2}},
		{[]*labels.Matcher{mk(labels.MatchEqual, "n", "1"), mk(labels.MatchEqual, "i", "a")}, []uint64{1}},
		{[]*labels.Matcher{mk(labels.MatchEqual, "n", "1"), mk(labels.MatchEqual, "i", "")}, []uint64{0}},
		{[]*labels.Matcher{mk(labels.MatchEqual, "i", "")}, []uint64{0, 3, 4}},
		{[]*labels.Matcher{mk(labels.MatchNotEqual, "i", "")}, []uint64{1, 2}},
		{[]*labels.Matcher{mk(labels.MatchNotEqual, "n", "1")}, []uint64{3, 4}},
		{[]*labels.Matcher{mk(labels.MatchNotEqual, "i", "a")}, []uint64{0, 2, 3, 4}},
		{[]*labels.Matcher{mk(labels.MatchEqual, "n", "1"), mk(labels.MatchNotRegexp, "i", "a|b")}, []uint64{0}},
		{[]*labels.Matcher{mk(labels.MatchRegexp, "i", "a|")}, []uint64{0, 1, 3, 4}},
		{[]*labels.Matcher{mk(labels.MatchRegexp, "n", "2.*")}, []uint64{3, 4}},
		{[]*labels.Matcher{mk(labels.MatchRegexp, "i", ".+"), mk(labels.MatchNotEqual, "i", "b")}, []uint64{1}},
		{[]*labels.Matcher{mk(labels.MatchEqual, "missing", "")}, []uint64{0, 1, 2, 3, 4}},
		{[]*labels.Matcher{mk(labels.MatchEqual, "missing", "x")}, nil},
		{[]*labels.Matcher{mk(labels.MatchEqual, "", "")}, []uint64{0, 1, 2, 3, 4}},
	}
	for _, c := range cases {
		p, err := PostingsForMatchers(mp, c.ms...)
		require.NoError(t, err)
		require.Equal(t, c.want, expand(t, p), "%v", c.ms)
	}
	_, err := PostingsForMatchers(mp, nil)
	require.True(t, errors.Is(err, ErrInvalidMatcher), "nil matcher: %v", err)
}

// TestMemPostingsAddNextInOrder checks that refs taken by AddNext from a
// shared counter reach every list in order, however the callers
// interleave, so the lists never need an out-of-order insert.
func TestMemPostingsAddNextInOrder(t *testing.T) {
	p := NewMemPostings()
	var next uint64
	var wg sync.WaitGroup
	const writers, perWriter = 8, 500
	got := make([][]uint64, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				ls := labels.FromStrings("w", fmt.Sprint(w), "i", fmt.Sprint(i), "all", "x")
				got[w] = append(got[w], p.AddNext(ls, func() uint64 { next++; return next }))
			}
		}()
	}
	wg.Wait()
	all := expand(t, p.Get("all", "x"))
	require.Len(t, all, writers*perWriter, "all=x")
	for i, ref := range all {
		require.Equal(t, uint64(i+1), ref, "all=x[%d] (refs must be 1..n in order)", i)
	}
	for w := range writers {
		l := expand(t, p.Get("w", fmt.Sprint(w)))
		require.True(t, slices.Equal(l, got[w]), "w=%d holds %v, AddNext returned %v", w, l, got[w])
	}
}

func TestMemPostingsSortedWithPostings(t *testing.T) {
	p := NewMemPostings()
	p.Add(1, labels.FromStrings("b", "x", "a", "1"))
	p.Add(2, labels.FromStrings("a", "2"))
	p.Add(3, labels.FromStrings("a", "2"))
	for range 2 { // the second round is served from the cached views
		names, lists := p.SortedLabelNamesWithPostings()
		require.Equal(t, []string{"a", "b"}, names)
		require.True(t, slices.Equal(lists[0].expand(), []uint64{1}) || slices.Equal(lists[0].expand(), []uint64{2, 3}), "postings of a value of a: %v", lists[0])
		require.Equal(t, []uint64{1}, lists[1].expand())

		values, lists := p.SortedLabelValuesWithPostings("a")
		require.Equal(t, []string{"1", "2"}, values)
		require.Equal(t, [][]uint64{{1}, {2, 3}}, expandAll(lists))
	}
	values, _ := p.SortedLabelValuesWithPostings("")
	require.Empty(t, values)

	// Changes show at once.
	p.Add(4, labels.FromStrings("a", "0", "c", "z"))
	values, lists := p.SortedLabelValuesWithPostings("a")
	require.Equal(t, []string{"0", "1", "2"}, values)
	require.Equal(t, [][]uint64{{4}, {1}, {2, 3}}, expandAll(lists))
	names, _ := p.SortedLabelNamesWithPostings()
	require.Equal(t, []string{"a", "b", "c"}, names)
	p.Add(5, labels.FromStrings("a", "2"))
	_, lists = p.SortedLabelValuesWithPostings("a")
	require.Equal(t, []uint64{2, 3, 5}, lists[2].expand())
	p.Delete(map[uint64]struct{}{1: {}, 4: {}})
	values, lists = p.SortedLabelValuesWithPostings("a")
	require.Equal(t, []string{"2"}, values)
	require.Equal(t, [][]uint64{{2, 3, 5}}, expandAll(lists))
	names, _ = p.SortedLabelNamesWithPostings()
	require.Equal(t, []string{"a"}, names)
	p.DeleteAffected(map[uint64]struct{}{2: {}}, map[labels.Label]struct{}{{Name: "a", Value: "2"}: {}})
	_, lists = p.SortedLabelValuesWithPostings("a")
	require.Equal(t, [][]uint64{{3, 5}}, expandAll(lists))
}

// expandAll expands every list.
func expandAll(lists []RefList) [][]uint64 {
	out := make([][]uint64, len(lists))
	for i, l := range lists {
		out[i] = l.expand()
	}
	return out
}
