package interop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/tsdbutil"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
	"github.com/stretchr/testify/require"
)

// The Prometheus-written data dir: two blocks from BlockWriter (2h each),
// then Prometheus's DB writes 4h more, compacts the first 2h of them into a
// block of its own and truncates its WAL with a checkpoint; the last 2h
// stay in the WAL. Timestamps start at a multiple of 2h so the blocks are
// aligned as Prometheus's own are.
const (
	promBase     = int64(1_700_006_400_000)
	promStep     = int64(60_000)
	promBlock    = 2 * time.Hour
	promBWSteps  = 120 // scrapes per BlockWriter block: 2h
	promWALSteps = 240 // scrapes through Prometheus's DB: 4h
)

// histSeries are the native histogram series Prometheus writes next to
// the floats. isotsdb cannot store them.
type histSeries struct {
	lset labels.Labels
	kind string // "int", "float" or "custom" (custom buckets)
}

func promHistSeries() []histSeries {
	var out []histSeries
	for _, kind := range []string{"int", "float", "custom"} {
		for j := range 2 {
			out = append(out, histSeries{
				lset: labels.FromStrings(metricName, "interop_hist_seconds", "kind", kind, "n", strconv.Itoa(j)),
				kind: kind,
			})
		}
	}
	return out
}

// promWritten is what writePrometheus wrote.
type promWritten struct {
	floats []labels.Labels
	model  *model // float samples only
	hists  []histSeries
	// walHists counts the histogram samples written through the DB (its
	// WAL and its block); blockHists those written with BlockWriter.
	walHists, blockHists int
}

// writePrometheus writes the Prometheus data dir described above into dir,
// with nFloats float series and WAL compression comp. Float series get exemplars now and then and
// metadata twice; histogram series get native histograms.
func writePrometheus(t *testing.T, dir string, nFloats int, comp compression.Type) promWritten {
	t.Helper()
	ctx := context.Background()
	logger, logs := newLogCapture(slog.LevelWarn)
	w := promWritten{
		floats: loadLabelSets(t, nFloats, 97, 5),
		model:  newModel(),
		hists:  promHistSeries(),
	}

	// scrape appends step k through app: floats, histograms and, through
	// the DB only, exemplars and metadata.
	type appender interface {
		storage.Appender
	}
	floatRefs := make([]storage.SeriesRef, len(w.floats))
	histRefs := make([]storage.SeriesRef, len(w.hists))
	scrape := func(app appender, k int, extras bool) int {
		for i, ls := range w.floats {
			ts, v := sampleTime(promBase, promStep, i, k), floatValue(i, k)
			ref, err := app.Append(floatRefs[i], ls, ts, v)
			require.NoError(t, err, "append %s at %d", ls, ts)
			floatRefs[i] = ref
			w.model.add(ls, ts, v)
			if extras && k%4 == 0 && i%10 == 0 {
				_, err := app.AppendExemplar(ref, ls, exemplar.Exemplar{
					Labels: labels.FromStrings("trace_id", fmt.Sprintf("%x", mix(uint64(i), uint64(k)))),
					Value:  float64(k), Ts: ts, HasTs: true,
				})
				require.NoError(t, err)
			}
			if extras && (k == promBWSteps*2 || k == promBWSteps*3) {
				typ := prommodel.MetricTypeGauge
				if i%5 == 0 {
					typ = prommodel.MetricTypeCounter
				}
				_, err := app.UpdateMetadata(ref, ls, metadata.Metadata{Type: typ, Unit: "seconds", Help: fmt.Sprintf("help of series %d at step %d", i, k)})
				require.NoError(t, err)
			}
		}
		n := 0
		for j, hs := range w.hists {
			ts := sampleTime(promBase, promStep, 1000+j, k)
			var err error
			switch hs.kind {
			case "int":
				histRefs[j], err = app.AppendHistogram(histRefs[j], hs.lset, ts, tsdbutil.GenerateTestHistogram(int64(k)), nil)
			case "float":
				histRefs[j], err = app.AppendHistogram(histRefs[j], hs.lset, ts, nil, tsdbutil.GenerateTestFloatHistogram(int64(k)))
			default:
				histRefs[j], err = app.AppendHistogram(histRefs[j], hs.lset, ts, tsdbutil.GenerateTestCustomBucketsHistogram(int64(k)), nil)
			}
			require.NoError(t, err, "append histogram %s at %d", hs.lset, ts)
			n++
		}
		return n
	}

	// Two blocks written with BlockWriter.
	for b := range 2 {
		bw, err := promtsdb.NewBlockWriter(logger, dir, promBlock.Milliseconds())
		require.NoError(t, err)
		clear(floatRefs)
		clear(histRefs)
		for k := b * promBWSteps; k < (b+1)*promBWSteps; k++ {
			app := bw.Appender(ctx)
			w.blockHists += scrape(app, k, false)
			require.NoError(t, app.Commit())
		}
		id, err := bw.Flush(ctx)
		require.NoError(t, err)
		require.NotZero(t, id)
		require.NoError(t, bw.Close())
	}

	// Then Prometheus's DB on the same directory.
	opts := promtsdb.DefaultOptions()
	opts.MinBlockDuration = promBlock.Milliseconds()
	opts.MaxBlockDuration = promBlock.Milliseconds()
	opts.WALSegmentSize = 32 << 10 // several segments, so that Compact checkpoints
	opts.WALCompression = comp
	opts.EnableExemplarStorage = true
	opts.MaxExemplars = 100_000
	opts.EnableMetadataWALRecords = true
	db, err := promtsdb.Open(dir, logger, nil, opts, nil)
	require.NoError(t, err)
	db.DisableCompactions() // compact once, below, so the layout is known
	clear(floatRefs)
	clear(histRefs)
	for k := 2 * promBWSteps; k < 2*promBWSteps+promWALSteps; k++ {
		app := db.Appender(ctx)
		w.walHists += scrape(app, k, true)
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.Len(t, db.Blocks(), 3, "Prometheus blocks")
	require.NoError(t, db.Close())
	logs.requireQuiet(t, "Prometheus (writing)")

	cp, _, err := wlog.LastCheckpoint(filepath.Join(dir, "wal"))
	require.NoError(t, err, "Prometheus wrote no WAL checkpoint")
	t.Logf("Prometheus wrote 3 blocks, WAL checkpoint %s", filepath.Base(cp))
	return w
}

// walRecordTypes counts the records of the WAL in walDir that a replay
// reads (the last checkpoint and the segments after it) by type, with
// Prometheus's own reader.
func walRecordTypes(t *testing.T, walDir string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	readAll := func(dir string, first int) {
		r, err := wlog.NewSegmentsRangeReader(wlog.SegmentRange{Dir: dir, First: first, Last: -1})
		require.NoError(t, err)
		defer func() { require.NoError(t, r.Close()) }()
		rd := wlog.NewReader(r)
		dec := record.NewDecoder(nil, nil)
		for rd.Next() {
			counts[dec.Type(rd.Record()).String()]++
		}
		require.NoError(t, rd.Err())
	}
	from := -1
	cp, idx, err := wlog.LastCheckpoint(walDir)
	switch {
	case err == nil:
		readAll(cp, -1)
		from = idx + 1
	case !errors.Is(err, record.ErrNotFound):
		require.NoError(t, err)
	}
	readAll(walDir, from)
	return counts
}
