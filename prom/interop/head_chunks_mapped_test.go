package interop

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	ourlabels "github.com/isotsdb/tsdb/labels"
)

// The head's closed chunks live in chunks_head/ (isotsdb's head_mmap.go,
// Prometheus's ChunkDiskMapper). These tests fill several chunks per
// series in the head, so that each side's dir holds head chunk files, and
// check that the other side reads exactly the samples written.

const mappedSeries, mappedSteps, mappedStep = 60, 600, int64(15_000) // 2.5h: 5 chunks a series

func mappedValue(i, k int) float64 { return float64(i*100_000 + k) }

// mappedWant is the samples of [0, steps) of every series, by labels.
func mappedWant(steps int) []series {
	var out []series
	for i := 0; i < mappedSeries; i++ {
		s := series{lset: labels.FromStrings(metricName, "mapped", "i", strconv.Itoa(i))}
		for k := 0; k < steps; k++ {
			s.samples = append(s.samples, sample{t: int64(k) * mappedStep, v: math.Float64bits(mappedValue(i, k))})
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b series) int { return labels.Compare(a.lset, b.lset) })
	return out
}

// headChunkBytes returns the total size of dir/chunks_head's files.
func headChunkBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "chunks_head"))
	require.NoError(t, err)
	var n int64
	for _, e := range ents {
		info, err := e.Info()
		require.NoError(t, err)
		n += info.Size()
	}
	return n
}

// TestPrometheusReadsMappedHeadChunks: isotsdb's head, with its closed
// chunks in chunks_head/, read by Prometheus's read-only DB.
func TestPrometheusReadsMappedHeadChunks(t *testing.T) {
	dir := t.TempDir()
	o := tsdb.DefaultOptions()
	o.MinBlockDuration = 24 * time.Hour // everything stays in the head
	o.MaxBlockDuration = 24 * time.Hour
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	for k := 0; k < mappedSteps; k++ {
		app := db.Appender(context.Background())
		for i := 0; i < mappedSeries; i++ {
			_, err := app.Append(0, ourlabels.FromStrings(metricName, "mapped", "i", strconv.Itoa(i)), int64(k)*mappedStep, mappedValue(i, k))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Close())
	require.Greater(t, headChunkBytes(t, dir), int64(mappedSeries*3*100), "isotsdb wrote few head chunks")

	want := mappedWant(mappedSteps)
	pdb, err := promtsdb.OpenDBReadOnly(dir, "", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pdb.Close()) }()
	q, err := pdb.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	ms := []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, metricName, "mapped")}
	requireSame(t, "Prometheus reads isotsdb's mapped head chunks", "written", want, "Prometheus", readPrometheus(t, q, ms).series)

	// And isotsdb itself, with its chunks mapped.
	db, err = tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	requireSame(t, "isotsdb reopens its mapped head chunks", "written", want, "isotsdb", readIsotsdb(t, db, math.MinInt64, math.MaxInt64, ms).series)
}

// TestIsotsdbReadsPrometheusHeadChunks: Prometheus's head, with its
// m-mapped chunks in chunks_head/, opened by isotsdb, which writes on
// and closes; Prometheus then reads the dir again.
func TestIsotsdbReadsPrometheusHeadChunks(t *testing.T) {
	dir := t.TempDir()
	po := promtsdb.DefaultOptions()
	po.MinBlockDuration = (24 * time.Hour).Milliseconds()
	po.MaxBlockDuration = (24 * time.Hour).Milliseconds()
	pdb, err := promtsdb.Open(dir, nil, nil, po, nil)
	require.NoError(t, err)
	pdb.DisableCompactions()
	const half = mappedSteps / 2
	for k := 0; k < half; k++ {
		app := pdb.Appender(context.Background())
		for i := 0; i < mappedSeries; i++ {
			_, err := app.Append(0, labels.FromStrings(metricName, "mapped", "i", strconv.Itoa(i)), int64(k)*mappedStep, mappedValue(i, k))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, pdb.Close())
	require.Greater(t, headChunkBytes(t, dir), int64(mappedSeries*100), "Prometheus wrote few head chunks")

	o := tsdb.DefaultOptions()
	o.MinBlockDuration = 24 * time.Hour
	o.MaxBlockDuration = 24 * time.Hour
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	ms := []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, metricName, "mapped")}
	requireSame(t, "isotsdb reads Prometheus's head", "written", mappedWant(half), "isotsdb", readIsotsdb(t, db, math.MinInt64, math.MaxInt64, ms).series)
	for k := half; k < mappedSteps; k++ {
		app := db.Appender(context.Background())
		for i := 0; i < mappedSeries; i++ {
			_, err := app.Append(0, ourlabels.FromStrings(metricName, "mapped", "i", strconv.Itoa(i)), int64(k)*mappedStep, mappedValue(i, k))
			require.NoError(t, err)
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Close())

	want := mappedWant(mappedSteps)
	pdb2, err := promtsdb.OpenDBReadOnly(dir, "", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pdb2.Close()) }()
	q, err := pdb2.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	requireSame(t, "Prometheus reads the dir both wrote", "written", want, "Prometheus", readPrometheus(t, q, ms).series)

	db, err = tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	requireSame(t, "isotsdb reopens the dir both wrote", "written", want, "isotsdb", readIsotsdb(t, db, math.MinInt64, math.MaxInt64, ms).series)
}
