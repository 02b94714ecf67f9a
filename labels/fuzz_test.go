package labels

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// corpusPath is the shared benchmark corpus: one JSON label set per line.
const corpusPath = "../testdata/20kseries.json"

// corpusLines returns up to n lines of the corpus (all if n <= 0).
func corpusLines(tb testing.TB, n int) [][]byte {
	tb.Helper()
	f, err := os.Open(corpusPath)
	require.NoError(tb, err, "opening corpus")
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() && (n <= 0 || len(lines) < n) {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	require.NoError(tb, sc.Err(), "reading corpus")
	return lines
}

// FuzzLabelsRoundTrip builds label sets from arbitrary strings (fields
// separated by NUL bytes, taken as name, value pairs) in every supported way
// and checks that they hold exactly the input, sorted, and that the set's
// operations agree with plain implementations.
func FuzzLabelsRoundTrip(f *testing.F) {
	f.Add([]byte("b\x002\x00a\x001"))
	f.Add([]byte("a\x00x\x00a\x00y\x00\x00empty-name"))
	f.Add([]byte("ñ\x00ü\x00\xff\x00\xfe\x00" + strings.Repeat("v", 300) + "\x00k"))
	f.Add([]byte(""))
	f.Add([]byte("odd"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fields := strings.Split(string(data), "\x00")
		if len(fields)%2 == 1 {
			fields = append(fields, "")
		}
		var in []Label
		for i := 0; i < len(fields); i += 2 {
			in = append(in, Label{Name: fields[i], Value: fields[i+1]})
		}
		want := slices.Clone(in)
		slices.SortStableFunc(want, cmpName)

		ls := New(in...)
		require.Equal(t, want, collect(ls), "Range")
		require.Equal(t, len(want), ls.Len(), "Len")
		size := 0
		for _, l := range want {
			size += encodedLen(l.Name) + encodedLen(l.Value)
		}
		require.Equal(t, size, ls.ByteSize(), "ByteSize")
		for i, l := range want {
			if first := i == 0 || want[i-1].Name != l.Name; first {
				require.Equal(t, l.Value, ls.Get(l.Name), "Get(%q)", l.Name)
			}
			require.True(t, ls.Has(l.Name), "Has(%q)", l.Name)
		}
		require.False(t, ls.Has("\x00"), "Has of an absent name") // no field can contain NUL
		require.Equal(t, refHash(want), ls.Hash(), "Hash differs from the reference")
		_ = ls.String()

		byStrings := FromStrings(fields...)
		sb := NewScratchBuilder(0)
		for _, l := range in {
			sb.Add(l.Name, l.Value)
		}
		for _, other := range []Labels{byStrings, sb.Labels()} {
			require.True(t, Equal(ls, other), "built differently: %s vs %s", ls, other)
			require.Zero(t, Compare(ls, other), "built differently: %s vs %s", ls, other)
			require.Equal(t, ls.Hash(), other.Hash(), "built differently: %s vs %s", ls, other)
		}

		// Compare against the reference on every prefix of the input and
		// on a set with one value changed.
		for k := 0; k <= len(in); k++ {
			sub := slices.Clone(in[:k])
			if k > 0 {
				sub[k-1].Value += "\x00"
			}
			sorted := slices.Clone(sub)
			slices.SortStableFunc(sorted, cmpName)
			other := New(sub...)
			require.Equal(t, refCompare(want, sorted), Compare(ls, other), "Compare(%s, %s)", ls, other)
			require.Equal(t, refCompare(sorted, want), Compare(other, ls), "Compare(%s, %s)", other, ls)
		}

		if _, dup := ls.HasDuplicateNames(); dup {
			return
		}
		// Without duplicates: the builder and JSON give the same set.
		b := NewBuilder(EmptyLabels())
		var nonEmpty []Label
		for _, l := range in {
			b.Set(l.Name, l.Value)
			if l.Value != "" {
				nonEmpty = append(nonEmpty, l)
			}
		}
		require.True(t, Equal(b.Labels(), New(nonEmpty...)), "Builder: %s want %s", b.Labels(), New(nonEmpty...))
		js, err := ls.MarshalJSON()
		require.NoError(t, err)
		var back Labels
		require.NoError(t, back.UnmarshalJSON(js), "UnmarshalJSON(%s)", js)
		if utf8.Valid(data) {
			require.True(t, Equal(ls, back), "JSON round trip: %s -> %s -> %s", ls, js, back)
		}
	})
}

// FuzzUnmarshalJSON feeds arbitrary bytes to UnmarshalJSON: it must never
// panic, must fail exactly when encoding/json rejects the input, and what it
// accepts must survive a round trip.
func FuzzUnmarshalJSON(f *testing.F) {
	for _, line := range corpusLines(f, 16) {
		f.Add(line)
	}
	for _, s := range []string{`{}`, `null`, `{"a":"b","a":"c"}`, `{"a":1}`, `[`, `{"\u00e9":"\ud800"}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var ls Labels
		err := ls.UnmarshalJSON(data)
		var m map[string]string
		refErr := json.Unmarshal(data, &m)
		require.Equal(t, refErr == nil, err == nil, "UnmarshalJSON error %v, encoding/json error %v", err, refErr)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidJSON)
			return
		}
		if m == nil {
			m = map[string]string{}
		}
		got := ls.Map()
		require.True(t, mapsEqual(got, m), "decoded %v, encoding/json decoded %v", got, m)
		js, err := ls.MarshalJSON()
		require.NoError(t, err)
		var back Labels
		require.NoError(t, back.UnmarshalJSON(js), "round trip of %s", ls)
		require.True(t, Equal(ls, back), "round trip of %s: %s", ls, back)
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// FuzzMatcher checks that a regexp matcher, whatever fast path it picked,
// agrees with regexp.MatchString on the anchored pattern, and that
// SetMatches and Prefix are consistent with it.
func FuzzMatcher(f *testing.F) {
	for i, p := range agreementPatterns {
		f.Add(p, agreementInputs[i%len(agreementInputs)])
	}
	f.Fuzz(func(t *testing.T, pattern, input string) {
		// Keep each run fast: the regexp engine is linear in the input, and
		// the checks below try many strings derived from it.
		if len(pattern) > 512 {
			return
		}
		input = input[:min(len(input), 256)]
		inputs := []string{input, ""}
		step := max(1, len(input)/16)
		for i := 0; i < len(input); i += step {
			inputs = append(inputs, input[:i], input[i:])
		}
		checkAgainstRegexp(t, pattern, inputs)
	})
}
