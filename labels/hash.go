package labels

import "github.com/cespare/xxhash/v2"

// Hash returns the xxhash64 of the set's encoding (Encoding). Each set has
// exactly one encoding, so the hash depends only on the labels: it is the
// same in every process and for every way of building the set. For a set
// shorter than MaxPromCompatible it is also the hash Prometheus's default
// (stringlabels) build gives the same labels, whose label string is that
// encoding. Hashing the encoding in one call, without decoding it, is what
// makes Hash cheap enough for every lookup of a series by its labels.
func (ls Labels) Hash() uint64 { return xxhash.Sum64String(ls.data) }
