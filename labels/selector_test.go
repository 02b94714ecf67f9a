package labels

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// sel is a matcher as a test expects it: type, name, value.
type sel struct {
	t    MatchType
	n, v string
}

func matcherTriples(ms []*Matcher) []sel {
	out := make([]sel, len(ms))
	for i, m := range ms {
		out[i] = sel{m.Type, m.Name, m.Value}
	}
	return out
}

func TestParseSelectorValid(t *testing.T) {
	cases := []struct {
		in   string
		want []sel
	}{
		{`up`, []sel{{MatchEqual, MetricName, "up"}}},
		{`  up  `, []sel{{MatchEqual, MetricName, "up"}}},
		{`node:cpu:rate5m`, []sel{{MatchEqual, MetricName, "node:cpu:rate5m"}}},
		{`:a1`, []sel{{MatchEqual, MetricName, ":a1"}}},
		{`sum`, []sel{{MatchEqual, MetricName, "sum"}}}, // keywords are names here
		{`up{}`, []sel{{MatchEqual, MetricName, "up"}}},
		{`up {}`, []sel{{MatchEqual, MetricName, "up"}}},
		{`metric{a="b",c!="d",e=~"f.*",g!~"h"}`, []sel{
			{MatchEqual, MetricName, "metric"},
			{MatchEqual, "a", "b"}, {MatchNotEqual, "c", "d"},
			{MatchRegexp, "e", "f.*"}, {MatchNotRegexp, "g", "h"},
		}},
		{`{a="b"}`, []sel{{MatchEqual, "a", "b"}}},
		{`{a="b",}`, []sel{{MatchEqual, "a", "b"}}},
		{"{\n\ta = \"b\" ,\n\tc != 'd' ,\n}\n", []sel{{MatchEqual, "a", "b"}, {MatchNotEqual, "c", "d"}}},
		{`{__name__=~"x.*"}`, []sel{{MatchRegexp, MetricName, "x.*"}}},
		{`{"service.name"="x"}`, []sel{{MatchEqual, "service.name", "x"}}},
		{`{'service.name'!="", "a"="b"}`, []sel{{MatchNotEqual, "service.name", ""}, {MatchEqual, "a", "b"}}},
		{`{"metric.name"}`, []sel{{MatchEqual, MetricName, "metric.name"}}},
		{`{a="", "metric.name", b="c"}`, []sel{
			{MatchEqual, "a", ""}, {MatchEqual, MetricName, "metric.name"}, {MatchEqual, "b", "c"},
		}},
		{"{`m`}", []sel{{MatchEqual, MetricName, "m"}}},
		{`up{a="b",a="c"}`, []sel{{MatchEqual, MetricName, "up"}, {MatchEqual, "a", "b"}, {MatchEqual, "a", "c"}}},
		{`up{a=""}`, []sel{{MatchEqual, MetricName, "up"}, {MatchEqual, "a", ""}}},
		{`{a=~".+"}`, []sel{{MatchRegexp, "a", ".+"}}},
		// Escapes.
		{`{a="q\"\\\n\t\r\a\b\f\v"}`, []sel{{MatchEqual, "a", "q\"\\\n\t\r\a\b\f\v"}}},
		{`{a='it\'s "x"'}`, []sel{{MatchEqual, "a", `it's "x"`}}},
		{`{a="it's"}`, []sel{{MatchEqual, "a", "it's"}}},
		{`{a="\x41\101\u00e9\U0001F600"}`, []sel{{MatchEqual, "a", "AAé\U0001F600"}}},
		{`{a="\xff\000"}`, []sel{{MatchEqual, "a", "\xff\x00"}}},
		{"{a=`raw\\n\"'\n\r`}", []sel{{MatchEqual, "a", "raw\\n\"'\n\r"}}},
		{`{a=~"\\d+"}`, []sel{{MatchRegexp, "a", `\d+`}}},
		{`{a="ü"}`, []sel{{MatchEqual, "a", "ü"}}},
		{"{a=\"\uFFFD\"}", []sel{{MatchEqual, "a", "\uFFFD"}}},
		// Comments.
		{"up # the up metric\n{a=\"b\"} # done", []sel{{MatchEqual, MetricName, "up"}, {MatchEqual, "a", "b"}}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			ms, err := ParseSelector(c.in)
			require.NoError(t, err)
			require.Equal(t, c.want, matcherTriples(ms))
			for _, m := range ms {
				if m.Type == MatchRegexp || m.Type == MatchNotRegexp {
					require.NotNil(t, m.re, "regexp matcher must be compiled")
				}
			}
		})
	}
}

func TestParseSelectorMatches(t *testing.T) {
	ms, err := ParseSelector(`http_requests_total{code=~"5..", method!="GET", path!~"/health.*"}`)
	require.NoError(t, err)
	yes := FromStrings(MetricName, "http_requests_total", "code", "503", "method", "POST", "path", "/api")
	require.True(t, MatchLabels(yes, ms...))
	for _, no := range []Labels{
		FromStrings(MetricName, "other", "code", "503", "method", "POST", "path", "/api"),
		FromStrings(MetricName, "http_requests_total", "code", "200", "method", "POST", "path", "/api"),
		FromStrings(MetricName, "http_requests_total", "code", "503", "method", "GET", "path", "/api"),
		FromStrings(MetricName, "http_requests_total", "code", "503", "method", "POST", "path", "/healthz"),
	} {
		require.False(t, MatchLabels(no, ms...), no.String())
	}
}

func TestParseSelectorInvalid(t *testing.T) {
	cases := []struct {
		in  string
		pos int
	}{
		{``, 0},
		{`   `, 3},
		{`# only a comment`, 16},
		{`{}`, 0},
		{` {a=""}`, 1},
		{`{a=~".*", b!="x"}`, 0}, // every matcher matches ""
		{`{a!~".+"}`, 0},
		{`1up`, 0},
		{`up down`, 3},
		{`up{a="b"} x`, 10},
		{`up{a="b"}{c="d"}`, 9},
		{`up[5m]`, 2},
		{`up{`, 3},
		{`up{a="b"`, 8},
		{`up{a="b" c="d"}`, 9},
		{`up{,}`, 3},
		{`up{a="b",,}`, 9},
		{`up{a}`, 4},
		{`up{a=}`, 5},
		{`up{a==""}`, 5},
		{`up{a="b}`, 5},
		{`up{a:b="c"}`, 4},
		{`up{1a="b"}`, 3},
		{`up{a=b}`, 5},
		{`up{a=~"("}`, 6},
		{`up{__name__="x"}`, 3},
		{`up{__name__=~"x.*"}`, 3},
		{`up{"x"}`, 3},
		{`{""="x"}`, 1},
		{`{""}`, 1},
		{`{"\xff"="x"}`, 1},
		{`{"a" b="c"}`, 5},
		{"{a=\"b\nc\"}", 5},
		{"{a=\"\xff\"}", 4},
		{"{a=`\xff`}", 4},
		{"{a=`x}", 3},
		{`{a="\q"}`, 4},
		{`{a="\'"}`, 4},
		{`{a='\"'}`, 4},
		{`{a="\x4"}`, 4},
		{`{a="\xg0"}`, 4},
		{`{a="\400"}`, 4},
		{`{a="\18"}`, 4},
		{`{a="\u12"}`, 4},
		{`{a="\ud800"}`, 4},
		{`{a="\U00110000"}`, 4},
		{`{a="\`, 4},
		{"\xff", 0},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			ms, err := ParseSelector(c.in)
			require.Error(t, err)
			require.Nil(t, ms)
			require.ErrorIs(t, err, ErrInvalidSelector)
			var se *SelectorError
			require.ErrorAs(t, err, &se)
			require.Equal(t, c.pos, se.Pos, "error: %v", err)
			require.Contains(t, err.Error(), "labels: invalid selector: at byte ")
		})
	}
}

func TestParseSelectorRegexError(t *testing.T) {
	_, err := ParseSelector(`{job=~"a(b"}`)
	require.ErrorIs(t, err, ErrInvalidSelector)
	require.ErrorIs(t, err, ErrInvalidRegex)
	var se *SelectorError
	require.True(t, errors.As(err, &se))
	require.Equal(t, 6, se.Pos)
}

// TestParseSelectorFormatRoundTrip checks that what Matcher.String writes
// parses back to the same matcher, for awkward names and values.
func TestParseSelectorFormatRoundTrip(t *testing.T) {
	for _, m := range []*Matcher{
		MustNewMatcher(MatchEqual, "a", "\x00\xff\n\"\\'`"),
		MustNewMatcher(MatchNotEqual, "service.name", "ü\u2028\U0001F600"),
		MustNewMatcher(MatchRegexp, "__name__", `\w+\.(a|b)`),
		MustNewMatcher(MatchNotRegexp, "é", ""),
	} {
		ms, err := ParseSelector("{" + m.String() + ",x=\"y\"}")
		require.NoError(t, err, m.String())
		require.Equal(t, []sel{{m.Type, m.Name, m.Value}, {MatchEqual, "x", "y"}}, matcherTriples(ms))
	}
}
