package labels

import "slices"

// Builder derives a new label set from a base set by setting and deleting
// labels. A Builder is not safe for concurrent use; the Labels it returns
// are independent of it.
type Builder struct {
	base Labels
	// add holds the labels set since the last Reset. Names are unique and
	// values non-empty. Order is unspecified (Labels sorts it in place).
	add []Label
	// del holds names deleted since the last Reset, possibly repeated. A
	// name in add takes precedence over the same name in del.
	del []string
}

// NewBuilder returns a Builder whose base is base.
func NewBuilder(base Labels) *Builder {
	b := &Builder{}
	b.Reset(base)
	return b
}

// Reset forgets all changes and makes base the new base. The Builder's
// buffers are kept for reuse.
func (b *Builder) Reset(base Labels) {
	b.base = base
	clear(b.add) // drop references to the old strings
	b.add = b.add[:0]
	clear(b.del)
	b.del = b.del[:0]
}

// Set sets the label called name to value, replacing any earlier value. An
// empty value deletes the label, as in Prometheus, where an empty label and
// an absent one mean the same. It returns b for chaining.
func (b *Builder) Set(name, value string) *Builder {
	if value == "" {
		return b.Del(name)
	}
	for i := range b.add {
		if b.add[i].Name == name {
			b.add[i].Value = value
			return b
		}
	}
	b.add = append(b.add, Label{Name: name, Value: value})
	return b
}

// Del deletes the labels with the given names, whether they are in the base
// or were Set earlier. It returns b for chaining.
func (b *Builder) Del(names ...string) *Builder {
	for _, name := range names {
		b.add = slices.DeleteFunc(b.add, func(l Label) bool { return l.Name == name })
		b.del = append(b.del, name)
	}
	return b
}

// Get returns the value the label called name would have in Labels(), or ""
// if it would be absent.
func (b *Builder) Get(name string) string {
	for _, l := range b.add {
		if l.Name == name {
			return l.Value
		}
	}
	if slices.Contains(b.del, name) {
		return ""
	}
	return b.base.Get(name)
}

// Labels returns the base with the changes applied. Duplicate names in the
// base survive unless that name was set or deleted. The Builder can keep
// being used afterwards.
func (b *Builder) Labels() Labels {
	if len(b.add) == 0 && len(b.del) == 0 {
		return b.base
	}
	slices.SortFunc(b.add, cmpName)
	var buf [stackLabels]Label
	out := buf[:0]
	add := b.add
	data := b.base.data
	for i := 0; i < len(data); {
		var l Label
		l, i = decodeLabel(data, i)
		for len(add) > 0 && add[0].Name < l.Name {
			out = append(out, add[0])
			add = add[1:]
		}
		if len(add) > 0 && add[0].Name == l.Name {
			continue // replaced: add[0] goes out once the base moves past it
		}
		if slices.Contains(b.del, l.Name) {
			continue
		}
		out = append(out, l)
	}
	out = append(out, add...)
	return encode(out)
}
