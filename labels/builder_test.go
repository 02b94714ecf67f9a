package labels

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestBuilder(t *testing.T) {
	base := FromStrings("__name__", "up", "job", "api", "instance", "h:1")
	cases := []struct {
		name  string
		ops   func(b *Builder)
		want  Labels
		gets  map[string]string // Get results expected after ops
		isNop bool              // the result must be the base itself
	}{
		{"no changes", func(*Builder) {}, base, map[string]string{"job": "api", "x": ""}, true},
		{"add new first", func(b *Builder) { b.Set("_a", "1") },
			FromStrings("_a", "1", "__name__", "up", "job", "api", "instance", "h:1"), map[string]string{"_a": "1"}, false},
		{"add new last", func(b *Builder) { b.Set("zone", "eu") },
			FromStrings("__name__", "up", "job", "api", "instance", "h:1", "zone", "eu"), nil, false},
		{"add new middle", func(b *Builder) { b.Set("ix", "m") },
			FromStrings("__name__", "up", "job", "api", "instance", "h:1", "ix", "m"), nil, false},
		{"override", func(b *Builder) { b.Set("job", "db").Set("job", "db2") },
			FromStrings("__name__", "up", "job", "db2", "instance", "h:1"), map[string]string{"job": "db2"}, false},
		{"set empty deletes", func(b *Builder) { b.Set("job", "") },
			FromStrings("__name__", "up", "instance", "h:1"), map[string]string{"job": ""}, false},
		{"del several", func(b *Builder) { b.Del("job", "__name__", "absent") },
			FromStrings("instance", "h:1"), map[string]string{"job": "", "__name__": ""}, false},
		{"del then set", func(b *Builder) { b.Del("job").Set("job", "again") },
			FromStrings("__name__", "up", "job", "again", "instance", "h:1"), map[string]string{"job": "again"}, false},
		{"set then del", func(b *Builder) { b.Set("new", "v").Del("new") },
			base, map[string]string{"new": ""}, false},
		{"delete everything", func(b *Builder) { b.Del("job", "__name__", "instance") },
			EmptyLabels(), nil, false},
		{"utf8", func(b *Builder) { b.Set("ñ", "ü").Set("service.name", "名前") },
			FromStrings("__name__", "up", "job", "api", "instance", "h:1", "ñ", "ü", "service.name", "名前"), map[string]string{"ñ": "ü"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder(base)
			c.ops(b)
			for name, want := range c.gets {
				require.Equal(t, want, b.Get(name), "Get(%q)", name)
			}
			got := b.Labels()
			require.True(t, Equal(c.want, got), "got %s want %s", got, c.want)
			// Get agrees with the result for every name involved.
			got.Range(func(l Label) { require.Equal(t, l.Value, b.Get(l.Name)) })
			if c.isNop {
				require.True(t, unsafe.StringData(got.data) == unsafe.StringData(base.data), "no-op Labels must return the base")
			}
			// The builder stays usable and Labels is repeatable.
			require.True(t, Equal(got, b.Labels()))
			// Reset drops all changes.
			b.Reset(base)
			require.True(t, Equal(base, b.Labels()))
		})
	}
}

func TestBuilderKeepsBaseDuplicates(t *testing.T) {
	base := New(Label{"a", "1"}, Label{"d", "1"}, Label{"d", "2"}, Label{"e", "1"}, Label{"e", "2"})
	got := NewBuilder(base).Set("b", "x").Set("e", "new").Labels()
	require.Equal(t, []Label{{"a", "1"}, {"b", "x"}, {"d", "1"}, {"d", "2"}, {"e", "new"}}, collect(got))
}

func TestScratchBuilder(t *testing.T) {
	cases := []struct {
		name string
		add  []Label
		want []Label
	}{
		{"empty", nil, nil},
		{"sorted", []Label{{"a", "1"}, {"b", "2"}}, []Label{{"a", "1"}, {"b", "2"}}},
		{"unsorted", []Label{{"b", "2"}, {"c", "3"}, {"a", "1"}}, []Label{{"a", "1"}, {"b", "2"}, {"c", "3"}}},
		{"duplicates keep order", []Label{{"b", "2"}, {"a", "x"}, {"a", "y"}}, []Label{{"a", "x"}, {"a", "y"}, {"b", "2"}}},
		{"utf8", []Label{{"名前", "値"}, {"a", "ü"}}, []Label{{"a", "ü"}, {"名前", "値"}}},
	}
	b := NewScratchBuilder(2)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b.Reset() // one builder reused across cases
			for _, l := range c.add {
				b.Add(l.Name, l.Value)
			}
			got := b.Labels()
			require.Equal(t, c.want, collect(got))
			require.True(t, Equal(New(c.add...), got))
		})
	}
	// Sort sorts the pending labels.
	b.Reset()
	b.Add("z", "1")
	b.Add("a", "2")
	b.Sort()
	require.Equal(t, []Label{{"a", "2"}, {"z", "1"}}, b.add)
	// A negative capacity hint is tolerated.
	nb := NewScratchBuilder(-1)
	nb.Add("a", "b")
	require.Equal(t, "{a=\"b\"}", nb.Labels().String())
}

func TestScratchBuilderDoesNotAlias(t *testing.T) {
	buf := []byte("namevalue")
	b := NewScratchBuilder(1)
	// Strings aliasing a buffer the caller will reuse, as a decoder would.
	b.Add(unsafe.String(&buf[0], 4), unsafe.String(&buf[4], 5))
	ls := b.Labels()
	copy(buf, "XXXXXXXXX")
	b.Reset()
	b.Add("other", "x")
	_ = b.Labels()
	require.Equal(t, `{name="value"}`, ls.String())
}
