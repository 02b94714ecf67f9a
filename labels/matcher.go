package labels

import (
	"fmt"
	"slices"
	"strconv"
)

// MatchType is the kind of test a Matcher applies to a label value.
type MatchType int

// The match types, in Prometheus's order.
const (
	MatchEqual     MatchType = iota // value == Value
	MatchNotEqual                   // value != Value
	MatchRegexp                     // Value, as an anchored regexp, matches value
	MatchNotRegexp                  // Value, as an anchored regexp, does not match value
)

// String returns the operator as written in a selector: "=", "!=", "=~" or
// "!~" ("MatchType(n)" for an invalid type).
func (t MatchType) String() string {
	switch t {
	case MatchEqual:
		return "="
	case MatchNotEqual:
		return "!="
	case MatchRegexp:
		return "=~"
	case MatchNotRegexp:
		return "!~"
	}
	return "MatchType(" + strconv.Itoa(int(t)) + ")"
}

// Matcher tests the value of the label called Name. A missing label is
// tested as the empty value, so {a=""} selects the series without label a.
//
// Create matchers with NewMatcher: it compiles regular expressions. Equality
// matchers may also be written as struct literals. A Matcher must not be
// modified after creation; it is then safe for concurrent use.
type Matcher struct {
	Type  MatchType
	Name  string
	Value string

	// re is the compiled Value for MatchRegexp and MatchNotRegexp; nil for
	// the other types.
	re *regexMatcher
}

// NewMatcher returns a matcher of type t for the label called name. For the
// regexp types, value must be an RE2 expression; it has to match the whole
// label value, and '.' matches newlines too (Prometheus's semantics: the
// expression compiled is "^(?s:" + value + ")$"; so, as in Prometheus, a
// value that closes that group itself, like "a)|(b", is accepted and is not
// fully anchored). A value that does not compile yields an error wrapping
// ErrInvalidRegex.
func NewMatcher(t MatchType, name, value string) (*Matcher, error) {
	m := &Matcher{Type: t, Name: name, Value: value}
	switch t {
	case MatchEqual, MatchNotEqual:
	case MatchRegexp, MatchNotRegexp:
		re, err := compileRegex(value)
		if err != nil {
			return nil, fmt.Errorf("labels: matcher for %q: %w", name, err)
		}
		m.re = re
	default:
		return nil, fmt.Errorf("%w: %d", ErrInvalidMatchType, int(t))
	}
	return m, nil
}

// MustNewMatcher is NewMatcher for tests and constant matchers: it panics
// if NewMatcher fails.
func MustNewMatcher(t MatchType, name, value string) *Matcher {
	m, err := NewMatcher(t, name, value)
	if err != nil {
		panic(err)
	}
	return m
}

// Matches reports whether the label value s satisfies the matcher. It panics
// if a regexp matcher was not made by NewMatcher (a programming error); it
// reports false for an invalid Type.
func (m *Matcher) Matches(s string) bool {
	switch m.Type {
	case MatchEqual:
		return s == m.Value
	case MatchNotEqual:
		return s != m.Value
	case MatchRegexp:
		return m.regex().matches(s)
	case MatchNotRegexp:
		return !m.regex().matches(s)
	}
	return false
}

func (m *Matcher) regex() *regexMatcher {
	if m.re == nil {
		panic("labels: regexp Matcher not created by NewMatcher")
	}
	return m.re
}

// String returns the matcher as written in a selector: a="b", a!="b",
// a=~"b" or a!~"b". The value is Go-quoted, and so is the name when it is
// not a classic Prometheus label name.
func (m *Matcher) String() string {
	b := make([]byte, 0, len(m.Name)+len(m.Value)+6)
	b = appendName(b, m.Name)
	b = append(b, m.Type.String()...)
	b = strconv.AppendQuote(b, m.Value)
	return string(b)
}

// SetMatches returns, sorted, the complete set of values the matcher
// matches when that set is small and known: for MatchEqual it is {Value};
// for MatchRegexp it is known when the expression is a literal or an
// alternation of literals (such as "foo|bar" or "(a|b)c"), up to
// maxSetMatches values. Otherwise, and for the negative types, it returns
// nil. An index can look the values up directly instead of testing every
// value it holds. An empty string in the set stands for the empty value,
// which also matches series without the label. The caller owns the slice.
func (m *Matcher) SetMatches() []string {
	switch m.Type {
	case MatchEqual:
		return []string{m.Value}
	case MatchRegexp:
		return slices.Clone(m.regex().set)
	}
	return nil
}

// Prefix returns a literal prefix that every value the matcher matches
// starts with: Value for MatchEqual, "foo" for the regexp "foo.*" or
// "foo(bar|baz)". It returns "" when there is none, and always for the
// negative types.
func (m *Matcher) Prefix() string {
	switch m.Type {
	case MatchEqual:
		return m.Value
	case MatchRegexp:
		return m.regex().prefix
	}
	return ""
}

// MatchLabels reports whether ls satisfies all of ms. A label missing from
// ls is matched as the empty value.
func MatchLabels(ls Labels, ms ...*Matcher) bool {
	for _, m := range ms {
		if !m.Matches(ls.Get(m.Name)) {
			return false
		}
	}
	return true
}
