package interop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/util/compression"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
)

const directionUsReadsProm = "isotsdb reads Prometheus"

// isotsdbReaderOptions are the options isotsdb opens Prometheus's dir
// with: Prometheus's block range, and no larger one, so that opening it
// read-write does not compact Prometheus's blocks while the test reads.
func isotsdbReaderOptions() *tsdb.Options {
	o := tsdb.DefaultOptions()
	o.MinBlockDuration = promBlock
	o.MaxBlockDuration = promBlock
	return o
}

// testIsotsdbReadsPrometheus has Prometheus write a data dir and checks
// that isotsdb returns exactly the float data Prometheus's querier
// returns, skipping and counting the WAL records it does not use.
func testIsotsdbReadsPrometheus(t *testing.T, mx *matrix, comp compression.Type) {
	variant := "wal=" + string(comp)
	dir := t.TempDir()
	var w promWritten
	if !mx.check(t, directionUsReadsProm, variant, "Prometheus writes (floats, histograms, exemplars, metadata)", func(t *testing.T) {
		nFloats := 150
		if comp == compression.Zstd {
			nFloats = 30 // only to be refused
		}
		w = writePrometheus(t, dir, nFloats, comp)
	}) {
		return
	}
	if comp == compression.Zstd {
		mx.check(t, directionUsReadsProm, variant, "zstd WAL refused, no file changed", func(t *testing.T) {
			checkZstdRefused(t, dir, w.model)
		})
		return
	}
	// "floats" selects every float series and no histogram series, so a
	// reader that fails on histogram chunks still has all floats checked.
	sels := append(selectorsFor(w.floats), selector{"floats", []*labels.Matcher{
		labels.MustNewMatcher(labels.MatchRegexp, metricName, ".+"),
		labels.MustNewMatcher(labels.MatchNotEqual, metricName, "interop_hist_seconds"),
	}})
	histSel := []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, metricName, "interop_hist_seconds")}
	walCounts := walRecordTypes(t, filepath.Join(dir, "wal"))
	t.Logf("WAL records a replay reads, by type: %v", walCounts)

	logger, logs := newLogCapture(slog.LevelWarn)
	ro, err := tsdb.OpenReadOnly(dir, logger, isotsdbReaderOptions())
	require.NoError(t, err)
	roClosed := false
	defer func() {
		if !roClosed {
			require.NoError(t, ro.Close())
		}
	}()
	blocks := ro.Blocks()
	require.Len(t, blocks, countBlockDirs(t, dir), "isotsdb loaded fewer blocks than there are block directories")
	headStart := lastBlockEnd(blocks)
	ranges := []timeRange{
		{"blocks", math.MinInt64, headStart - 1},
		{"WAL+checkpoint", headStart, math.MaxInt64},
		{"blocks→WAL", headStart - 50*60_000, headStart + 10*60_000},
		{"all", math.MinInt64, math.MaxInt64},
	}
	for _, r := range ranges {
		mx.checkEach(t, directionUsReadsProm, variant, r.name+": query (OpenReadOnly)", func(t *testing.T, c *cell) {
			pdb, err := promtsdb.OpenDBReadOnly(dir, "", logger)
			require.NoError(t, err)
			defer func() { require.NoError(t, pdb.Close()) }()
			q, err := pdb.Querier(r.mint, r.maxt)
			require.NoError(t, err)
			defer func() { require.NoError(t, q.Close()) }()
			for _, sel := range sels {
				c.run(t, sel.name, func(t *testing.T) {
					what := r.name + " " + sel.name
					want := w.model.selectRange(r.mint, r.maxt, sel.ms)
					require.NotEmpty(t, want, "%s selects nothing: the check would be vacuous", what)
					prom, _ := dropEmpty(readPrometheus(t, q, sel.ms).series) // histogram series have no floats
					requireSame(t, what, "model", want, "Prometheus", prom)
					ours, _ := dropEmpty(readIsotsdb(t, ro, r.mint, r.maxt, sel.ms).series) // as Prometheus's
					requireSame(t, what, "Prometheus", prom, "isotsdb", ours)
				})
			}
			if r.name == "all" {
				// isotsdb returns the histograms of Prometheus's blocks and
				// WAL identical to Prometheus's, sample for sample.
				c.run(t, "histograms", func(t *testing.T) {
					all := readPrometheus(t, q, histSel)
					require.Equal(t, w.blockHists+w.walHists, all.hists, "Prometheus histogram samples")
					ours := readIsotsdb(t, ro, r.mint, r.maxt, histSel)
					require.Equal(t, all.histSamples, ours.histSamples, "histograms of blocks and WAL")
				})
			}
			logs.requireQuiet(t, "isotsdb or Prometheus")
		})
	}
	require.NoError(t, ro.Close())
	roClosed = true

	mx.checkEach(t, directionUsReadsProm, variant, "Open: floats intact, skipped WAL records counted", func(t *testing.T, c *cell) {
		reg := prometheus.NewRegistry()
		db, err := tsdb.Open(dir, logger, reg, isotsdbReaderOptions())
		require.NoError(t, err)
		defer func() { require.NoError(t, db.Close()) }()
		c.run(t, "skipped-records", func(t *testing.T) {
			want := map[string]float64{}
			read := map[string]bool{}
			for _, typ := range []record.Type{record.Series, record.Samples, record.HistogramSamples, record.FloatHistogramSamples,
				record.CustomBucketsHistogramSamples, record.CustomBucketsFloatHistogramSamples, record.Metadata} {
				read[typ.String()] = true
			}
			for typ, n := range walCounts {
				if !read[typ] {
					want[typ] = float64(n)
				}
			}
			require.Positive(t, want[record.Exemplars.String()], "Prometheus wrote no exemplar records: the check would be vacuous")
			require.Positive(t, walCounts[record.Metadata.String()], "Prometheus wrote no metadata records: the check would be vacuous")
			require.Equal(t, want, skippedRecords(t, reg), "tsdb_wal_records_skipped_total by type")
		})
		c.run(t, "metadata", func(t *testing.T) {
			// Each float series' last update (writePrometheus), from
			// Prometheus's checkpoint or segments.
			q, err := db.Querier(math.MinInt64, math.MaxInt64)
			require.NoError(t, err)
			defer func() { require.NoError(t, q.Close()) }()
			for i, ls := range w.floats {
				want := tsdb.Metadata{Type: tsdb.MetricTypeGauge, Unit: "seconds", Help: fmt.Sprintf("help of series %d at step %d", i, promBWSteps*3)}
				if i%5 == 0 {
					want.Type = tsdb.MetricTypeCounter
				}
				got, ok, err := q.SeriesMetadata(toOurLabels(ls))
				require.NoError(t, err)
				require.True(t, ok, "no metadata for %s", ls)
				require.Equal(t, want, got, "metadata of %s", ls)
			}
		})
		c.run(t, "histograms", func(t *testing.T) {
			ours := readIsotsdb(t, db, math.MinInt64, math.MaxInt64, histSel)
			require.Len(t, ours.histSamples, w.blockHists+w.walHists, "histogram samples of blocks and WAL")
		})
		for _, sel := range sels {
			c.run(t, sel.name, func(t *testing.T) {
				want := w.model.selectRange(math.MinInt64, math.MaxInt64, sel.ms)
				got, _ := dropEmpty(readIsotsdb(t, db, math.MinInt64, math.MaxInt64, sel.ms).series) // histogram series have no floats
				requireSame(t, sel.name, "model", want, "isotsdb", got)
			})
		}
		logs.requireQuiet(t, "isotsdb")
	})
}

// skippedRecords reads tsdb_wal_records_skipped_total from reg, by type.
func skippedRecords(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "tsdb_wal_records_skipped_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "type" {
					out[lp.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// checkZstdRefused checks that isotsdb, which cannot decode zstd, refuses
// a WAL Prometheus compressed with it (rather than skipping or "repairing"
// the records): OpenReadOnly writes nothing at all, and a failed Open
// changes no existing file (it may leave new empty files: its lock file and
// the WAL segment it opened for writing). Prometheus must still read all
// of its data afterwards.
func checkZstdRefused(t *testing.T, dir string, m *model) {
	before := hashTree(t, dir)
	_, err := tsdb.OpenReadOnly(dir, nil, isotsdbReaderOptions())
	require.ErrorIs(t, err, tsdb.ErrUnsupportedCompression, "OpenReadOnly")
	require.Equal(t, before, hashTree(t, dir), "OpenReadOnly modified the data dir")
	_, err = tsdb.Open(dir, nil, nil, isotsdbReaderOptions())
	require.ErrorIs(t, err, tsdb.ErrUnsupportedCompression, "Open")
	after := hashTree(t, dir)
	for path, sum := range before {
		require.Equal(t, sum, after[path], "Open changed or removed %s", path)
	}
	empty := hex.EncodeToString(func() []byte { s := sha256.Sum256(nil); return s[:] }())
	for path, sum := range after {
		if _, ok := before[path]; !ok {
			require.Equal(t, empty, sum, "Open left a new non-empty file %s", path)
			t.Logf("the failed Open left a new empty file %s", path)
		}
	}
	pdb, err := promtsdb.OpenDBReadOnly(dir, "", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pdb.Close()) }()
	q, err := pdb.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	all := []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, ".+")}
	got, _ := dropEmpty(readPrometheus(t, q, all).series)
	requireSame(t, "after the refused Open", "model", m.selectRange(math.MinInt64, math.MaxInt64, all), "Prometheus", got)
}

// hashTree returns the SHA-256 of every file below dir, by path.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	require.NoError(t, err)
	return out
}
