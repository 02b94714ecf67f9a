package index

import (
	"errors"
	"fmt"

	"github.com/isotsdb/tsdb/labels"
)

// ErrInvalidMatcher is returned by PostingsForMatchers for a nil matcher or
// one of an unknown type.
var ErrInvalidMatcher = errors.New("index: invalid matcher")

// PostingsReader is the read side of an inverted index, all that
// PostingsForMatchers needs. *MemPostings (the head) and *Reader (a block's
// index file) implement it.
type PostingsReader interface {
	// Postings returns the union of the postings lists of name=v for each
	// v in values, in any order; values without a list contribute nothing.
	Postings(name string, values ...string) (Postings, error)
	// SortedLabelValues returns the values the label name takes, sorted.
	// It returns nothing for the empty name.
	SortedLabelValues(name string) ([]string, error)
	// AllPostings returns the references of all series.
	AllPostings() (Postings, error)
}

// PostingsForMatchers returns the series of ix that satisfy every matcher,
// with Prometheus's semantics: a series without a label behaves as if it
// had it with the empty value. Without matchers, every series matches.
//
// Each matcher that does not match "" contributes the union of the lists of
// the values it matches, and these are intersected. Each matcher that does
// match "" selects all series except those whose value for the name does
// not match; those exclusions are subtracted from the intersection, which
// starts from all series when no matcher contributed a list. Equality
// matchers and regular expressions that are literal alternations
// (Matcher.SetMatches) look their values up directly; the others scan the
// sorted values of their label name.
func PostingsForMatchers(ix PostingsReader, ms ...*labels.Matcher) (Postings, error) {
	var its, drops []Postings
	for _, m := range ms {
		if m == nil {
			return nil, fmt.Errorf("%w: nil", ErrInvalidMatcher)
		}
		if m.Matches("") {
			// Subtract the series whose value is set and does not match.
			p, err := postingsForValues(ix, m, false)
			if err != nil {
				return nil, err
			}
			if !isEmpty(p) {
				drops = append(drops, p)
			}
			continue
		}
		p, err := postingsForValues(ix, m, true)
		if err != nil {
			return nil, err
		}
		if isEmpty(p) {
			return EmptyPostings(), nil
		}
		its = append(its, p)
	}
	if len(its) == 0 {
		all, err := ix.AllPostings()
		if err != nil {
			return nil, fmt.Errorf("index: all postings: %w", err)
		}
		its = append(its, all)
	}
	res := Intersect(its...)
	for _, d := range drops {
		res = Without(res, d)
	}
	return res, nil
}

// postingsForValues returns the union of the lists of m.Name=v over the
// values v for which m.Matches(v) == want.
func postingsForValues(ix PostingsReader, m *labels.Matcher, want bool) (Postings, error) {
	// Lookups that need no scan: the values selected are exactly a known
	// set when the matcher is positive and want, or negative and !want.
	var set []string
	switch m.Type {
	case labels.MatchEqual, labels.MatchNotEqual:
		if want == (m.Type == labels.MatchEqual) {
			set = []string{m.Value}
		}
	case labels.MatchRegexp, labels.MatchNotRegexp:
		if want == (m.Type == labels.MatchRegexp) {
			set = m.SetMatches()
		}
	default:
		return nil, fmt.Errorf("%w: type %v", ErrInvalidMatcher, m.Type)
	}
	if set != nil {
		p, err := ix.Postings(m.Name, set...)
		if err != nil {
			return nil, fmt.Errorf("index: postings for %s: %w", m.Name, err)
		}
		return p, nil
	}

	vals, err := ix.SortedLabelValues(m.Name)
	if err != nil {
		return nil, fmt.Errorf("index: values of %s: %w", m.Name, err)
	}
	sel := vals[:0:0]
	for _, v := range vals {
		if m.Matches(v) == want {
			sel = append(sel, v)
		}
	}
	if len(sel) == 0 {
		return EmptyPostings(), nil
	}
	p, err := ix.Postings(m.Name, sel...)
	if err != nil {
		return nil, fmt.Errorf("index: postings for %s: %w", m.Name, err)
	}
	return p, nil
}
