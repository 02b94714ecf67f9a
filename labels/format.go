package labels

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// String returns the set in Prometheus's text form, {a="1", b="2"}: values
// are Go-quoted, and so are names that are not classic Prometheus label names
// ([a-zA-Z_][a-zA-Z0-9_]*, e.g. {"service.name"="x"}).
func (ls Labels) String() string {
	var buf [1024]byte // typical output fits: no allocation but the result
	b := append(buf[:0], '{')
	for i := 0; i < len(ls.data); {
		var l Label
		if i > 0 {
			b = append(b, ',', ' ')
		}
		l, i = decodeLabel(ls.data, i)
		b = appendName(b, l.Name)
		b = append(b, '=')
		b = strconv.AppendQuote(b, l.Value)
	}
	b = append(b, '}')
	return string(b)
}

// appendName appends a label name as it appears in the text form: bare if it
// is a classic name, quoted otherwise.
func appendName(b []byte, name string) []byte {
	if isClassicName(name) {
		return append(b, name...)
	}
	return strconv.AppendQuote(b, name)
}

// isClassicName reports whether name matches [a-zA-Z_][a-zA-Z0-9_]*, the
// label names Prometheus accepted before it allowed any UTF-8.
func isClassicName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// MarshalJSON encodes the set as a JSON object, {"a":"1","b":"2"}, with the
// names in sorted order. It implements json.Marshaler.
func (ls Labels) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(ls.data)+16)
	b = append(b, '{')
	for i := 0; i < len(ls.data); {
		var l Label
		if i > 0 {
			b = append(b, ',')
		}
		l, i = decodeLabel(ls.data, i)
		var err error
		if b, err = appendJSONString(b, l.Name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendJSONString(b, l.Value); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendJSONString(b []byte, s string) ([]byte, error) {
	q, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("labels: encoding JSON: %w", err)
	}
	return append(b, q...), nil
}

// UnmarshalJSON decodes a JSON object of string values into the set,
// replacing what ls held. null decodes to the empty set; if a name repeats,
// the last value wins. Errors wrap ErrInvalidJSON. It implements
// json.Unmarshaler.
func (ls *Labels) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	*ls = FromMap(m)
	return nil
}
