package promstorage

import (
	"unsafe"

	plabels "github.com/prometheus/prometheus/model/labels"

	"github.com/isotsdb/tsdb/labels"
)

// Converting label sets without copying them.
//
// isotsdb encodes a label set as its names and values, each after its
// length, written as Prometheus's stringlabels implementation writes it:
// one byte below 255, else 0xFF and three bytes (labels.Labels.Encoding).
// Prometheus built with its default stringlabels implementation holds a
// label set as one string of that shape. So an isotsdb set shorter than
// labels.MaxPromCompatible, which cannot hold a field too long for
// Prometheus's sizes, is a Prometheus set as it is, and the conversion can
// alias isotsdb's string without reading it: a Select over a million
// series converts their labels without a million allocations, and without
// touching their bytes.
//
// aliasable decides at run time, from probe conversions, whether the build
// of Prometheus's module is one where this holds; if not (another labels
// implementation, a changed layout), every conversion copies.

// labelsAliasing reports whether this build's Prometheus label sets are a
// single string in isotsdb's encoding of short fields. Computed once.
var labelsAliasing = probeLabelsAliasing()

func probeLabelsAliasing() bool {
	if plabels.ImplementationName != "stringlabels" || unsafe.Sizeof(plabels.Labels{}) != unsafe.Sizeof("") {
		return false
	}
	probes := [][]string{
		{"__name__", "up", "instance", "host:9100", "job", "node"},
		{"a", "", "b", "x"},
		{"z", string(make([]byte, 127))},
		{"long", string(make([]byte, 254)), "longer", string(make([]byte, 255))},
		{"a", "1", "huge", string(make([]byte, 70000)), "z", ""},
	}
	var b plabels.ScratchBuilder
	for _, kv := range probes {
		ours := labels.FromStrings(kv...)
		want := toPromLabelsCopy(&b, ours)
		got := aliasPromLabels(ours.Encoding())
		if !plabels.Equal(want, got) || want.String() != got.String() || got.Len() != len(kv)/2 {
			return false
		}
	}
	return true
}

// aliasPromLabels returns the Prometheus label set whose stringlabels
// encoding is data. Only for data shorter than labels.MaxPromCompatible.
func aliasPromLabels(data string) plabels.Labels {
	return *(*plabels.Labels)(unsafe.Pointer(&data))
}

// promLabelsData returns the string a stringlabels label set holds. Only
// where labelsAliasing holds.
func promLabelsData(ls plabels.Labels) string {
	return *(*string)(unsafe.Pointer(&ls))
}
