package promstorage

import (
	"strings"
	"testing"
	"unicode/utf8"

	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// FuzzLabelsRoundTrip converts label sets to isotsdb's and back.
func FuzzLabelsRoundTrip(f *testing.F) {
	f.Add("__name__", "up", "job", "node", "", "")
	f.Add("a", "", "b", "ü\x00", "c", strings.Repeat("x", 300))
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, n3, v3 string) {
		in := plabels.FromStrings(n1, v1, n2, v2, n3, v3)
		var ob labels.ScratchBuilder
		var pb plabels.ScratchBuilder
		ours := toOurLabels(&ob, in)
		// Same pairs in the same order (duplicate names included).
		var want, got []string
		in.Range(func(l plabels.Label) { want = append(want, l.Name, l.Value) })
		ours.Range(func(l labels.Label) { got = append(got, l.Name, l.Value) })
		require.Equal(t, want, got)
		require.Equal(t, in, toPromLabels(&pb, ours))
	})
}

// FuzzMatcherConversion checks that a converted matcher accepts exactly
// the label values the Prometheus matcher accepts.
func FuzzMatcherConversion(f *testing.F) {
	for _, s := range [][2]string{
		{"a.*", "abc"}, {"a|b", "b"}, {"(?i)foo", "FOO"}, {".", "\n"}, {"", ""},
		{"a)|(b", "b"}, {"[^a]+", "bbb"}, {"foo.*bar", "foo\nbar"}, {"^a$", "a"},
		{"(a|b)(c|d)", "bd"}, {`\d+`, "123"}, {".*ü.*", "xüy"}, {"a+?", "aa"},
	} {
		f.Add(s[0], s[1], uint8(2))
	}
	f.Fuzz(func(t *testing.T, pattern, value string, typ uint8) {
		pm, err := plabels.NewMatcher(plabels.MatchType(typ%4), "l", pattern)
		if err != nil {
			return // not a valid Prometheus matcher: nothing to convert
		}
		oms, err := toOurMatchers([]*plabels.Matcher{pm})
		if err != nil && !utf8.ValidString(pattern) && strings.Contains(pattern, "|") {
			// The one known gap, documented on toOurMatchers.
			require.ErrorIs(t, err, labels.ErrInvalidRegex)
			return
		}
		require.NoError(t, err, "Prometheus accepts %q", pattern)
		require.Equal(t, pm.Matches(value), oms[0].Matches(value), "matcher %s on %q", pm, value)
	})
}

func TestToOurMatchersRejectsUnknownType(t *testing.T) {
	_, err := toOurMatchers([]*plabels.Matcher{{Type: plabels.MatchType(9), Name: "a"}})
	require.ErrorIs(t, err, labels.ErrInvalidMatchType)
}

func TestToOurMatchersInvalidUTF8Literal(t *testing.T) {
	cases := []struct {
		typ  plabels.MatchType
		want labels.MatchType
	}{
		{plabels.MatchRegexp, labels.MatchEqual},
		{plabels.MatchNotRegexp, labels.MatchNotEqual},
	}
	for _, tc := range cases {
		pm := plabels.MustNewMatcher(tc.typ, "l", "a\x80")
		oms, err := toOurMatchers([]*plabels.Matcher{pm})
		require.NoError(t, err)
		require.Equal(t, tc.want, oms[0].Type)
		for _, v := range []string{"a\x80", "a", "", "a\x80b"} {
			require.Equal(t, pm.Matches(v), oms[0].Matches(v), "%s on %q", pm, v)
		}
	}
	_, err := toOurMatchers([]*plabels.Matcher{plabels.MustNewMatcher(plabels.MatchRegexp, "l", "a|\x80")})
	require.ErrorIs(t, err, labels.ErrInvalidRegex, "the documented gap")
}
