package interop

import (
	"context"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/histogram"
	ourlabels "github.com/isotsdb/tsdb/labels"
)

// copyTree copies the directory tree src into a new directory and returns
// it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "data")
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if d.Name() == "lock" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
	return dst
}

// counterOf returns the value of the counter name in reg (0 if absent).
func counterOf(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestPrometheusOpensIsotsdbChunkSnapshot: isotsdb closes with
// SnapshotOnShutdown, leaving a chunk snapshot next to the WAL and the
// head chunk files; Prometheus opens the directory with its memory
// snapshot on and off and sees every sample. With floats only it
// restores from the snapshot (no snapshot error); with a histogram series
// whose closed chunks only the snapshot holds, the snapshot ends in a
// record Prometheus does not know, and it replays the WAL instead.
func TestPrometheusOpensIsotsdbChunkSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name       string
		histograms bool
		// histUntil: the histogram series takes floats from this step
		// on, so that its open chunk is XOR and only its closed
		// histogram chunks (in the heap) keep Prometheus off the snapshot.
		histUntil int
	}{
		{"floats", false, 0},
		{"with histograms", true, mappedSteps},
		{"histograms then floats", true, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := tsdb.DefaultOptions()
			o.MinBlockDuration = 24 * time.Hour // everything stays in the head
			o.MaxBlockDuration = 24 * time.Hour
			o.SnapshotOnShutdown = true
			db, err := tsdb.Open(dir, nil, nil, o)
			require.NoError(t, err)
			for k := 0; k < mappedSteps; k++ {
				app := db.Appender(context.Background())
				for i := 0; i < mappedSeries; i++ {
					_, err := app.Append(0, ourlabels.FromStrings(metricName, "mapped", "i", strconv.Itoa(i)), int64(k)*mappedStep, mappedValue(i, k))
					require.NoError(t, err)
				}
				hl := ourlabels.FromStrings(metricName, "mapped_hist")
				switch {
				case tc.histograms && k < tc.histUntil:
					h := &histogram.Histogram{Count: uint64(k), ZeroCount: uint64(k), Sum: float64(k), ZeroThreshold: 0.001, Schema: 3}
					_, err := app.AppendHistogram(0, hl, int64(k)*mappedStep, h, nil)
					require.NoError(t, err)
				case tc.histograms:
					_, err := app.Append(0, hl, int64(k)*mappedStep, float64(k))
					require.NoError(t, err)
				}
				require.NoError(t, app.Commit())
			}
			ms := []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, metricName, "mapped.*")}
			want := readIsotsdb(t, db, math.MinInt64, math.MaxInt64, ms)
			require.NoError(t, db.Close())
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			snaps := 0
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "chunk_snapshot.") {
					snaps++
				}
			}
			require.Equal(t, 1, snaps, "isotsdb wrote a snapshot")

			for _, on := range []bool{true, false} {
				d := copyTree(t, dir)
				po := promtsdb.DefaultOptions()
				po.MinBlockDuration = (24 * time.Hour).Milliseconds()
				po.MaxBlockDuration = (24 * time.Hour).Milliseconds()
				po.EnableMemorySnapshotOnShutdown = on
				reg := prometheus.NewRegistry()
				var logs strings.Builder
				pdb, err := promtsdb.Open(d, slog.New(slog.NewTextHandler(&logs, nil)), reg, po, nil)
				require.NoError(t, err)
				pdb.DisableCompactions()
				q, err := pdb.Querier(math.MinInt64, math.MaxInt64)
				require.NoError(t, err)
				got := readPrometheus(t, q, ms)
				require.NoError(t, q.Close())
				what := "Prometheus (memory snapshot " + strconv.FormatBool(on) + ") opens isotsdb's dir with a snapshot"
				requireSame(t, what, "isotsdb", want.series, "Prometheus", got.series)
				require.Equal(t, want.histTimes, got.histTimes, what+": histogram samples")
				if on {
					wantErr := 0.0
					if tc.histograms {
						wantErr = 1 // the isotsdb-only marker: WAL replay
					}
					require.Equal(t, wantErr, counterOf(t, reg, "prometheus_tsdb_snapshot_replay_error_total"), what+": snapshot errors")
					require.Equal(t, !tc.histograms, strings.Contains(logs.String(), "chunk snapshot loaded"), what+": restored from it")
				}
				require.NoError(t, pdb.Close())
			}
		})
	}
}
