package labels

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxSetMatches bounds how many values a regexp may be expanded into for a
// set match. It keeps NewMatcher cheap (short expressions such as
// "[0-9]{4}" expand combinatorially) and keeps SetMatches a list an index
// can reasonably look up one value at a time; bigger sets use the regexp.
const maxSetMatches = 256

// smallSetMax is the largest set matched by scanning a slice; above it a map
// is used. Scanning a few strings, most of which differ in length, costs
// less than hashing the input for a map lookup.
const smallSetMax = 16

// matchKind selects how a regexMatcher tests a value.
type matchKind uint8

const (
	kindRegexp   matchKind = iota // prefix check, then the compiled regexp
	kindLiteral                   // s == lit
	kindSet                       // s is in set
	kindAny                       // .* : every value
	kindNonEmpty                  // .+ : every non-empty value
	kindPrefix                    // lit.*
	kindSuffix                    // .*lit
	kindContains                  // .*lit.*
)

// regexMatcher is a compiled regexp matcher value. It is immutable once
// compileRegex returns, and so safe for concurrent use.
//
// Invariant: for every string s, matches(s) == re.MatchString(s). The fast
// paths are chosen only from the parsed expression, never from its text.
type regexMatcher struct {
	kind     matchKind
	lit      string              // kindLiteral, kindPrefix, kindSuffix, kindContains
	set      []string            // kindLiteral and kindSet: every matching value, sorted
	setIndex map[string]struct{} // kindSet when len(set) > smallSetMax
	prefix   string              // every matching value starts with it
	re       *regexp.Regexp      // "^(?s:" + value + ")$"
}

// compileRegex compiles a matcher value with Prometheus's anchoring and picks
// the fastest equivalent test.
func compileRegex(value string) (*regexMatcher, error) {
	pattern := "^(?s:" + value + ")$"
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidRegex, value, err)
	}
	r := &regexMatcher{re: re}
	// regexp.Compile parses with these same flags, so Parse cannot fail
	// here; if it ever did, the plain regexp is still correct.
	if tree, err := syntax.Parse(pattern, syntax.Perl); err == nil {
		r.analyse(tree.Simplify())
	}
	return r, nil
}

// matches reports whether s matches the whole expression.
func (r *regexMatcher) matches(s string) bool {
	switch r.kind {
	case kindLiteral:
		return s == r.lit
	case kindSet:
		if r.setIndex != nil {
			_, ok := r.setIndex[s]
			return ok
		}
		return slices.Contains(r.set, s)
	case kindAny:
		return true
	case kindNonEmpty:
		return s != ""
	case kindPrefix:
		return strings.HasPrefix(s, r.lit)
	case kindSuffix:
		return strings.HasSuffix(s, r.lit)
	case kindContains:
		return strings.Contains(s, r.lit)
	}
	return strings.HasPrefix(s, r.prefix) && r.re.MatchString(s)
}

// analyse sets kind, lit, set and prefix from the parsed pattern. It leaves
// kindRegexp when the pattern has none of the recognised shapes.
func (r *regexMatcher) analyse(tree *syntax.Regexp) {
	items := flatten(tree, nil)
	if len(items) < 2 || items[0].Op != syntax.OpBeginText || items[len(items)-1].Op != syntax.OpEndText {
		// The value escaped the group (e.g. "a)|(b"): not fully anchored.
		return
	}
	body := items[1 : len(items)-1]

	if set, ok := concatSet(body); ok {
		r.set = set
		r.prefix = commonPrefix(set)
		if len(set) == 1 {
			r.kind, r.lit = kindLiteral, set[0]
			return
		}
		r.kind = kindSet
		if len(set) > smallSetMax {
			r.setIndex = make(map[string]struct{}, len(set))
			for _, v := range set {
				r.setIndex[v] = struct{}{}
			}
		}
		return
	}

	ps := splitParts(body)
	if len(ps) > 0 && ps[0].kind == partLit {
		r.prefix = ps[0].lit
	} else {
		r.prefix = literalPrefix(body)
	}
	switch {
	case hasShape(ps, partStar):
		r.kind = kindAny
	case hasShape(ps, partPlus):
		r.kind = kindNonEmpty
	case hasShape(ps, partLit, partStar):
		r.kind, r.lit = kindPrefix, ps[0].lit
	case hasShape(ps, partStar, partLit):
		r.kind, r.lit = kindSuffix, ps[1].lit
	case hasShape(ps, partStar, partLit, partStar):
		r.kind, r.lit = kindContains, ps[1].lit
	}
}

// flatten appends to out the sequence of nodes that re matches one after
// the other, looking through concatenations and capture groups (which do
// not change what matches) and dropping empty matches.
func flatten(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = flatten(sub, out)
		}
	case syntax.OpCapture:
		out = flatten(re.Sub[0], out)
	case syntax.OpEmptyMatch:
	default:
		out = append(out, re)
	}
	return out
}

// literalPrefix returns the runes that body's leading literal nodes require
// byte for byte (see nodeSet), stopping at the first rune that is not.
func literalPrefix(body []*syntax.Regexp) string {
	var sb strings.Builder
	for _, n := range body {
		if n.Op != syntax.OpLiteral || n.Flags&syntax.FoldCase != 0 {
			break
		}
		for _, r := range n.Rune {
			if !exactRune(r) {
				return sb.String()
			}
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// partKind classifies a run of nodes in an anchored body.
type partKind uint8

const (
	partLit   partKind = iota // matches exactly one string
	partStar                  // (?s:.*)
	partPlus                  // (?s:.+)
	partOther                 // anything else
)

type part struct {
	kind partKind
	lit  string // for partLit
}

// splitParts groups body into parts, merging adjacent literals and adjacent
// .* (".*.*" matches what ".*" does).
func splitParts(body []*syntax.Regexp) []part {
	var ps []part
	last := func() *part {
		if len(ps) == 0 {
			return nil
		}
		return &ps[len(ps)-1]
	}
	for _, n := range body {
		switch {
		case isAnyRepeat(n, syntax.OpStar):
			if l := last(); l == nil || l.kind != partStar {
				ps = append(ps, part{kind: partStar})
			}
		case isAnyRepeat(n, syntax.OpPlus):
			ps = append(ps, part{kind: partPlus})
		default:
			set, ok := nodeSet(n)
			switch {
			case !ok || len(set) != 1:
				ps = append(ps, part{kind: partOther})
			case set[0] == "":
			case last() != nil && last().kind == partLit:
				last().lit += set[0]
			default:
				ps = append(ps, part{kind: partLit, lit: set[0]})
			}
		}
	}
	return ps
}

// isAnyRepeat reports whether n is op applied to "any character including
// newline" (so not (?-s:.), which excludes '\n').
func isAnyRepeat(n *syntax.Regexp, op syntax.Op) bool {
	return n.Op == op && n.Sub[0].Op == syntax.OpAnyChar
}

func hasShape(ps []part, kinds ...partKind) bool {
	if len(ps) != len(kinds) {
		return false
	}
	for i, k := range kinds {
		if ps[i].kind != k {
			return false
		}
	}
	return true
}

// concatSet returns the sorted, de-duplicated set of strings matched by the
// nodes in sequence, if it is finite, has at most maxSetMatches members and
// matching it is exactly byte equality (see nodeSet).
func concatSet(nodes []*syntax.Regexp) ([]string, bool) {
	set := []string{""}
	for _, n := range nodes {
		s, ok := nodeSet(n)
		if !ok || len(set)*len(s) > maxSetMatches {
			return nil, false
		}
		set = product(set, s)
	}
	slices.Sort(set)
	return slices.Compact(set), true
}

// product returns every a+b for a in xs and b in ys.
func product(xs, ys []string) []string {
	if len(ys) == 1 {
		for i := range xs {
			xs[i] += ys[0]
		}
		return xs
	}
	out := make([]string, 0, len(xs)*len(ys))
	for _, x := range xs {
		for _, y := range ys {
			out = append(out, x+y)
		}
	}
	return out
}

// nodeSet returns the strings n matches, when they are few and a value
// matches n exactly when it is byte-equal to one of them. That rules out
// case folding and the runes U+FFFD and surrogates: the regexp engine reads
// each invalid UTF-8 byte of a value as U+FFFD, so "\uFFFD" in an
// expression also matches "\xff".
func nodeSet(n *syntax.Regexp) ([]string, bool) {
	switch n.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		if n.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		for _, r := range n.Rune {
			if !exactRune(r) {
				return nil, false
			}
		}
		return []string{string(n.Rune)}, true
	case syntax.OpCharClass:
		return classSet(n.Rune)
	case syntax.OpCapture:
		return nodeSet(n.Sub[0])
	case syntax.OpConcat:
		return concatSet(n.Sub)
	case syntax.OpQuest:
		s, ok := nodeSet(n.Sub[0])
		if !ok || len(s)+1 > maxSetMatches {
			return nil, false
		}
		return append(s, ""), true
	case syntax.OpAlternate:
		var out []string
		for _, sub := range n.Sub {
			s, ok := nodeSet(sub)
			if !ok || len(out)+len(s) > maxSetMatches {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	}
	return nil, false
}

// classSet expands a character class given as rune ranges [lo, hi] pairs.
func classSet(ranges []rune) ([]string, bool) {
	count := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= utf8.RuneError && utf8.RuneError <= hi || lo <= 0xDFFF && 0xD800 <= hi || hi > utf8.MaxRune {
			return nil, false
		}
		count += int(hi-lo) + 1
		if count > maxSetMatches {
			return nil, false
		}
	}
	out := make([]string, 0, count)
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			out = append(out, string(r))
		}
	}
	return out, true
}

// exactRune reports whether a value matches the rune r exactly when it holds
// r's UTF-8 encoding.
func exactRune(r rune) bool {
	return utf8.ValidRune(r) && r != utf8.RuneError
}

// commonPrefix returns the longest prefix shared by all of set, cut back to
// a whole number of runes.
func commonPrefix(set []string) string {
	if len(set) == 0 {
		return ""
	}
	p := set[0]
	for _, s := range set[1:] {
		n := 0
		for n < len(p) && n < len(s) && p[n] == s[n] {
			n++
		}
		p = p[:n]
	}
	for p != "" {
		if r, size := utf8.DecodeLastRuneInString(p); r != utf8.RuneError || size != 1 {
			break
		}
		p = p[:len(p)-1]
	}
	return p
}
