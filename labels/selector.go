package labels

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalidSelector is wrapped by every error ParseSelector returns. The
// error is a *SelectorError, which also gives the byte position.
var ErrInvalidSelector = errors.New("labels: invalid selector")

// SelectorError is a selector that did not parse: what is wrong and the
// byte offset in the input where it was found. It wraps ErrInvalidSelector
// and, when the cause is an invalid regular expression, the error
// NewMatcher returned (which wraps ErrInvalidRegex).
type SelectorError struct {
	Pos   int    // byte offset in the input, 0-based
	Msg   string // what is wrong, for a human
	Cause error  // underlying error, or nil
}

// Error implements error.
func (e *SelectorError) Error() string {
	s := fmt.Sprintf("%v: at byte %d: %s", ErrInvalidSelector, e.Pos, e.Msg)
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns ErrInvalidSelector and the cause, if any, for errors.Is
// and errors.As.
func (e *SelectorError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrInvalidSelector}
	}
	return []error{ErrInvalidSelector, e.Cause}
}

// ParseSelector parses a Prometheus series selector, such as
//
//	metric
//	metric{job="node", mode!="idle", instance=~"db-.*", path!~"/tmp/.*"}
//	{__name__=~"http_.*", "service.name"="api"}
//	{"metric.name", env='prod'}
//
// and returns its matchers: first the metric name given before the braces
// (as __name__="metric"), then the matchers in the braces in the order
// written. Inside the braces a label name is a classic name
// ([a-zA-Z_][a-zA-Z0-9_]*) or any non-empty UTF-8 string in quotes; a quoted
// string standing alone is the metric name (Prometheus 3 syntax). A metric
// name before the braces is [a-zA-Z_:][a-zA-Z0-9_:]*; PromQL keywords are
// accepted there. Values are quoted strings: in double or single quotes with
// Go's escapes (\n, \t, \\, \xFF, \377, \u00e9, \U0001F600, and the quote
// character itself), or in back-ticks, raw. Whitespace and # comments
// between tokens are ignored, and a trailing comma is allowed.
//
// As in Prometheus, a selector must have at least one matcher that does not
// match the empty string (so {} and {a=""} are rejected), and a metric name
// before the braces may not be combined with a __name__ matcher inside them.
// Errors are *SelectorError values that wrap ErrInvalidSelector.
func ParseSelector(s string) ([]*Matcher, error) {
	p := selectorParser{in: s}
	ms, err := p.parse()
	if err != nil {
		return nil, err
	}
	return ms, nil
}

// selectorParser is a hand-written recursive-descent parser over the input
// bytes. pos only moves forward.
type selectorParser struct {
	in  string
	pos int
}

func (p *selectorParser) errorf(pos int, format string, args ...any) error {
	return &SelectorError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *selectorParser) parse() ([]*Matcher, error) {
	p.skipSpace()
	start := p.pos
	if p.eof() {
		return nil, p.errorf(p.pos, "empty selector")
	}
	var ms []*Matcher
	hasName := false
	if c := p.in[p.pos]; isMetricNameStart(c) {
		name := p.metricName()
		ms = append(ms, &Matcher{Type: MatchEqual, Name: MetricName, Value: name})
		hasName = true
		p.skipSpace()
	}
	if !p.eof() && p.in[p.pos] == '{' {
		var err error
		if ms, err = p.braces(ms, hasName); err != nil {
			return nil, err
		}
		p.skipSpace()
	} else if !hasName {
		return nil, p.errorf(p.pos, "unexpected %s, want a metric name or '{'", p.describe())
	}
	if !p.eof() {
		return nil, p.errorf(p.pos, "unexpected %s after the selector", p.describe())
	}
	for _, m := range ms {
		if !m.Matches("") {
			return ms, nil
		}
	}
	return nil, p.errorf(start, "selector must contain at least one matcher that does not match the empty string")
}

// braces parses "{ item, item, ... }" at p.pos, appending to ms. hasName
// reports whether a metric name preceded the braces.
func (p *selectorParser) braces(ms []*Matcher, hasName bool) ([]*Matcher, error) {
	p.pos++ // '{'
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf(p.pos, "unterminated selector, want '}'")
		}
		if p.in[p.pos] == '}' {
			p.pos++
			return ms, nil
		}
		itemPos := p.pos
		m, err := p.item()
		if err != nil {
			return nil, err
		}
		if hasName && m.Name == MetricName {
			return nil, p.errorf(itemPos, "metric name set twice: %q before the braces and %s in them", ms[0].Value, m)
		}
		ms = append(ms, m)
		p.skipSpace()
		switch {
		case p.eof():
			return nil, p.errorf(p.pos, "unterminated selector, want ',' or '}'")
		case p.in[p.pos] == ',':
			p.pos++
		case p.in[p.pos] != '}':
			return nil, p.errorf(p.pos, "unexpected %s, want ',' or '}'", p.describe())
		}
	}
}

// item parses one element inside braces: name op "value", or a quoted
// metric name standing alone.
func (p *selectorParser) item() (*Matcher, error) {
	namePos := p.pos
	var name string
	quoted := false
	switch c := p.in[p.pos]; {
	case isLabelNameStart(c):
		name = p.labelName()
	case isQuote(c):
		var err error
		if name, err = p.quoted(); err != nil {
			return nil, err
		}
		if name == "" {
			return nil, p.errorf(namePos, "empty label name")
		}
		if !utf8.ValidString(name) {
			return nil, p.errorf(namePos, "label name %q is not valid UTF-8", name)
		}
		quoted = true
	default:
		return nil, p.errorf(p.pos, "unexpected %s, want a label name", p.describe())
	}
	p.skipSpace()
	opPos := p.pos
	t, ok := p.op()
	if !ok {
		if quoted && !p.eof() && (p.in[p.pos] == ',' || p.in[p.pos] == '}') {
			return &Matcher{Type: MatchEqual, Name: MetricName, Value: name}, nil
		}
		return nil, p.errorf(opPos, "unexpected %s, want one of = != =~ !~", p.describe())
	}
	p.skipSpace()
	valuePos := p.pos
	if p.eof() || !isQuote(p.in[p.pos]) {
		return nil, p.errorf(p.pos, "unexpected %s, want a quoted label value", p.describe())
	}
	value, err := p.quoted()
	if err != nil {
		return nil, err
	}
	m, err := NewMatcher(t, name, value)
	if err != nil {
		return nil, &SelectorError{Pos: valuePos, Msg: fmt.Sprintf("matcher %s", name), Cause: err}
	}
	return m, nil
}

// op parses a match operator at p.pos.
func (p *selectorParser) op() (MatchType, bool) {
	rest := p.in[p.pos:]
	switch {
	case strings.HasPrefix(rest, "=~"):
		p.pos += 2
		return MatchRegexp, true
	case strings.HasPrefix(rest, "!~"):
		p.pos += 2
		return MatchNotRegexp, true
	case strings.HasPrefix(rest, "!="):
		p.pos += 2
		return MatchNotEqual, true
	case strings.HasPrefix(rest, "="):
		p.pos++
		return MatchEqual, true
	}
	return 0, false
}

// metricName scans [a-zA-Z_:][a-zA-Z0-9_:]*; the caller checked the first
// byte.
func (p *selectorParser) metricName() string {
	start := p.pos
	p.pos++
	for !p.eof() && (isMetricNameStart(p.in[p.pos]) || isDigit(p.in[p.pos])) {
		p.pos++
	}
	return p.in[start:p.pos]
}

// labelName scans [a-zA-Z_][a-zA-Z0-9_]*; the caller checked the first byte.
func (p *selectorParser) labelName() string {
	start := p.pos
	p.pos++
	for !p.eof() && (isLabelNameStart(p.in[p.pos]) || isDigit(p.in[p.pos])) {
		p.pos++
	}
	return p.in[start:p.pos]
}

// skipSpace skips whitespace and comments (from '#' to the end of the line).
func (p *selectorParser) skipSpace() {
	for !p.eof() {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		case '#':
			if i := strings.IndexByte(p.in[p.pos:], '\n'); i >= 0 {
				p.pos += i + 1
			} else {
				p.pos = len(p.in)
			}
		default:
			return
		}
	}
}

func (p *selectorParser) eof() bool { return p.pos >= len(p.in) }

// describe names what is at p.pos, for error messages.
func (p *selectorParser) describe() string {
	if p.eof() {
		return "end of input"
	}
	r, size := utf8.DecodeRuneInString(p.in[p.pos:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("byte %#02x", p.in[p.pos])
	}
	return fmt.Sprintf("%q", r)
}

func isMetricNameStart(c byte) bool { return isLabelNameStart(c) || c == ':' }

func isLabelNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }
