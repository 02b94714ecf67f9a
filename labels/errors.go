package labels

import "errors"

// Errors returned by this package. They are wrapped with context; test for
// them with errors.Is.
var (
	// ErrInvalidRegex is returned by NewMatcher when a regular-expression
	// matcher's value does not compile. The regexp package's own error is
	// wrapped too.
	ErrInvalidRegex = errors.New("labels: invalid regular expression")
	// ErrInvalidMatchType is returned by NewMatcher for a MatchType outside
	// MatchEqual..MatchNotRegexp.
	ErrInvalidMatchType = errors.New("labels: invalid match type")
	// ErrInvalidJSON is returned by Labels.UnmarshalJSON when the input is not
	// a JSON object whose values are all strings.
	ErrInvalidJSON = errors.New("labels: invalid JSON label set")
)
