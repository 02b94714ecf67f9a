package labels

import (
	"errors"
	"strings"
	"testing"
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
			if !errors.Is(err, ErrInvalidSelector) || !errors.As(err, &se) {
				t.Fatalf("error %v does not wrap ErrInvalidSelector in a *SelectorError", err)
			}
			if se.Pos < 0 || se.Pos > len(in) {
				t.Fatalf("error position %d outside input of %d bytes", se.Pos, len(in))
			}
			return
		}
		if len(ms) == 0 {
			t.Fatalf("%q parsed to no matchers", in)
		}
		parts := make([]string, len(ms))
		for i, m := range ms {
			parts[i] = m.String()
		}
		text := "{" + strings.Join(parts, ",") + "}"
		again, err := ParseSelector(text)
		if err != nil {
			t.Fatalf("%q parsed, but its formatted form %q did not: %v", in, text, err)
		}
		if len(again) != len(ms) {
			t.Fatalf("%q: %d matchers, formatted %q re-parses to %d", in, len(ms), text, len(again))
		}
		for i := range ms {
			a, b := ms[i], again[i]
			if a.Type != b.Type || a.Name != b.Name || a.Value != b.Value {
				t.Fatalf("%q: matcher %d is %s, re-parsed from %q as %s", in, i, a, text, b)
			}
		}
	})
}
