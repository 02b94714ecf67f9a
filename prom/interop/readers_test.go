package interop

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// readResult is what a querier returned for one selection.
type readResult struct {
	series []series // float samples; series without any are kept
	hists  int      // native histogram samples seen
	// histSamples lists the histogram samples as "labels type time
	// histogram", the histogram in isotsdb's String form (Prometheus's are
	// converted with promstorage.FromProm*), in Select order.
	histSamples []string
	histTimes   []int64 // the time of each of histSamples
}

// histLine is one entry of readResult.histSamples.
func histLine(lset labels.Labels, vt string, t int64, h fmt.Stringer) string {
	return fmt.Sprintf("%s %s %d %s", lset, vt, t, h)
}

// readIsotsdb selects ms over [mint, maxt] with an isotsdb querier.
func readIsotsdb(t *testing.T, db *tsdb.DB, mint, maxt int64, ms []*labels.Matcher) readResult {
	t.Helper()
	q, err := db.Querier(mint, maxt)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	ss := q.Select(context.Background(), toOurMatchers(t, ms)...)
	var (
		out readResult
		it  chunks.Iterator
	)
	for ss.Next() {
		s := series{lset: fromOurLabels(ss.At().Labels())}
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			switch vt {
			case chunks.ValFloat:
				ts, v := it.At()
				s.samples = append(s.samples, sample{t: ts, v: math.Float64bits(v)})
			case chunks.ValHistogram:
				ts, h := it.AtHistogram(nil)
				out.hists++
				out.histTimes = append(out.histTimes, ts)
				out.histSamples = append(out.histSamples, histLine(s.lset, vt.String(), ts, h))
			case chunks.ValFloatHistogram:
				ts, fh := it.AtFloatHistogram(nil)
				out.hists++
				out.histTimes = append(out.histTimes, ts)
				out.histSamples = append(out.histSamples, histLine(s.lset, vt.String(), ts, fh))
			default:
				require.Failf(t, "unexpected value type", "isotsdb iterator of %s: %v", s.lset, vt)
			}
		}
		require.NoError(t, it.Err(), "isotsdb iterator of %s", s.lset)
		out.series = append(out.series, s)
	}
	require.NoError(t, ss.Err(), "isotsdb Select")
	return out
}

// readPrometheus selects ms with a Prometheus querier (sorted). Float
// samples are returned; histogram samples are only counted.
func readPrometheus(t *testing.T, q storage.Querier, ms []*labels.Matcher) readResult {
	t.Helper()
	ss := q.Select(context.Background(), true, nil, ms...)
	var (
		out readResult
		it  chunkenc.Iterator
	)
	for ss.Next() {
		s := series{lset: ss.At().Labels()}
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			switch vt {
			case chunkenc.ValFloat:
				ts, v := it.At()
				s.samples = append(s.samples, sample{t: ts, v: math.Float64bits(v)})
			case chunkenc.ValHistogram:
				ts, h := it.AtHistogram(nil)
				out.hists++
				out.histTimes = append(out.histTimes, ts)
				out.histSamples = append(out.histSamples, histLine(s.lset, vt.String(), ts, promstorage.FromPromHistogram(h)))
			case chunkenc.ValFloatHistogram:
				ts, fh := it.AtFloatHistogram(nil)
				out.hists++
				out.histTimes = append(out.histTimes, ts)
				out.histSamples = append(out.histSamples, histLine(s.lset, vt.String(), ts, promstorage.FromPromFloatHistogram(fh)))
			default:
				require.Failf(t, "unexpected value type", "Prometheus iterator of %s: %v", s.lset, vt)
			}
		}
		require.NoError(t, it.Err(), "Prometheus iterator of %s", s.lset)
		out.series = append(out.series, s)
	}
	require.NoError(t, ss.Err(), "Prometheus Select")
	require.Empty(t, ss.Warnings(), "Prometheus Select warnings")
	return out
}

// timeRange is a named query range, both ends inclusive.
type timeRange struct {
	name       string
	mint, maxt int64
}

// requireSame fails unless got equals want, naming both and the query.
func requireSame(t *testing.T, what string, wantName string, want []series, gotName string, got []series) {
	t.Helper()
	require.Empty(t, diffSeries(wantName, want, gotName, got), what)
}
