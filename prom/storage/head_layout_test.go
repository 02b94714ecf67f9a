package promstorage_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/isotsdb/tsdb/histogram/histogramtest"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// TestHeadHistogramsMatchPrometheus appends histogramtest sequences (layout,
// schema, zero threshold and custom bound changes, resets, stale markers;
// integer and float, counter and gauge) to isotsdb's head through the
// adapter and to Prometheus's head, and requires identical samples, bucket
// for bucket and hint for hint: the two heads cut and recode histogram
// chunks at the same samples.
func TestHeadHistogramsMatchPrometheus(t *testing.T) {
	data := map[string][]tsample{}
	for i := range 24 {
		g := histogramtest.NewGen(uint64(i), i%3 == 1, i%3 == 2)
		name := fmt.Sprintf("gen_%d", i)
		for k := range 300 {
			_, h := g.Next()
			s := tsample{t: int64(k) * 60_000}
			if i%2 == 0 {
				s.fh = promstorage.ToPromFloatHistogram(h.ToFloat())
			} else {
				s.h = promstorage.ToPromHistogram(h)
			}
			data[name] = append(data[name], s)
		}
	}
	pdb := newPrometheus(t)
	papp := pdb.Appender(t.Context())
	appendAll(t, v1Sample(papp), papp, data)
	s := newStorage(t)
	add, tx := sampleAppenderKinds[0].open(s)
	appendAll(t, add, tx, data)
	requireSameSamples(t, "generated", queryBoth(t, pdb, math.MinInt64, math.MaxInt64, nil), queryBoth(t, s, math.MinInt64, math.MaxInt64, nil))
}
