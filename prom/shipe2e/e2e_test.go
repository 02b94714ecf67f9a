package shipe2e

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	phistogram "github.com/prometheus/prometheus/model/histogram"
	plabels "github.com/prometheus/prometheus/model/labels"
	promtsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/stretchr/testify/require"
	"github.com/thanos-io/objstore"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/histogram/histogramtest"
	"github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
	"github.com/isotsdb/tsdb/ship"
	"github.com/isotsdb/tsdb/ship/shiptest"
)

// seriesKinds are the kinds of series the source holds, one series each
// per round of the list: floats, integer, float, custom-bucket and gauge
// native histograms.
var seriesKinds = [...]string{"float", "int_hist", "float_hist", "custom_hist", "gauge_hist"}

const (
	rounds    = 3           // series of each kind
	step      = 15_000      // ms between samples
	dataHours = 9           // of samples: 2 h blocks up to 6 h, the rest in the head
	hour      = 3600 * 1000 // ms
)

// writeSource writes the source DB at dir: rounds series of each kind,
// one sample every step over dataHours, one commit per step, then
// compacts it (2 h blocks, no further compaction: level 1, which the
// shipper uploads by default) and closes it. It returns what was written,
// per series, as model lines (see sample.line).
func writeSource(t *testing.T, dir string) map[string][]string {
	t.Helper()
	o := tsdb.DefaultOptions()
	o.MaxBlockDuration = o.MinBlockDuration
	db, err := tsdb.Open(dir, nil, nil, o)
	require.NoError(t, err)
	var (
		sets []labels.Labels
		gens []*histogramtest.Gen
	)
	for range rounds {
		for _, kind := range seriesKinds {
			i := len(sets)
			sets = append(sets, labels.FromStrings(labels.MetricName, "ship_"+kind, "job", "e2e", "i", fmt.Sprint(i)))
			switch kind {
			case "float":
				gens = append(gens, nil)
			case "custom_hist":
				gens = append(gens, histogramtest.NewGen(uint64(i), true, false))
			case "gauge_hist":
				gens = append(gens, histogramtest.NewGen(uint64(i), false, true))
			default:
				gens = append(gens, histogramtest.NewGen(uint64(i), false, false))
			}
		}
	}
	refs := make([]tsdb.SeriesRef, len(sets))
	want := map[string][]string{}
	ctx := context.Background()
	for ts := int64(0); ts < dataHours*hour; ts += step {
		app := db.Appender(ctx)
		for i, ls := range sets {
			var s sample
			if gens[i] == nil {
				s = sample{vt: chunkenc.ValFloat, t: ts, f: float64(i)*1000 + float64(ts)/7}
				refs[i], err = app.Append(refs[i], ls, ts, s.f)
			} else {
				_, h := gens[i].Next()
				var fh *histogram.FloatHistogram
				if strings.HasPrefix(ls.Get(labels.MetricName), "ship_float_hist") {
					fh, h = h.ToFloat(), nil
				}
				s = sample{t: ts}
				if h != nil {
					s.vt, s.h = chunkenc.ValHistogram, promstorage.ToPromHistogram(h)
				} else {
					s.vt, s.fh = chunkenc.ValFloatHistogram, promstorage.ToPromFloatHistogram(fh)
				}
				refs[i], err = app.AppendHistogram(refs[i], ls, ts, h, fh)
			}
			require.NoError(t, err, "append %s at %d", ls, ts)
			want[ls.String()] = append(want[ls.String()], s.line())
		}
		require.NoError(t, app.Commit())
	}
	require.NoError(t, db.Compact(ctx))
	require.NoError(t, db.Close())
	return want
}

// sample is a sample of any type, in Prometheus's types.
type sample struct {
	vt chunkenc.ValueType
	t  int64
	f  float64
	h  *phistogram.Histogram
	fh *phistogram.FloatHistogram
}

// exact describes the sample with every field (counter reset hints
// included), floats by their bits too.
func (s sample) exact() string {
	switch s.vt {
	case chunkenc.ValFloat:
		return fmt.Sprintf("%d F %#x", s.t, math.Float64bits(s.f))
	case chunkenc.ValHistogram:
		return fmt.Sprintf("%d H %+v sum=%#x", s.t, *s.h, math.Float64bits(s.h.Sum))
	case chunkenc.ValFloatHistogram:
		fh := s.fh
		return fmt.Sprintf("%d FH %+v sum=%#x count=%#x zero=%#x", s.t, *fh,
			math.Float64bits(fh.Sum), math.Float64bits(fh.Count), math.Float64bits(fh.ZeroCount))
	}
	return fmt.Sprintf("value type %v", s.vt)
}

// line is the sample as written: time, type, and the value's (or the
// histogram's count and sum's) bits. Reading a histogram back may change
// its layout and hint, never these.
func (s sample) line() string {
	switch s.vt {
	case chunkenc.ValFloat:
		return fmt.Sprintf("%d F %#x", s.t, math.Float64bits(s.f))
	case chunkenc.ValHistogram:
		return fmt.Sprintf("%d H %d %#x", s.t, s.h.Count, math.Float64bits(s.h.Sum))
	case chunkenc.ValFloatHistogram:
		return fmt.Sprintf("%d FH %#x %#x", s.t, math.Float64bits(s.fh.Count), math.Float64bits(s.fh.Sum))
	}
	return fmt.Sprintf("value type %v", s.vt)
}

// readIsotsdb reads every sample in [mint, maxt] of the data directory
// dir with isotsdb (read-only), per series.
func readIsotsdb(t *testing.T, dir string, mint, maxt int64) map[string][]sample {
	t.Helper()
	db, err := tsdb.OpenReadOnly(dir, nil, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	q, err := db.Querier(mint, maxt)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	out := map[string][]sample{}
	ss := q.Select(context.Background(), labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+"))
	var it chunks.Iterator
	for ss.Next() {
		k := ss.At().Labels().String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			s := sample{vt: chunkenc.ValueType(vt)}
			switch vt {
			case chunks.ValFloat:
				s.t, s.f = it.At()
			case chunks.ValHistogram:
				var h *histogram.Histogram
				s.t, h = it.AtHistogram(nil)
				s.h = promstorage.ToPromHistogram(h)
			case chunks.ValFloatHistogram:
				var fh *histogram.FloatHistogram
				s.t, fh = it.AtFloatHistogram(nil)
				s.fh = promstorage.ToPromFloatHistogram(fh)
			default:
				require.Failf(t, "unexpected value type", "%s: %v", k, vt)
			}
			out[k] = append(out[k], s)
		}
		require.NoError(t, it.Err(), k)
	}
	require.NoError(t, ss.Err())
	return out
}

// readPrometheus reads every sample in [mint, maxt] of the data directory
// dir with Prometheus's TSDB (OpenDBReadOnly), per series, and returns
// the number of blocks it opened.
func readPrometheus(t *testing.T, dir string, mint, maxt int64) (map[string][]sample, int) {
	t.Helper()
	db, err := promtsdb.OpenDBReadOnly(dir, t.TempDir(), nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	blocks, err := db.Blocks()
	require.NoError(t, err)
	q, err := db.Querier(mint, maxt)
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()
	out := map[string][]sample{}
	ss := q.Select(context.Background(), true, nil, plabels.MustNewMatcher(plabels.MatchRegexp, model.MetricNameLabel, ".+"))
	var it chunkenc.Iterator
	for ss.Next() {
		k := ss.At().Labels().String()
		it = ss.At().Iterator(it)
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			s := sample{vt: vt}
			switch vt {
			case chunkenc.ValFloat:
				s.t, s.f = it.At()
			case chunkenc.ValHistogram:
				s.t, s.h = it.AtHistogram(nil)
			case chunkenc.ValFloatHistogram:
				s.t, s.fh = it.AtFloatHistogram(nil)
			default:
				require.Failf(t, "unexpected value type", "%s: %v", k, vt)
			}
			out[k] = append(out[k], s)
		}
		require.NoError(t, it.Err(), k)
	}
	require.NoError(t, ss.Err())
	return out, len(blocks)
}

// render turns samples into their exact (or, with model, line) strings.
func render(m map[string][]sample, model bool) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, ss := range m {
		for _, s := range ss {
			if model {
				out[k] = append(out[k], s.line())
			} else {
				out[k] = append(out[k], s.exact())
			}
		}
	}
	return out
}

// inRange keeps the model lines with a time in [mint, maxt].
func inRange(m map[string][]string, mint, maxt int64) map[string][]string {
	out := map[string][]string{}
	for k, lines := range m {
		for _, l := range lines {
			var ts int64
			_, err := fmt.Sscan(l, &ts)
			if err == nil && ts >= mint && ts <= maxt {
				out[k] = append(out[k], l)
			}
		}
	}
	return out
}

// download copies every object of bkt under dst, keeping its path, and
// returns the names of the blocks (directories with a meta.json).
func download(t *testing.T, bkt objstore.BucketReader, dst string) []string {
	t.Helper()
	ctx := context.Background()
	var blocks []string
	err := bkt.Iter(ctx, "", func(name string) error {
		if id, ok := strings.CutSuffix(name, "/meta.json"); ok {
			blocks = append(blocks, id)
		}
		r, err := bkt.Get(ctx, name)
		if err != nil {
			return fmt.Errorf("get %s: %w", name, err)
		}
		defer r.Close()
		p := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return fmt.Errorf("download %s: %w", name, err)
		}
		return f.Close()
	}, objstore.WithRecursiveIter())
	require.NoError(t, err)
	return blocks
}

// TestShipToS3AndOpenWithPrometheus: isotsdb writes float series and
// native histograms of every kind into 2 h blocks; ship's Shipper uploads
// them to SeaweedFS; every object is downloaded back through objstore
// into a fresh directory, which Prometheus's OpenDBReadOnly and isotsdb
// both open. Both read, series by series, exactly the source DB's samples
// over the blocks' time range, histograms field by field with their
// counter reset hints, and those are what was written.
func TestShipToS3AndOpenWithPrometheus(t *testing.T) {
	w := shiptest.StartWeed(t)
	src := filepath.Join(t.TempDir(), "data")
	written := writeSource(t, src)

	bkt, err := ship.NewBucket(w.Config(shiptest.Bucket), nil)
	require.NoError(t, err)
	defer bkt.Close()
	s, err := ship.New(src, bkt, &ship.Options{ExternalLabels: map[string]string{"cluster": "e2e"}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	n, err := s.Sync(ctx)
	require.NoError(t, err)
	t.Logf("shipped %d blocks in %s", n, time.Since(start).Round(time.Millisecond))

	// The source's blocks, all of them shipped, and their time range.
	srcDB, err := tsdb.OpenReadOnly(src, nil, nil)
	require.NoError(t, err)
	metas := srcDB.Blocks()
	require.NoError(t, srcDB.Close())
	require.GreaterOrEqual(t, len(metas), 3)
	require.Equal(t, len(metas), n)
	mint, maxt := int64(math.MaxInt64), int64(math.MinInt64)
	var ids []string
	for _, m := range metas {
		mint, maxt = min(mint, m.MinTime), max(maxt, m.MaxTime-1) // MaxTime is exclusive
		ids = append(ids, m.ULID.String())
	}

	dst := t.TempDir()
	require.ElementsMatch(t, ids, download(t, bkt, dst))

	want := readIsotsdb(t, src, mint, maxt)
	require.Len(t, want, rounds*len(seriesKinds))
	require.Equal(t, inRange(written, mint, maxt), render(want, true), "the source DB against what was written")

	gotIso := readIsotsdb(t, dst, mint, maxt)
	require.Equal(t, render(want, false), render(gotIso, false), "isotsdb reading the downloaded blocks")

	gotProm, promBlocks := readPrometheus(t, dst, mint, maxt)
	require.Equal(t, len(metas), promBlocks, "blocks Prometheus opened")
	require.Equal(t, render(want, false), render(gotProm, false), "Prometheus reading the downloaded blocks")
}
