package labels

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatchTypeString(t *testing.T) {
	cases := map[MatchType]string{
		MatchEqual: "=", MatchNotEqual: "!=", MatchRegexp: "=~", MatchNotRegexp: "!~",
		MatchType(7): "MatchType(7)", MatchType(-1): "MatchType(-1)",
	}
	for mt, want := range cases {
		require.Equal(t, want, mt.String())
	}
}

func TestMatcherString(t *testing.T) {
	cases := []struct {
		t           MatchType
		name, value string
		want        string
	}{
		{MatchEqual, "a", "b", `a="b"`},
		{MatchNotEqual, "a", "b", `a!="b"`},
		{MatchRegexp, "a", "b.*", `a=~"b.*"`},
		{MatchNotRegexp, "a", "b|c", `a!~"b|c"`},
		{MatchEqual, "a", "", `a=""`},
		{MatchEqual, "a", "q\"\\\n", `a="q\"\\\n"`},
		{MatchRegexp, "a", `\d+`, `a=~"\\d+"`},
		{MatchEqual, "service.name", "ü", `"service.name"="ü"`},
		{MatchEqual, "", "x", `""="x"`},
	}
	for _, c := range cases {
		require.Equal(t, c.want, MustNewMatcher(c.t, c.name, c.value).String())
	}
}

func TestNewMatcherErrors(t *testing.T) {
	for _, bad := range []string{"(", "a)|(b(", "[z-a]", "x{1001}", "\xff", `\8`} {
		for _, mt := range []MatchType{MatchRegexp, MatchNotRegexp} {
			_, err := NewMatcher(mt, "n", bad)
			require.ErrorIs(t, err, ErrInvalidRegex, "value %q", bad)
			var syn *syntax.Error
			require.True(t, errors.As(err, &syn), "the regexp error is wrapped too: %v", err)
			require.True(t, strings.Contains(err.Error(), `"n"`), "error names the label: %v", err)
		}
		// Equality matchers take any value.
		_, err := NewMatcher(MatchEqual, "n", bad)
		require.NoError(t, err)
	}
	for _, mt := range []MatchType{MatchType(-1), MatchType(4)} {
		_, err := NewMatcher(mt, "n", "v")
		require.ErrorIs(t, err, ErrInvalidMatchType)
	}
	require.Panics(t, func() { MustNewMatcher(MatchRegexp, "n", "(") })
}

func TestMatcherLiteralStructs(t *testing.T) {
	eq := &Matcher{Type: MatchEqual, Name: "a", Value: "b"}
	require.True(t, eq.Matches("b"))
	require.False(t, eq.Matches("c"))
	ne := &Matcher{Type: MatchNotEqual, Name: "a", Value: "b"}
	require.True(t, ne.Matches("c"))
	require.False(t, (&Matcher{Type: MatchType(9)}).Matches(""))
	require.Panics(t, func() { (&Matcher{Type: MatchRegexp, Value: "b"}).Matches("b") })
}

func TestMatcherMatches(t *testing.T) {
	cases := []struct {
		t       MatchType
		value   string
		yes, no []string
	}{
		{MatchEqual, "foo", []string{"foo"}, []string{"", "fo", "foo ", "Foo"}},
		{MatchNotEqual, "foo", []string{"", "fo", "Foo"}, []string{"foo"}},
		{MatchEqual, "", []string{""}, []string{"a"}},
		{MatchRegexp, "b", []string{"b"}, []string{"ab", "bc", ""}}, // fully anchored
		{MatchRegexp, "foo|bar", []string{"foo", "bar"}, []string{"foobar", "fo", ""}},
		{MatchRegexp, ".*", []string{"", "x", "a\nb", "\xff"}, nil},
		{MatchRegexp, ".+", []string{"x", "\n"}, []string{""}},
		{MatchRegexp, "a.b", []string{"a\nb", "axb"}, []string{"ab"}}, // '.' matches newline
		{MatchRegexp, "foo.*", []string{"foo", "foo\nbar"}, []string{"fo", "xfoo"}},
		{MatchRegexp, ".*foo", []string{"foo", "\nfoo"}, []string{"foox"}},
		{MatchRegexp, ".*foo.*", []string{"foo", "xfooy"}, []string{"fo", "f\noo"}},
		{MatchRegexp, "(?i)foo", []string{"foo", "FOO", "fOo"}, []string{"fooo"}},
		{MatchRegexp, "(?i)foo.*", []string{"FOObar"}, []string{"xfoo"}},
		{MatchRegexp, "(?-s:.*)", []string{"", "abc"}, []string{"a\nb"}},
		{MatchRegexp, "\uFFFD", []string{"\uFFFD", "\xff", "\x80"}, []string{"", "\xff\xff"}},
		{MatchRegexp, "", []string{""}, []string{"a"}},
		{MatchRegexp, `\d{2,3}`, []string{"12", "123"}, []string{"1", "1234", "ab"}},
		{MatchRegexp, "a)|(b", []string{"a", "axx", "b", "xxb"}, []string{"", "c"}},
		{MatchNotRegexp, "foo|bar", []string{"", "baz", "foobar"}, []string{"foo", "bar"}},
		{MatchNotRegexp, ".*", nil, []string{"", "x"}},
	}
	for _, c := range cases {
		m := MustNewMatcher(c.t, "n", c.value)
		for _, s := range c.yes {
			require.True(t, m.Matches(s), "%s should match %q", m, s)
		}
		for _, s := range c.no {
			require.False(t, m.Matches(s), "%s should not match %q", m, s)
		}
	}
}

// TestRegexFastPaths checks which fast path each expression gets, and what
// SetMatches and Prefix report for it.
func TestRegexFastPaths(t *testing.T) {
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf("v%02d", i))
	}
	cases := []struct {
		value  string
		kind   matchKind
		set    []string
		prefix string
	}{
		{"foo", kindLiteral, []string{"foo"}, "foo"},
		{"", kindLiteral, []string{""}, ""},
		{"(foo)", kindLiteral, []string{"foo"}, "foo"},
		{"a{3}", kindLiteral, []string{"aaa"}, "aaa"},
		{`foo\.bar`, kindLiteral, []string{"foo.bar"}, "foo.bar"},
		{"foo|bar|baz", kindSet, []string{"bar", "baz", "foo"}, ""},
		{"(a|b)", kindSet, []string{"a", "b"}, ""},
		{"foo(bar|baz)", kindSet, []string{"foobar", "foobaz"}, "fooba"},
		{"(foo)?bar", kindSet, []string{"bar", "foobar"}, ""},
		{"a|", kindSet, []string{"", "a"}, ""},
		{"b|a|b", kindSet, []string{"a", "b"}, ""},
		{"[0-2]x", kindSet, []string{"0x", "1x", "2x"}, ""},
		{"é|è", kindSet, []string{"è", "é"}, ""}, // the shared byte is half a rune
		{"ü(a|b)", kindSet, []string{"üa", "üb"}, "ü"},
		{strings.Join(many, "|"), kindSet, many, "v"},
		{".*", kindAny, nil, ""},
		{"(.*)", kindAny, nil, ""},
		{".*.*", kindAny, nil, ""},
		{".*?", kindAny, nil, ""},
		{".+", kindNonEmpty, nil, ""},
		{"foo.*", kindPrefix, nil, "foo"},
		{"fo(o).*", kindPrefix, nil, "foo"},
		{".*foo", kindSuffix, nil, ""},
		{".*foo.*", kindContains, nil, ""},
		{".*(foo).*.*", kindContains, nil, ""},
		// Fallbacks to the regexp.
		{"(?i)foo", kindRegexp, nil, ""},
		{"[Ff]oo", kindRegexp, nil, ""}, // parsed as a case-folded literal
		{"(?i)foo.*", kindRegexp, nil, ""},
		{"(?-s:.*)", kindRegexp, nil, ""},
		{"(?-s:.+)", kindRegexp, nil, ""},
		{"foo.+", kindRegexp, nil, "foo"},
		{"foo.*bar", kindRegexp, nil, "foo"},
		{`foo\d+`, kindRegexp, nil, "foo"},
		{"[a-z][a-z]", kindRegexp, nil, ""}, // 676 values: too many for a set
		{"\uFFFD", kindRegexp, nil, ""},
		{"a\uFFFD", kindRegexp, nil, "a"},
		{`\x{D800}`, kindRegexp, nil, ""},
		{"a)|(b", kindRegexp, nil, ""},
		{"^foo", kindRegexp, nil, ""},
		{"foo$", kindRegexp, nil, "foo"},
	}
	for _, c := range cases {
		m := MustNewMatcher(MatchRegexp, "n", c.value)
		require.Equal(t, c.kind, m.re.kind, "kind of %q", c.value)
		require.Equal(t, c.set, m.SetMatches(), "SetMatches of %q", c.value)
		require.Equal(t, c.prefix, m.Prefix(), "Prefix of %q", c.value)
		require.Equal(t, len(c.set) > smallSetMax, m.re.setIndex != nil, "set index of %q", c.value)
		neg := MustNewMatcher(MatchNotRegexp, "n", c.value)
		require.Equal(t, []string(nil), neg.SetMatches())
		require.Equal(t, "", neg.Prefix())
	}
	eq := MustNewMatcher(MatchEqual, "n", "v")
	require.Equal(t, []string{"v"}, eq.SetMatches())
	require.Equal(t, "v", eq.Prefix())
	ne := MustNewMatcher(MatchNotEqual, "n", "v")
	require.Equal(t, []string(nil), ne.SetMatches())
	require.Equal(t, "", ne.Prefix())

	// The caller owns the returned slice.
	m := MustNewMatcher(MatchRegexp, "n", "a|b")
	m.SetMatches()[0] = "changed"
	require.Equal(t, []string{"a", "b"}, m.SetMatches())
	require.True(t, m.Matches("a"))
}

// agreementPatterns cover every fast path, the fallbacks and their edges.
var agreementPatterns = []string{
	"", "foo", "foo|bar|baz", "(a|b)", "foo(bar|baz)", "(foo)?bar", "a|", "[0-2]x",
	"é|è", ".*", ".+", "(.*)", ".*?", "foo.*", ".*foo", ".*foo.*", ".*é.*", "(?i)foo",
	"(?i)foo.*", "[Ff]oo", "(?-s:.*)", "(?-s:.+)", "foo.+", "foo.*bar", `\d+`,
	"[a-z][a-z]", "\uFFFD", ".*\uFFFD.*", "a)|(b", "^foo", "foo$", "a.b", `\x{10FFFF}`,
	"[^a]", "[\u00e0-\u00ff]", ".", "(?U)a+", "a*", "", "(|)", "(?:)", `\Qa.b\E`,
	strings.Repeat("x|", 30) + "y",
}

// agreementInputs exercise empty values, newlines, invalid UTF-8 and
// U+FFFD, prefixes and suffixes of the literals above.
var agreementInputs = []string{
	"", "a", "b", "x", "y", "ab", "foo", "FOO", "fOo", "fo", "foobar", "foobaz", "xfoo", "foox", "xfoox",
	"bar", "baz", "barfoo", "foo\nbar", "\n", "a\nb", "axb", "é", "è", "xéx", "\xc3", "\xff", "\x80",
	"\uFFFD", "foo\uFFFD", "\xfffoo", "12", "0x", "3x", "foo.bar", "a.b", "\U0010FFFF", "aaa", "a)|(b",
}

func TestRegexAgreesWithRegexp(t *testing.T) {
	const seed = 7
	rng := rand.New(rand.NewPCG(seed, seed))
	inputs := slices.Clone(agreementInputs)
	for range 300 {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = "fobarxyzé\n\xff"[rng.IntN(12)]
		}
		inputs = append(inputs, string(b))
	}
	for _, p := range agreementPatterns {
		checkAgainstRegexp(t, p, inputs)
	}
}

// checkAgainstRegexp checks the matcher for pattern against regexp itself on
// inputs and on strings derived from SetMatches and Prefix.
func checkAgainstRegexp(t testing.TB, pattern string, inputs []string) {
	t.Helper()
	re, reErr := regexp.Compile("^(?s:" + pattern + ")$")
	m, err := NewMatcher(MatchRegexp, "n", pattern)
	if reErr != nil {
		require.Error(t, err, "%q: regexp rejects it (%v) but NewMatcher accepts it", pattern, reErr)
		return
	}
	require.NoError(t, err, "%q: NewMatcher", pattern)
	neg := MustNewMatcher(MatchNotRegexp, "n", pattern)
	set := m.SetMatches()
	prefix := m.Prefix()
	all := slices.Clone(inputs)
	all = append(all, set...)
	for _, s := range inputs {
		all = append(all, prefix+s, s+prefix, m.re.lit+s, s+m.re.lit)
	}
	for _, s := range all {
		want := re.MatchString(s)
		require.Equal(t, want, m.Matches(s), "%q (kind %d) on %q: regexp says %v", pattern, m.re.kind, s, want)
		require.NotEqual(t, want, neg.Matches(s), "negated %q on %q: got %v", pattern, s, !want)
		if want {
			require.True(t, strings.HasPrefix(s, prefix), "%q matches %q, which lacks Prefix %q", pattern, s, prefix)
		}
		if set != nil {
			require.Equal(t, want, slices.Contains(set, s), "%q on %q: regexp says %v, SetMatches %q disagrees", pattern, s, want, set)
		}
	}
}

func TestMatchLabels(t *testing.T) {
	ls := FromStrings("__name__", "up", "job", "api", "env", "")
	cases := []struct {
		ms   []*Matcher
		want bool
	}{
		{nil, true},
		{[]*Matcher{MustNewMatcher(MatchEqual, "__name__", "up")}, true},
		{[]*Matcher{MustNewMatcher(MatchEqual, "__name__", "up"), MustNewMatcher(MatchRegexp, "job", "a.*")}, true},
		{[]*Matcher{MustNewMatcher(MatchEqual, "__name__", "up"), MustNewMatcher(MatchRegexp, "job", "b.*")}, false},
		{[]*Matcher{MustNewMatcher(MatchEqual, "absent", "")}, true},
		{[]*Matcher{MustNewMatcher(MatchNotEqual, "absent", "")}, false},
		{[]*Matcher{MustNewMatcher(MatchRegexp, "absent", ".+")}, false},
		{[]*Matcher{MustNewMatcher(MatchNotRegexp, "absent", ".+")}, true},
		{[]*Matcher{MustNewMatcher(MatchEqual, "env", "")}, true},
	}
	for i, c := range cases {
		require.Equal(t, c.want, MatchLabels(ls, c.ms...), "case %d", i)
	}
}
