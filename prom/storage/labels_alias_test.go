package promstorage

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
)

// TestToPromLabelsAliasing converts random label sets, with fields of
// every length class (below 128, 128–254 bytes, 255 and more, one above
// 65,535), and checks that the result is the Prometheus label set a copy
// builds, and that every set is aliased, not copied, in this (default)
// build: isotsdb's encoding of them is Prometheus's.
func TestToPromLabelsAliasing(t *testing.T) {
	require.True(t, labelsAliasing, "the default stringlabels build aliases")
	rng := rand.New(rand.NewPCG(1, 2))
	field := func() string {
		switch rng.IntN(9) {
		case 8:
			if rng.IntN(50) == 0 {
				return strings.Repeat("h", 65536+rng.IntN(1000))
			}
			return "x"
		case 0:
			return strings.Repeat("v", 128+rng.IntN(127))
		case 1:
			return strings.Repeat("w", 255+rng.IntN(300))
		case 2:
			return ""
		case 3:
			return "ünï" + strings.Repeat("x", rng.IntN(125))
		default:
			return strings.Repeat("a", rng.IntN(127))
		}
	}
	var b plabels.ScratchBuilder
	for range 5000 {
		var kv []string
		for j := range 1 + rng.IntN(8) {
			name := string(rune('a'+j)) + field()
			if name == "" {
				name = "n"
			}
			kv = append(kv, name, field())
		}
		ours := labels.FromStrings(kv...)
		want := toPromLabelsCopy(&b, ours)
		got := toPromLabels(&b, ours)
		require.True(t, plabels.Equal(want, got), "%s vs %s", want, got)
		require.Equal(t, want.String(), got.String())
		require.Equal(t, want.Hash(), got.Hash())
		require.Equal(t, want.Len(), got.Len())
		ours.Range(func(l labels.Label) { require.Equal(t, l.Value, got.Get(l.Name)) })
		gotData := *(*string)(unsafe.Pointer(&got))
		require.True(t, unsafe.StringData(ours.Encoding()) == unsafe.StringData(gotData), "aliased, not copied")
	}
}

// TestBorrowOurLabels converts random Prometheus label sets the other way
// and checks that each result is the set a copy builds, aliased, not
// copied, in this (default) build.
func TestBorrowOurLabels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var pb plabels.ScratchBuilder
	var b labels.ScratchBuilder
	for range 5000 {
		pb.Reset()
		for j := range 1 + rng.IntN(8) {
			value := strings.Repeat("v", rng.IntN(300))
			if rng.IntN(100) == 0 {
				value = strings.Repeat("h", 65536+rng.IntN(1000))
			}
			pb.Add(string(rune('z'-j))+strings.Repeat("n", rng.IntN(3)), value)
		}
		pb.Sort()
		ls := pb.Labels()
		want := toOurLabels(&b, ls)
		got := borrowOurLabels(&b, ls)
		require.True(t, labels.Equal(want, got), "%s vs %s", want, got)
		require.True(t, unsafe.StringData(promLabelsData(ls)) == unsafe.StringData(got.Encoding()), "aliased, not copied")
	}
}

// TestHashIsPrometheus checks that isotsdb's label hash is Prometheus's
// for the same labels, so either side's hash can key the other's sets.
func TestHashIsPrometheus(t *testing.T) {
	for _, kv := range [][]string{
		{"__name__", "up", "job", "api"},
		{"a", ""},
		{"a", strings.Repeat("v", 254), "b", strings.Repeat("w", 255)},
		{"huge", strings.Repeat("h", 70000), "z", "1"},
	} {
		require.Equal(t, plabels.FromStrings(kv...).Hash(), labels.FromStrings(kv...).Hash(), "%q", kv)
	}
}
