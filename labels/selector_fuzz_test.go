package labels

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseSelector feeds arbitrary text to ParseSelector. It must never
// panic; every error must wrap ErrInvalidSelector with a position inside
// the input; and a selector that parses must round-trip: writing its
// matchers back as {m1,m2,...} with Matcher.String and parsing that again
// yields the same matchers.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{
		`up`,
		`metric{a="b",c!="d",e=~"f.*",g!~"h"}`,
		`{__name__=~"x.*"}`,
		`{"service.name"="x", "metric.name",}`,
		"{a=`raw\n`, b='s\\'q', c=\"\\x00\\377\\u00e9\\U0001F600\"}",
		"up # comment\n{a!=\"\"}",
		`{a=""}`,
		`up{__name__="x"}`,
		`{a=~"(" }`,
		`{a="\ud800"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ms, err := ParseSelector(in)
		if err != nil {
			var se *SelectorError
			require.ErrorIs(t, err, ErrInvalidSelector)
			require.ErrorAs(t, err, &se)
			require.GreaterOrEqual(t, se.Pos, 0, "error position outside input of %d bytes", len(in))
			require.LessOrEqual(t, se.Pos, len(in), "error position outside input of %d bytes", len(in))
			return
		}
		require.NotEmpty(t, ms, "%q parsed to no matchers", in)
		parts := make([]string, len(ms))
		for i, m := range ms {
			parts[i] = m.String()
		}
		text := "{" + strings.Join(parts, ",") + "}"
		again, err := ParseSelector(text)
		require.NoError(t, err, "%q parsed, but its formatted form %q did not", in, text)
		require.Len(t, again, len(ms), "%q: formatted %q re-parses to a different number of matchers", in, text)
		for i := range ms {
			a, b := ms[i], again[i]
			require.True(t, a.Type == b.Type && a.Name == b.Name && a.Value == b.Value,
				"%q: matcher %d is %s, re-parsed from %q as %s", in, i, a, text, b)
		}
	})
}
