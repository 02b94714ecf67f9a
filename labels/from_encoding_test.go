package labels

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestFromEncoding(t *testing.T) {
	valid := []Labels{
		EmptyLabels(),
		FromStrings("__name__", "up", "instance", "host:9100", "job", "node"),
		FromStrings("a", "", "b", "x"),
		FromStrings("a", "1", "a", "2"), // duplicate names stay representable
		FromStrings("long", strings.Repeat("v", 254), "longer", strings.Repeat("w", 255)),
		FromStrings("a", "1", "huge", strings.Repeat("h", 70000)),
		FromStrings("a", "1", "giant", strings.Repeat("g", midSizeEnd)), // the 12-byte size form
	}
	for _, ls := range valid {
		got, ok := FromEncoding(ls.Encoding())
		require.True(t, ok, "a set's own encoding (%d bytes)", ls.ByteSize())
		require.True(t, Equal(ls, got))
		require.Equal(t, ls.Len(), got.Len())
	}

	bad := []struct {
		name, data string
	}{
		{"size past the end", "\x05ab"},
		{"name without a value", "\x01a"},
		{"value past the end", "\x01a\x03xy"},
		{"names out of order", "\x01b\x011\x01a\x012"},
		{"short size in the 4-byte form", "\xff\x01\x00\x00a\x00"},
		{"truncated 4-byte size", "\xff\x01"},
		{"truncated 8-byte size", "\xff\xff\xff\xff\x01\x00"},
		{"short size in the 8-byte form", "\xff\xff\xff\xff\x01\x00\x00\x00\x00\x00\x00\x00a\x00"},
		{"8-byte size past the end", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7fa\x00"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			ls, ok := FromEncoding(c.data)
			require.False(t, ok)
			require.True(t, ls.IsEmpty())
		})
	}
}

func TestFromEncodingShares(t *testing.T) {
	data := FromStrings("a", "1", "b", "2").Encoding()
	ls, ok := FromEncoding(data)
	require.True(t, ok)
	require.Equal(t, data, ls.Encoding())
	require.Equal(t, "2", ls.Get("b"))
	c := ls.Clone()
	require.True(t, Equal(ls, c))
	require.NotSame(t, unsafeData(ls), unsafeData(c), "Clone shares memory with its source")
}

// FuzzFromEncoding checks that FromEncoding accepts exactly the encodings
// encode writes: whatever it accepts decodes to labels that encode back to
// the same bytes, in order, and it never panics on garbage.
func FuzzFromEncoding(f *testing.F) {
	f.Add(FromStrings("__name__", "up", "job", "node").Encoding())
	f.Add(FromStrings("a", strings.Repeat("x", 300)).Encoding())
	f.Add("\x01b\x011\x01a\x012")
	f.Add("\xff\x01\x00\x00a\x00")
	f.Add("\xff\xff\xff\xff\x01\x00\x00\x00\x00\x00\x00\x00a\x00")
	f.Fuzz(func(t *testing.T, data string) {
		ls, ok := FromEncoding(data)
		if !ok {
			return
		}
		var all []Label
		ls.Range(func(l Label) { all = append(all, l) })
		for i := 1; i < len(all); i++ {
			if all[i].Name < all[i-1].Name {
				t.Fatalf("accepted names out of order: %q", data)
			}
		}
		if got := encode(all).Encoding(); got != data {
			t.Fatalf("accepted %q, which encodes back as %q", data, got)
		}
	})
}

// unsafeData returns the address of the first byte of ls's encoding.
func unsafeData(ls Labels) *byte { return unsafe.StringData(ls.data) }

func TestWithoutEmpty(t *testing.T) {
	v256 := strings.Repeat("v", 256) // its size is 0xFF 0x00 0x01 0x00: zero bytes, no empty value
	for _, c := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"a", "1"}, []string{"a", "1"}},
		{[]string{"a", ""}, nil},
		{[]string{"a", "", "b", "2", "c", ""}, []string{"b", "2"}},
		{[]string{"a", v256}, []string{"a", v256}},
		{[]string{"a", v256, "b", ""}, []string{"a", v256}},
		{[]string{"a\x00", "x\x00y"}, []string{"a\x00", "x\x00y"}},
		{[]string{"a\x00", ""}, nil},
	} {
		in, want := FromStrings(c.in...), FromStrings(c.want...)
		got := in.WithoutEmpty()
		require.True(t, Equal(want, got), "%q: got %s", c.in, got)
		if Equal(in, want) {
			require.Same(t, unsafeData(in), unsafeData(got), "%q: copied a set without empty values", c.in)
		}
	}
}
