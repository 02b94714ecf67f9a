package labels

import "github.com/cespare/xxhash/v2"

// hashSep follows every name and every value in the bytes Hash digests, so
// that moving a boundary ({a="bc"} vs {ab="c"}) changes the hash. It is not
// valid UTF-8 and so rarely appears inside names or values.
const hashSep = "\xff"

// hashBufSize is the stack buffer Hash gathers bytes in. Almost every series
// fits, and then a single xxhash.Sum64 call over contiguous bytes is much
// faster than streaming many small writes into a Digest.
const hashBufSize = 1024

// Hash returns the xxhash64 of the names and values in order, each followed
// by the byte 0xff. It depends only on the labels, so it is the same in
// every process and for every way of building the set.
func (ls Labels) Hash() uint64 {
	var buf [hashBufSize]byte
	b := buf[:0]
	var d xxhash.Digest
	streaming := false
	for i := 0; i < len(ls.data); {
		var l Label
		l, i = decodeLabel(ls.data, i)
		if len(b)+len(l.Name)+len(l.Value)+2 > cap(b) {
			// Too big for the buffer: continue with a streaming digest,
			// which yields the same hash as one Sum64 over all the bytes.
			if !streaming {
				d.Reset()
				streaming = true
			}
			_, _ = d.Write(b)
			b = b[:0]
			if len(l.Name)+len(l.Value)+2 > cap(b) {
				_, _ = d.WriteString(l.Name)
				_, _ = d.WriteString(hashSep)
				_, _ = d.WriteString(l.Value)
				_, _ = d.WriteString(hashSep)
				continue
			}
		}
		b = append(b, l.Name...)
		b = append(b, hashSep...)
		b = append(b, l.Value...)
		b = append(b, hashSep...)
	}
	if !streaming {
		return xxhash.Sum64(b)
	}
	_, _ = d.Write(b)
	return d.Sum64()
}
