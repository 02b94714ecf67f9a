package promstorage

import (
	"unsafe"

	plabels "github.com/prometheus/prometheus/model/labels"

	"github.com/isotsdb/tsdb/labels"
)

// Converting label sets without copying them.
//
// isotsdb encodes a label set as its names and values, each after its
// length as a uvarint (labels.Labels.Encoding). Prometheus built with its
// default stringlabels implementation holds a label set as one string of
// the same shape, each length in a byte if below 255. So when every name
// and value is shorter than 128 bytes the two encodings are the same
// bytes, and the conversion can alias isotsdb's string: a Select over a
// million series then converts their labels without a million allocations.
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
// encoding is data. Only for data whose fields are all short (shortFields).
func aliasPromLabels(data string) plabels.Labels {
	return *(*plabels.Labels)(unsafe.Pointer(&data))
}

// shortFields reports whether every name and value in the encoding data
// is shorter than 128 bytes (each length is one byte).
func shortFields(data string) bool {
	for i := 0; i < len(data); {
		n := data[i]
		if n >= 0x80 {
			return false
		}
		i += 1 + int(n)
	}
	return true
}
