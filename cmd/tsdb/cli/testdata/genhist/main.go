// Command genhist writes ../histdb, a data directory holding one block
// written by Prometheus's tsdb (BlockWriter) with native histograms of
// every kind next to float series, and ../histdb.dump, what Prometheus's
// own reader and notation make of it: one "{labels} value timestamp" line
// per sample, floats with %g and histograms with their String method,
// series in label order, which is what `promtool tsdb dump` prints.
//
// The tests of tsdb check, dump and analyze read these files; this program
// only regenerates them. It is a module of its own (it imports Prometheus)
// and lives under testdata, so the go command ignores it otherwise. It
// uses the versions of the nested module prom/, whose go.sum it needs: run
// it from this directory with
//
//	cp ../../../../prom/go.sum . && GOFLAGS=-mod=mod go run .
//
// The block's ULID is random, so a run changes the directory's name.
package main

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

const (
	// base is the first sample's time: 2024-01-01T00:00:00Z.
	base = int64(1704067200000)
	step = int64(15000)
	n    = 12 // samples per series
)

func main() {
	out := filepath.Join("..", "histdb")
	if err := os.RemoveAll(out); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		log.Fatal(err)
	}
	if err := write(out); err != nil {
		log.Fatal(err)
	}
	// Prometheus's read-only DB wants a WAL directory, which git would
	// not keep: make one for the read only.
	wal := filepath.Join(out, "wal")
	if err := os.Mkdir(wal, 0o777); err != nil {
		log.Fatal(err)
	}
	dump, err := dumpAll(out)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.RemoveAll(wal); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "histdb.dump"), []byte(dump), 0o666); err != nil {
		log.Fatal(err)
	}
}

// stale returns Prometheus's stale marker as an integer histogram.
func stale() *histogram.Histogram {
	return &histogram.Histogram{Sum: math.Float64frombits(value.StaleNaN)}
}

// expHistogram is an integer histogram with exponential buckets on both
// sides and a zero bucket, growing with k; reset restarts the counts.
func expHistogram(k int64) *histogram.Histogram {
	return &histogram.Histogram{
		Schema:          1,
		ZeroThreshold:   0.001,
		ZeroCount:       uint64(1 + k),
		Count:           uint64(7 + 3*k),
		Sum:             12.5 * float64(k+1),
		PositiveSpans:   []histogram.Span{{Offset: -1, Length: 2}, {Offset: 3, Length: 1}},
		PositiveBuckets: []int64{1 + k, -k, 1}, // 1+k, 1, 2
		NegativeSpans:   []histogram.Span{{Offset: 2, Length: 1}},
		NegativeBuckets: []int64{2 + k},
	}
}

// customHistogram is an integer histogram with custom buckets, the last
// one up to +Inf.
func customHistogram(k int64) *histogram.Histogram {
	return &histogram.Histogram{
		Schema:          histogram.CustomBucketsSchema,
		Count:           uint64(5 + 4*k),
		Sum:             0.75 * float64(k+2),
		PositiveSpans:   []histogram.Span{{Offset: 0, Length: 2}, {Offset: 1, Length: 1}},
		PositiveBuckets: []int64{1 + k, 1 + k, -k}, // 1+k, 2+2k, 2+k
		CustomValues:    []float64{0.1, 0.5, 2.5},
	}
}

func write(dir string) error {
	ctx := context.Background()
	bw, err := tsdb.NewBlockWriter(slog.New(slog.DiscardHandler), dir, 2*3600*1000)
	if err != nil {
		return err
	}
	app := bw.Appender(ctx)
	add := func(lset labels.Labels, k int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram) error {
		t := base + k*step
		var err error
		if h == nil && fh == nil {
			_, err = app.Append(0, lset, t, v)
		} else {
			_, err = app.AppendHistogram(0, lset, t, h, fh)
		}
		if err != nil {
			return fmt.Errorf("%s at %d: %w", lset, t, err)
		}
		return nil
	}
	floats := []float64{0, 1, -2.5, 1e-300, 123456789.125, math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(value.StaleNaN), 3, 1e21, 0.1}
	for k := range int64(n) {
		var h, gauge, custom *histogram.Histogram
		var fh *histogram.FloatHistogram
		switch {
		case k == 5:
			h, gauge, custom = stale(), stale(), stale()
			fh = &histogram.FloatHistogram{Sum: math.Float64frombits(value.StaleNaN)}
		case k == 8: // a counter reset
			h, custom = expHistogram(0), customHistogram(0)
			gauge = expHistogram(1)
			gauge.CounterResetHint = histogram.GaugeType
			fh = expHistogram(0).ToFloat(nil)
		default:
			h, custom = expHistogram(k), customHistogram(k)
			gauge = expHistogram(k % 3)
			gauge.CounterResetHint = histogram.GaugeType
			fh = expHistogram(k).ToFloat(nil)
			fh.Count += 0.5
			fh.Sum /= 3
			fh.PositiveBuckets[0] += 0.25
			fh.ZeroCount += 0.25
		}
		steps := []struct {
			lset labels.Labels
			v    float64
			h    *histogram.Histogram
			fh   *histogram.FloatHistogram
		}{
			{lset: labels.FromStrings("__name__", "rpc_duration_seconds", "job", "api"), h: h},
			{lset: labels.FromStrings("__name__", "rpc_duration_seconds", "job", "db"), fh: fh},
			{lset: labels.FromStrings("__name__", "queue_length", "job", "api"), h: gauge},
			{lset: labels.FromStrings("__name__", "request_size_bytes", "job", "api"), h: custom},
			{lset: labels.FromStrings("__name__", "up", "job", "api"), v: floats[k]},
		}
		for _, s := range steps {
			if err := add(s.lset, k, s.v, s.h, s.fh); err != nil {
				return err
			}
		}
		// A series that is a float first and a histogram later.
		mixed := labels.FromStrings("__name__", "mixed", "job", "api")
		if k < n/2 {
			err = add(mixed, k, float64(k), nil, nil)
		} else {
			err = add(mixed, k, 0, customHistogram(k), nil)
		}
		if err != nil {
			return err
		}
	}
	if err := app.Commit(); err != nil {
		return err
	}
	if _, err := bw.Flush(ctx); err != nil {
		return err
	}
	return bw.Close()
}

// dumpAll reads every sample of dir back with Prometheus's read-only DB
// and formats it in promtool's notation.
func dumpAll(dir string) (string, error) {
	db, err := tsdb.OpenDBReadOnly(dir, "", slog.New(slog.DiscardHandler))
	if err != nil {
		return "", err
	}
	defer db.Close()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return "", err
	}
	defer q.Close()
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	var b strings.Builder
	var it chunkenc.Iterator
	for ss.Next() {
		s := ss.At()
		it = s.Iterator(it)
		if err := writeSeries(&b, s, it); err != nil {
			return "", err
		}
	}
	return b.String(), ss.Err()
}

func writeSeries(b *strings.Builder, s storage.Series, it chunkenc.Iterator) error {
	for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
		switch vt {
		case chunkenc.ValFloat:
			t, v := it.At()
			fmt.Fprintf(b, "%s %g %d\n", s.Labels(), v, t)
		case chunkenc.ValHistogram:
			t, h := it.AtHistogram(nil)
			fmt.Fprintf(b, "%s %s %d\n", s.Labels(), h.String(), t)
		case chunkenc.ValFloatHistogram:
			t, fh := it.AtFloatHistogram(nil)
			fmt.Fprintf(b, "%s %s %d\n", s.Labels(), fh.String(), t)
		default:
			return fmt.Errorf("%s: sample type %s", s.Labels(), vt)
		}
	}
	return it.Err()
}
