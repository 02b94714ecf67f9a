package promstorage_test

import "github.com/isotsdb/tsdb/histogram/histogramtest"

// staleNaNBits are the bits of Prometheus's stale marker.
const staleNaNBits = 0x7ff0000000000002

// The histogram sequences of the golden tests come from histogramtest, which
// the chunks package's tests share.
type histGen = histogramtest.Gen

var (
	newHistGen = histogramtest.NewGen
	histSeq    = histogramtest.Seq
)
