package labels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/stretchr/testify/require"
)

// collect returns the labels of ls in Range order.
func collect(ls Labels) []Label {
	var out []Label
	ls.Range(func(l Label) { out = append(out, l) })
	return out
}

func TestNew(t *testing.T) {
	long := strings.Repeat("v", 300) // needs a two-byte length prefix
	cases := []struct {
		name string
		in   []Label
		want []Label
	}{
		{"empty", nil, nil},
		{"one", []Label{{"a", "1"}}, []Label{{"a", "1"}}},
		{"sorted", []Label{{"a", "1"}, {"b", "2"}}, []Label{{"a", "1"}, {"b", "2"}}},
		{"unsorted", []Label{{"c", "3"}, {"a", "1"}, {"b", "2"}}, []Label{{"a", "1"}, {"b", "2"}, {"c", "3"}}},
		{"duplicates kept in given order", []Label{{"b", "x"}, {"a", "1"}, {"b", "y"}}, []Label{{"a", "1"}, {"b", "x"}, {"b", "y"}}},
		{"empty name and value", []Label{{"b", ""}, {"", "v"}}, []Label{{"", "v"}, {"b", ""}}},
		{"utf8", []Label{{"ñame", "välue"}, {"名前", "値"}, {"a", "😀"}}, []Label{{"a", "😀"}, {"ñame", "välue"}, {"名前", "値"}}},
		{"long value", []Label{{"z", long}, {"a", long}}, []Label{{"a", long}, {"z", long}}},
		{"invalid utf8 bytes", []Label{{"\xff", "\xfe\x00"}}, []Label{{"\xff", "\xfe\x00"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := slices.Clone(c.in)
			ls := New(c.in...)
			require.Equal(t, in, c.in, "New must not modify its argument")
			require.Equal(t, c.want, collect(ls))
			require.Equal(t, len(c.want), ls.Len())
			require.Equal(t, len(c.want) == 0, ls.IsEmpty())
		})
	}
}

func TestFromStrings(t *testing.T) {
	require.Equal(t, []Label{{"a", "1"}, {"b", "2"}}, collect(FromStrings("b", "2", "a", "1")))
	require.True(t, FromStrings().IsEmpty())
	odd := strings.Fields("a b c") // an odd count is a programming error
	require.Panics(t, func() { FromStrings(odd...) })
}

func TestFromMapAndMap(t *testing.T) {
	m := map[string]string{"job": "api", "__name__": "up", "instance": "x:1", "é": "ü"}
	ls := FromMap(m)
	require.Equal(t, []Label{{"__name__", "up"}, {"instance", "x:1"}, {"job", "api"}, {"é", "ü"}}, collect(ls))
	require.Equal(t, m, ls.Map())
	require.True(t, FromMap(nil).IsEmpty())
	require.Equal(t, map[string]string{}, EmptyLabels().Map())
	// With duplicates, the last value wins in Map.
	require.Equal(t, map[string]string{"a": "2"}, New(Label{"a", "1"}, Label{"a", "2"}).Map())
}

func TestEmpty(t *testing.T) {
	var zero Labels
	for _, ls := range []Labels{zero, EmptyLabels(), New(), FromStrings(), FromMap(map[string]string{}), NewBuilder(zero).Labels()} {
		require.True(t, ls.IsEmpty())
		require.Equal(t, 0, ls.Len())
		require.Equal(t, 0, ls.ByteSize())
		require.Equal(t, "{}", ls.String())
		require.True(t, Equal(zero, ls))
		require.Equal(t, zero.Hash(), ls.Hash())
		require.Equal(t, "", ls.Get("a"))
		require.False(t, ls.Has(""))
		require.Equal(t, []Label(nil), collect(ls))
	}
}

func TestGetHas(t *testing.T) {
	long := strings.Repeat("n", 200)
	ls := New(
		Label{"", "empty-name"}, Label{"__name__", "up"}, Label{"a", ""}, Label{"b", "2"},
		Label{"bb", "22"}, Label{"dup", "first"}, Label{"dup", "second"}, Label{"ñ", "tilde"},
		Label{long, "long"}, Label{"z", "last"},
	)
	cases := []struct {
		name, want string
		has        bool
	}{
		{"", "empty-name", true},
		{"__name__", "up", true},
		{"a", "", true},
		{"b", "2", true},
		{"bb", "22", true},
		{"dup", "first", true},
		{"ñ", "tilde", true},
		{long, "long", true},
		{"z", "last", true},
		{"absent", "", false},
		{"0", "", false},
		{"ba", "", false},
		{"zz", "", false},
		{"ñx", "", false},
		{long + "x", "", false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, ls.Get(c.name), "Get(%q)", c.name)
		require.Equal(t, c.has, ls.Has(c.name), "Has(%q)", c.name)
	}
}

func TestString(t *testing.T) {
	cases := []struct {
		ls   Labels
		want string
	}{
		{EmptyLabels(), `{}`},
		{FromStrings("a", "b"), `{a="b"}`},
		{FromStrings("c", "d", "a", "b"), `{a="b", c="d"}`},
		{FromStrings(MetricName, "up", "job", "api"), `{__name__="up", job="api"}`},
		{FromStrings("a", "quote\" back\\ nl\n tab\t"), `{a="quote\" back\\ nl\n tab\t"}`},
		{FromStrings("a", "ünï 😀"), `{a="ünï 😀"}`},
		{FromStrings("a", "\xff"), `{a="\xff"}`},
		{FromStrings("a", ""), `{a=""}`},
		{FromStrings("service.name", "x"), `{"service.name"="x"}`},
		{FromStrings("1a", "x"), `{"1a"="x"}`},
		{FromStrings("a1_B", "x"), `{a1_B="x"}`},
		{FromStrings("_", "x"), `{_="x"}`},
		{FromStrings("ñ", "x"), `{"ñ"="x"}`},
		{FromStrings("a:b", "x"), `{"a:b"="x"}`},
		{FromStrings("", "x"), `{""="x"}`},
	}
	for _, c := range cases {
		require.Equal(t, c.want, c.ls.String())
	}
}

func TestByteSize(t *testing.T) {
	require.Equal(t, 4, FromStrings("a", "b").ByteSize())
	require.Equal(t, 1+1+1+128, FromStrings("a", strings.Repeat("x", 128)).ByteSize())
	require.Equal(t, 1+1+4+255, FromStrings("a", strings.Repeat("x", 255)).ByteSize())
	require.Equal(t, 9, FromStrings("a", "b", "c", "de").ByteSize())
}

func TestValidateAndDuplicates(t *testing.T) {
	ls := FromStrings("b", "2", "a", "1", "c", "3")
	var seen []string
	require.NoError(t, ls.Validate(func(l Label) error {
		seen = append(seen, l.Name)
		return nil
	}))
	require.Equal(t, []string{"a", "b", "c"}, seen)

	sentinel := errTest("stop at b")
	seen = nil
	err := ls.Validate(func(l Label) error {
		seen = append(seen, l.Name)
		if l.Name == "b" {
			return sentinel
		}
		return nil
	})
	require.Equal(t, sentinel, err)
	require.Equal(t, []string{"a", "b"}, seen)

	cases := []struct {
		ls   Labels
		name string
		dup  bool
	}{
		{EmptyLabels(), "", false},
		{FromStrings("a", "1"), "", false},
		{FromStrings("a", "1", "b", "1"), "", false},
		{FromStrings("b", "1", "a", "1", "b", "2"), "b", true},
		{FromStrings("a", "1", "a", "1"), "a", true},
		{FromStrings("x", "1", "c", "1", "c", "2", "x", "2"), "c", true},
	}
	for _, c := range cases {
		name, dup := c.ls.HasDuplicateNames()
		require.Equal(t, c.dup, dup, "%s", c.ls)
		require.Equal(t, c.name, name, "%s", c.ls)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// refCompare is the obvious implementation of Compare's order.
func refCompare(a, b []Label) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i].Name, b[i].Name); c != 0 {
			return c
		}
		if c := strings.Compare(a[i].Value, b[i].Value); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func TestCompareTable(t *testing.T) {
	cases := []struct {
		a, b Labels
		want int
	}{
		{EmptyLabels(), EmptyLabels(), 0},
		{EmptyLabels(), FromStrings("a", "b"), -1},
		{FromStrings("a", "b"), FromStrings("a", "b"), 0},
		{FromStrings("a", "b"), FromStrings("a", "c"), -1},
		{FromStrings("a", "b"), FromStrings("b", "a"), -1},
		{FromStrings("a", "b"), FromStrings("a", "b", "c", "d"), -1},
		{FromStrings("a", "b", "c", "d"), FromStrings("a", "b", "b", "z"), 1},
		// Longer value sorts after its prefix even though its length byte is bigger.
		{FromStrings("a", "b"), FromStrings("a", "ba"), -1},
		// Shorter but lexically bigger value: "c" > "bz".
		{FromStrings("a", "c"), FromStrings("a", "bz"), 1},
		// Name "ab" vs "b": encodings differ in the length byte first.
		{FromStrings("ab", "x"), FromStrings("b", "x"), -1},
		{FromStrings("a", "x"), FromStrings("aa", ""), -1},
		// Multi-byte length prefixes.
		{FromStrings("a", strings.Repeat("x", 200)), FromStrings("a", strings.Repeat("x", 128)), 1},
		{FromStrings("a", strings.Repeat("x", 127)), FromStrings("a", strings.Repeat("y", 128)), -1},
		{FromStrings("a", strings.Repeat("y", 127)), FromStrings("a", strings.Repeat("x", 128)), 1},
	}
	for _, c := range cases {
		require.Equal(t, c.want, Compare(c.a, c.b), "Compare(%s, %s)", c.a, c.b)
		require.Equal(t, -c.want, Compare(c.b, c.a), "Compare(%s, %s)", c.b, c.a)
		require.Equal(t, c.want == 0, Equal(c.a, c.b))
		require.Equal(t, c.want, refCompare(collect(c.a), collect(c.b)))
	}
}

// randomLabels returns a random, sorted label set drawn from small alphabets
// so that sets often share names, values and prefixes, with occasional
// strings long enough to need multi-byte length prefixes.
func randomLabels(rng *rand.Rand) []Label {
	str := func() string {
		var n int
		switch rng.IntN(10) {
		case 0:
			n = 120 + rng.IntN(20) // around the one/two-byte prefix boundary
		case 1:
			n = 0
		default:
			n = 1 + rng.IntN(3)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc\xff"[rng.IntN(4)]
		}
		return string(b)
	}
	ls := make([]Label, rng.IntN(5))
	for i := range ls {
		ls[i] = Label{Name: str(), Value: str()}
	}
	slices.SortStableFunc(ls, cmpName)
	return ls
}

func TestCompareRandom(t *testing.T) {
	const seed = 42
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := 0; i < 20000; i++ {
		a, b := randomLabels(rng), randomLabels(rng)
		if rng.IntN(4) == 0 && len(a) > 0 {
			// Often make b share a prefix with a.
			b = append(slices.Clone(a[:rng.IntN(len(a))]), b...)
			slices.SortStableFunc(b, cmpName)
		}
		want := refCompare(a, b)
		got := Compare(New(a...), New(b...))
		require.Equal(t, want, got, "seed %d iteration %d: %q vs %q", seed, i, a, b)
	}
}

// refHash is Hash's specification written out plainly: xxhash64 over each
// name and value in order, each after its size (one byte below 255, else
// 0xFF and three bytes, little-endian, below 0xFFFFFF, else four 0xFF and
// eight bytes).
func refHash(ls []Label) uint64 {
	var b []byte
	for _, l := range ls {
		for _, s := range []string{l.Name, l.Value} {
			switch n := len(s); {
			case n < 0xFF:
				b = append(b, byte(n))
			case n < 0xFFFFFF:
				b = append(b, 0xFF, byte(n), byte(n>>8), byte(n>>16))
			default:
				b = append(b, 0xFF, 0xFF, 0xFF, 0xFF)
				b = binary.LittleEndian.AppendUint64(b, uint64(n))
			}
			b = append(b, s...)
		}
	}
	return xxhash.Sum64(b)
}

func TestHash(t *testing.T) {
	big := strings.Repeat("x", 3000)
	sets := [][]Label{
		nil,
		{{"a", "b"}},
		{{"a", "bc"}},
		{{"ab", "c"}},
		{{"__name__", "up"}, {"job", "ñ"}},
		{{"a", big}},
		{{"a", big}, {"b", "c"}, {"d", big[:700]}, {"e", big[:400]}},
		{{big, big}, {big + "y", ""}},
	}
	seen := map[uint64]bool{}
	for _, ls := range sets {
		want := refHash(ls)
		require.Equal(t, want, New(ls...).Hash(), "%q", ls)
		require.False(t, seen[want], "hash collision for %q", ls)
		seen[want] = true
	}
	// A golden value: the hash must not change between releases. It is
	// also Prometheus's for the same set (prom/storage checks more sets).
	require.Equal(t, uint64(0xea454d0393654eec), FromStrings("__name__", "up", "job", "api").Hash())
}

func TestBuiltEquivalently(t *testing.T) {
	in := []Label{{"job", "api"}, {"__name__", "http_requests_total"}, {"ñ", "ü"}, {"code", "200"}}
	byNew := New(in...)
	var ss []string
	for _, l := range in {
		ss = append(ss, l.Name, l.Value)
	}
	byStrings := FromStrings(ss...)
	m := map[string]string{}
	for _, l := range in {
		m[l.Name] = l.Value
	}
	byMap := FromMap(m)
	b := NewBuilder(FromStrings("job", "old", "drop", "me"))
	for _, l := range in {
		b.Set(l.Name, l.Value)
	}
	byBuilder := b.Del("drop").Labels()
	sb := NewScratchBuilder(0)
	for _, l := range in {
		sb.Add(l.Name, l.Value)
	}
	byScratch := sb.Labels()
	var byJSON Labels
	js, err := byNew.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, byJSON.UnmarshalJSON(js))

	for _, ls := range []Labels{byStrings, byMap, byBuilder, byScratch, byJSON} {
		require.True(t, Equal(byNew, ls), "%s vs %s", byNew, ls)
		require.Equal(t, 0, Compare(byNew, ls))
		require.Equal(t, byNew.Hash(), ls.Hash())
		require.Equal(t, byNew.String(), ls.String())
	}
}

func TestJSON(t *testing.T) {
	cases := []struct {
		ls   Labels
		want string
	}{
		{EmptyLabels(), `{}`},
		{FromStrings("b", "2", "a", "1"), `{"a":"1","b":"2"}`},
		{FromStrings("a", "quote\" nl\n ñ 😀"), `{"a":"quote\" nl\n ñ 😀"}`},
		{FromStrings("", "x", "service.name", ""), `{"":"x","service.name":""}`},
	}
	for _, c := range cases {
		got, err := c.ls.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, c.want, string(got))
		var back Labels
		require.NoError(t, back.UnmarshalJSON(got))
		require.True(t, Equal(c.ls, back), "%s vs %s", c.ls, back)
	}

	var ls Labels
	require.NoError(t, ls.UnmarshalJSON([]byte(`null`)))
	require.True(t, ls.IsEmpty())
	require.NoError(t, ls.UnmarshalJSON([]byte(`{"b":"1","a":"2","b":"3"}`)))
	require.Equal(t, `{a="2", b="3"}`, ls.String())
	for _, bad := range []string{``, `{`, `[]`, `{"a":1}`, `{"a":null}`, `"x"`, `{"a":"b"}x`} {
		err := ls.UnmarshalJSON([]byte(bad))
		if bad == `{"a":null}` {
			// encoding/json leaves null map values as "".
			require.NoError(t, err)
			continue
		}
		require.ErrorIs(t, err, ErrInvalidJSON, "input %q", bad)
	}
}

func TestNoAllocs(t *testing.T) {
	a := FromStrings("__name__", "http_requests_total", "code", "200", "job", "api", "path", "/v1/x")
	b := FromStrings("__name__", "http_requests_total", "code", "200", "job", "api", "path", "/v1/y")
	n := 0
	cases := map[string]func(){
		"Get":     func() { _ = a.Get("path") },
		"Has":     func() { _ = a.Has("nope") },
		"Range":   func() { a.Range(func(Label) { n++ }) },
		"Hash":    func() { _ = a.Hash() },
		"Compare": func() { _ = Compare(a, b) },
		"Len":     func() { _ = a.Len() },
		"New sorted": func() {
			_ = New(Label{"a", "b"}, Label{"c", "d"})
		},
	}
	for name, f := range cases {
		want := 0.0
		if name == "New sorted" {
			want = 1 // the label set itself
		}
		require.Equal(t, want, testing.AllocsPerRun(100, f), name)
	}
	require.True(t, n > 0)
}

// TestEncodingSizes pins the size forms at each boundary: one byte below
// 255, 0xFF and three bytes little-endian below 0xFFFFFF (both as
// Prometheus's stringlabels writes them), 0xFF 0xFF 0xFF 0xFF and eight
// bytes from there on. Each set decodes back to its labels.
func TestEncodingSizes(t *testing.T) {
	cases := []struct {
		n      int
		prefix string
	}{
		{0, "\x00"},
		{1, "\x01"},
		{127, "\x7f"},
		{128, "\x80"},
		{254, "\xfe"},
		{255, "\xff\xff\x00\x00"},
		{256, "\xff\x00\x01\x00"},
		{70000, "\xff\x70\x11\x01"},
		{0xFFFFFE, "\xff\xfe\xff\xff"},
		{0xFFFFFF, "\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00"},
		{0x1000000, "\xff\xff\xff\xff\x00\x00\x00\x01\x00\x00\x00\x00"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.n), func(t *testing.T) {
			v := strings.Repeat("v", c.n)
			ls := FromStrings("a", v, "b", "x")
			want := "\x01a" + c.prefix + v + "\x01b\x01x"
			require.Equal(t, want, ls.Encoding())
			require.Equal(t, len(want), ls.ByteSize())
			require.Equal(t, v, ls.Get("a"))
			require.Equal(t, "x", ls.Get("b"))
			require.Equal(t, 2, ls.Len())
			if len(want) < MaxPromCompatible {
				require.Less(t, c.n, 0xFFFFFF, "a set below MaxPromCompatible holds only Prometheus-sized fields")
			}
			// Compare finds the difference inside the long field.
			other := FromStrings("a", v[:max(c.n-1, 0)]+"w", "b", "x")
			if c.n > 0 {
				require.Equal(t, -1, Compare(ls, other))
				require.Equal(t, 1, Compare(other, ls))
			}
		})
	}
}
