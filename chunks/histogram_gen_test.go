package chunks

import "github.com/isotsdb/tsdb/histogram/histogramtest"

// The histogram sequences of these tests come from histogramtest, which
// the prom module's golden tests share.
var (
	newHistGen = histogramtest.NewGen
	histSeq    = histogramtest.Seq
)
