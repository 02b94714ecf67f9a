package labels

import (
	"strings"
	"unicode/utf8"
)

// quoted parses the string literal at p.pos (the caller checked that it
// starts with a quote) and returns its value.
//
// Double- and single-quoted strings end at the matching quote, may not
// contain a newline, and decode these escapes: \a \b \f \n \r \t \v \\,
// the opening quote (\" or \'), \xHH and \OOO (one byte each, so the value
// may be any bytes), \uHHHH and \UHHHHHHHH (a Unicode code point, written as
// UTF-8). Back-quoted strings are raw: every byte up to the closing
// back-quote, newlines included, with no escapes. In all three forms the
// input itself must be valid UTF-8.
func (p *selectorParser) quoted() (string, error) {
	start := p.pos
	q := p.in[p.pos]
	p.pos++
	if q == '`' {
		end := strings.IndexByte(p.in[p.pos:], '`')
		if end < 0 {
			return "", p.errorf(start, "unterminated raw string")
		}
		s := p.in[p.pos : p.pos+end]
		if i := invalidUTF8At(s); i >= 0 {
			return "", p.errorf(p.pos+i, "invalid UTF-8 in string")
		}
		p.pos += end + 1
		return s, nil
	}
	var b []byte // nil until the first escape: most strings have none
	lit := p.pos // start of the run of literal bytes not yet copied into b
	for {
		if p.eof() {
			return "", p.errorf(start, "unterminated string")
		}
		c := p.in[p.pos]
		switch {
		case c == q:
			s := p.in[lit:p.pos]
			p.pos++
			if b == nil {
				return s, nil
			}
			return string(append(b, s...)), nil
		case c == '\n':
			return "", p.errorf(p.pos, "newline in string")
		case c == '\\':
			b = append(b, p.in[lit:p.pos]...)
			var err error
			if b, err = p.escape(b, q); err != nil {
				return "", err
			}
			lit = p.pos
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.in[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.errorf(p.pos, "invalid UTF-8 in string")
			}
			p.pos += size
		}
	}
}

// escape decodes the escape sequence at p.pos (a backslash) inside a string
// quoted with q, appends its value to b and moves past it.
func (p *selectorParser) escape(b []byte, q byte) ([]byte, error) {
	start := p.pos
	p.pos++ // '\\'
	if p.eof() {
		return nil, p.errorf(start, "unterminated string")
	}
	c := p.in[p.pos]
	p.pos++
	switch c {
	case 'a':
		return append(b, '\a'), nil
	case 'b':
		return append(b, '\b'), nil
	case 'f':
		return append(b, '\f'), nil
	case 'n':
		return append(b, '\n'), nil
	case 'r':
		return append(b, '\r'), nil
	case 't':
		return append(b, '\t'), nil
	case 'v':
		return append(b, '\v'), nil
	case '\\':
		return append(b, '\\'), nil
	case q:
		return append(b, q), nil
	case 'x':
		v, ok := p.digits(2, 16)
		if !ok {
			return nil, p.errorf(start, `\x must be followed by two hex digits`)
		}
		return append(b, byte(v)), nil
	case '0', '1', '2', '3', '4', '5', '6', '7':
		p.pos-- // the first digit is part of the number
		v, ok := p.digits(3, 8)
		if !ok || v > 0xff {
			return nil, p.errorf(start, "octal escape must be three digits from \\000 to \\377")
		}
		return append(b, byte(v)), nil
	case 'u', 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		v, ok := p.digits(n, 16)
		if !ok {
			return nil, p.errorf(start, `\%c must be followed by %d hex digits`, c, n)
		}
		if v > utf8.MaxRune || !utf8.ValidRune(rune(v)) {
			return nil, p.errorf(start, "escape \\%c%0*x is not a valid Unicode code point", c, n, v)
		}
		return utf8.AppendRune(b, rune(v)), nil
	}
	return nil, p.errorf(start, "unknown escape sequence \\%c", c)
}

// digits reads exactly n digits in base 8 or 16 at p.pos. On failure p.pos
// is unspecified; the caller returns an error.
func (p *selectorParser) digits(n int, base uint32) (uint32, bool) {
	if len(p.in)-p.pos < n {
		return 0, false
	}
	var v uint32
	for i := 0; i < n; i++ {
		d, ok := digitValue(p.in[p.pos])
		if !ok || d >= base {
			return 0, false
		}
		v = v*base + d
		p.pos++
	}
	return v, true
}

func digitValue(c byte) (uint32, bool) {
	switch {
	case c >= '0' && c <= '9':
		return uint32(c - '0'), true
	case c >= 'a' && c <= 'f':
		return uint32(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return uint32(c-'A') + 10, true
	}
	return 0, false
}

// invalidUTF8At returns the offset of the first invalid UTF-8 byte in s, or
// -1 if s is valid.
func invalidUTF8At(s string) int {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
