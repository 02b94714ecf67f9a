// Package labels holds the label sets that name isotsdb series and the
// matchers that select them.
//
// A Labels value is an immutable set of name/value pairs sorted by name. It is
// stored as one string in which every name and value is written as its byte
// length followed by its bytes, in sorted order; the lengths are written as
// Prometheus's stringlabels writes them (encoding.go), so adapters can hand
// the string to Prometheus as it is. A label set therefore
// costs a single allocation, copying it is free, and two sets are equal
// exactly when their strings are. Every constructor in this package (New,
// FromStrings, FromMap, Builder, ScratchBuilder, UnmarshalJSON) produces that
// canonical form; no other way to create a non-empty Labels exists, so the
// decoders here may trust it.
//
// Names are expected to be unique within a set. New and the builders do not
// remove duplicates (a decoder must be able to see them); Validate and
// HasDuplicateNames report them.
//
// A Matcher tests one label value: equality, inequality, or a regular
// expression that must match the whole value (RE2 syntax, '.' also matches
// newlines, exactly like Prometheus). NewMatcher analyses the parsed
// expression once and picks a specialised test (string equality, a set
// lookup, HasPrefix, HasSuffix, Contains, ...) when the expression allows it,
// falling back to the compiled regexp otherwise. Matchers are immutable and
// safe for concurrent use.
package labels
