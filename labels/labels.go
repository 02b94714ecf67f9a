package labels

import (
	"slices"
	"strings"
)

// MetricName is the name of the label that holds a series' metric name.
const MetricName = "__name__"

// Label is one name/value pair.
type Label struct{ Name, Value string }

// Labels is an immutable label set sorted by name, normally with unique
// names. The zero value is the empty set. Copying a Labels is cheap and safe;
// it may be shared between goroutines freely. Use Equal (or Compare) to
// compare two sets.
type Labels struct {
	// data is the encoding described in encoding.go. Invariant: it was
	// produced by encode or checked by FromEncoding, so it decodes cleanly and its labels are sorted by
	// name (stable with respect to how they were added).
	data string
}

// stackLabels is how many labels the constructors sort in a stack buffer
// before falling back to the heap. Series rarely carry more than this.
const stackLabels = 32

// cmpName orders labels by name only; stable sorts keep the order in which
// labels with the same name were given.
func cmpName(a, b Label) int { return strings.Compare(a.Name, b.Name) }

// New returns the label set holding ls, sorted by name. It does not modify
// ls and does not remove duplicate names (see Validate).
func New(ls ...Label) Labels {
	if slices.IsSortedFunc(ls, cmpName) {
		return encode(ls)
	}
	var buf [stackLabels]Label
	sorted := append(buf[:0], ls...)
	slices.SortStableFunc(sorted, cmpName)
	return encode(sorted)
}

// FromStrings returns the label set made of name, value pairs:
// FromStrings("a", "1", "b", "2"). It panics if given an odd number of
// strings, which is a programming error.
func FromStrings(ss ...string) Labels {
	if len(ss)%2 != 0 {
		panic("labels.FromStrings: odd number of strings")
	}
	var buf [stackLabels]Label
	ls := buf[:0]
	for i := 0; i < len(ss); i += 2 {
		ls = append(ls, Label{Name: ss[i], Value: ss[i+1]})
	}
	slices.SortStableFunc(ls, cmpName)
	return encode(ls)
}

// FromMap returns the label set holding the entries of m.
func FromMap(m map[string]string) Labels {
	var buf [stackLabels]Label
	ls := buf[:0]
	for name, value := range m {
		ls = append(ls, Label{Name: name, Value: value})
	}
	slices.SortFunc(ls, cmpName) // map keys are unique: no stability needed
	return encode(ls)
}

// EmptyLabels returns the empty label set (the zero Labels).
func EmptyLabels() Labels { return Labels{} }

// Len returns the number of labels in the set. It walks the set: O(Len).
func (ls Labels) Len() int {
	n := 0
	for i := 0; i < len(ls.data); n++ {
		_, i = decodeLabel(ls.data, i)
	}
	return n
}

// Encoding returns the set's encoding, aliasing it: for each label in name
// order, the name's length, the name, the value's length and the value,
// each length in one byte if below 255, else in more (encoding.go). Equal
// sets have equal encodings. An encoding shorter than MaxPromCompatible is
// the string Prometheus's stringlabels build holds for the same labels;
// adapters use it to convert sets without decoding them.
func (ls Labels) Encoding() string { return ls.data }

// IsEmpty reports whether the set has no labels.
func (ls Labels) IsEmpty() bool { return len(ls.data) == 0 }

// Get returns the value of the label called name, or "" if there is none.
// With duplicate names it returns the first one's value.
func (ls Labels) Get(name string) string {
	v, _ := ls.lookup(name)
	return v
}

// Has reports whether the set has a label called name.
func (ls Labels) Has(name string) bool {
	_, ok := ls.lookup(name)
	return ok
}

// lookup finds name with a linear scan that skips values it does not need
// and stops early once the names sorted so far are past name. A linear scan
// beats a binary search here: sets are small and the encoding has no index.
func (ls Labels) lookup(name string) (string, bool) {
	data := ls.data
	for i := 0; i < len(data); {
		var n string
		n, i = decodeString(data, i)
		if n == name {
			v, _ := decodeString(data, i)
			return v, true
		}
		// Names are sorted: once one sorts after name, name is absent.
		// Comparing the first byte is a cheap, partial version of n > name.
		if n != "" && name != "" && n[0] > name[0] {
			break
		}
		size, next := decodeSize(data, i)
		i = next + size
	}
	return "", false
}

// Range calls f for each label in name order. It does not allocate.
func (ls Labels) Range(f func(l Label)) {
	for i := 0; i < len(ls.data); {
		var l Label
		l, i = decodeLabel(ls.data, i)
		f(l)
	}
}

// Map returns the labels as a new map. With duplicate names the last value
// wins.
func (ls Labels) Map() map[string]string {
	m := make(map[string]string, ls.Len())
	for i := 0; i < len(ls.data); {
		var l Label
		l, i = decodeLabel(ls.data, i)
		m[l.Name] = l.Value
	}
	return m
}

// Validate calls f for each label in name order and returns the first error
// f returns, unwrapped, or nil.
func (ls Labels) Validate(f func(l Label) error) error {
	for i := 0; i < len(ls.data); {
		var l Label
		l, i = decodeLabel(ls.data, i)
		if err := f(l); err != nil {
			return err
		}
	}
	return nil
}

// HasDuplicateNames returns the first name that occurs more than once in the
// set and true, or "" and false if all names are unique.
func (ls Labels) HasDuplicateNames() (string, bool) {
	if ls.IsEmpty() {
		return "", false
	}
	prev, i := decodeLabel(ls.data, 0)
	for i < len(ls.data) {
		var l Label
		l, i = decodeLabel(ls.data, i)
		if l.Name == prev.Name {
			return l.Name, true
		}
		prev = l
	}
	return "", false
}

// ByteSize returns the size in bytes of the set's encoding, for memory
// accounting. The Labels header itself (a string header) is not included.
func (ls Labels) ByteSize() int { return len(ls.data) }

// WithoutEmpty returns ls without its labels that have an empty value (in
// Prometheus's data model a label with an empty value is no label); ls
// itself, no copy, if it has none.
func (ls Labels) WithoutEmpty() Labels {
	// Every empty value is encoded as a zero size byte, so an encoding
	// without a zero byte, which one IndexByte finds, has none.
	if strings.IndexByte(ls.data, 0) < 0 {
		return ls
	}
	empty := false
	ls.Range(func(l Label) { empty = empty || l.Value == "" })
	if !empty {
		return ls
	}
	keep := make([]Label, 0, ls.Len())
	ls.Range(func(l Label) {
		if l.Value != "" {
			keep = append(keep, l)
		}
	})
	return encode(keep)
}

// Clone returns an equal set that shares no memory with ls: what to keep of
// a set made by FromEncoding over memory its owner may reuse.
func (ls Labels) Clone() Labels { return Labels{data: strings.Clone(ls.data)} }
