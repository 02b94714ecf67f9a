package tsdb

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/histogram"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/value"
	"github.com/isotsdb/tsdb/vfs"
)

// snapOptions are the options of the snapshot tests: snapshots on, late
// samples and exemplars on, one-hour chunks so that a short workload
// cuts several per series.
func snapOptions(fsys vfs.FS) *Options {
	o := DefaultOptions()
	o.FS = fsys
	o.SnapshotOnShutdown = true
	o.OutOfOrderTimeWindow = 2 * time.Hour
	o.MaxExemplars = 1000
	o.MinBlockDuration = 2 * time.Hour
	o.MaxBlockDuration = 2 * time.Hour
	return o
}

// snapWorkload writes, from step k0 on (n steps, 60 s apart), series of
// every kind: plain floats, floats with start times, integer and float
// histograms, a series switching between floats and histograms (closed
// histogram chunks stay in the heap), late samples, a stale marker,
// exemplars, metadata, and a deletion. With kinds false only plain floats
// (the case Prometheus restores exactly).
func snapWorkload(t *testing.T, db *DB, k0, n int, kinds bool) {
	t.Helper()
	for k := k0; k < k0+n; k++ {
		ts := int64(k) * 60_000
		app := db.Appender(ctx)
		for i := range 20 {
			l := labels.FromStrings(labels.MetricName, "snap_float", "i", fmt.Sprint(i))
			_, err := app.Append(0, l, ts, float64(k*i)+0.25)
			require.NoError(t, err)
			if k%50 == 0 {
				_, err = app.AppendExemplar(0, l, Exemplar{Labels: labels.FromStrings("trace", fmt.Sprint(k, i)), Value: float64(k), Ts: ts, HasTs: true})
				require.NoError(t, err)
			}
		}
		_, err := app.UpdateMetadata(0, labels.FromStrings(labels.MetricName, "snap_float", "i", "3"), Metadata{Type: MetricTypeGauge, Unit: "s", Help: fmt.Sprint("help ", k/100)})
		require.NoError(t, err)
		if kinds {
			_, err = app.AppendST(0, labels.FromStrings(labels.MetricName, "snap_st"), ts-30_000, ts, float64(k), nil, nil)
			require.NoError(t, err)
			_, err = app.AppendHistogram(0, labels.FromStrings(labels.MetricName, "snap_h"), ts, crashHistogram(k), nil)
			require.NoError(t, err)
			_, err = app.AppendHistogram(0, labels.FromStrings(labels.MetricName, "snap_fh"), ts, nil, crashHistogram(k).ToFloat())
			require.NoError(t, err)
			mixed := labels.FromStrings(labels.MetricName, "snap_mixed")
			if (k/40)%2 == 0 {
				_, err = app.Append(0, mixed, ts, float64(k))
			} else {
				_, err = app.AppendHistogram(0, mixed, ts, crashHistogram(k), nil)
			}
			require.NoError(t, err)
			if k%7 == 3 && k > 30 {
				// Late: half an hour back, between the float series' samples.
				_, err = app.Append(0, labels.FromStrings(labels.MetricName, "snap_float", "i", "1"), ts-30*60_000+1, -float64(k))
				require.NoError(t, err)
			}
			if k == k0+n-1 {
				_, err = app.Append(0, labels.FromStrings(labels.MetricName, "snap_float", "i", "19"), ts+1, math.Float64frombits(value.StaleNaN))
				require.NoError(t, err)
			}
		}
		require.NoError(t, app.Commit())
	}
	// Head compaction, which the commits may have started in the
	// background, done before the state is read.
	require.NoError(t, db.Compact(ctx))
	if kinds {
		mint := int64(k0+n/3) * 60_000
		require.NoError(t, db.Delete(ctx, mint, mint+10*60_000, labels.MustNewMatcher(labels.MatchEqual, "i", "2")))
	}
}

// snapState renders everything a reader can see of db: every sample with
// its kind, start time and exact value, label names and values, metadata,
// exemplars, and the head's series count and time range.
// Exemplars only with withExemplars: a WAL replay does not bring back
// those before the last checkpoint (checkpoints keep no exemplars, as in
// Prometheus), which the snapshot keeps.
func snapState(t *testing.T, db *DB, withExemplars bool) string {
	t.Helper()
	var b strings.Builder
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	ss := q.Select(ctx)
	for ss.Next() {
		s := ss.At()
		fmt.Fprintf(&b, "%s\n", s.Labels())
		it := s.Iterator(nil)
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			switch vt {
			case chunks.ValFloat:
				ts, v := it.At()
				fmt.Fprintf(&b, " %d/%d F %x\n", ts, it.AtST(), math.Float64bits(v))
			case chunks.ValHistogram:
				ts, h := it.AtHistogram(nil)
				fmt.Fprintf(&b, " %d/%d H %s\n", ts, it.AtST(), h)
			default:
				ts, fh := it.AtFloatHistogram(nil)
				fmt.Fprintf(&b, " %d/%d FH %s\n", ts, it.AtST(), fh)
			}
		}
		require.NoError(t, it.Err())
		m, ok, err := q.SeriesMetadata(s.Labels())
		require.NoError(t, err)
		if ok {
			fmt.Fprintf(&b, " meta %+v\n", m)
		}
	}
	require.NoError(t, ss.Err())
	names, err := q.LabelNames(ctx)
	require.NoError(t, err)
	for _, n := range names {
		vs, err := q.LabelValues(ctx, n)
		require.NoError(t, err)
		fmt.Fprintf(&b, "label %s: %v\n", n, vs)
	}
	var res []ExemplarQueryResult
	eq, err := db.ExemplarQuerier(ctx)
	require.NoError(t, err)
	res, err = eq.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+")})
	require.NoError(t, err)
	for _, r := range res {
		if !withExemplars {
			break
		}
		// Without HasTs, which neither the WAL nor Prometheus's snapshot
		// keeps (every exemplar the WAL replays has a time).
		fmt.Fprintf(&b, "exemplars %s:", r.SeriesLabels)
		for _, e := range r.Exemplars {
			fmt.Fprintf(&b, " %s %x@%d", e.Labels, math.Float64bits(e.Value), e.Ts)
		}
		b.WriteString("\n")
	}
	hv := db.Head()
	fmt.Fprintf(&b, "head series %d [%d, %d]\n", hv.NumSeries(), hv.MinTime(), hv.MaxTime())
	return b.String()
}

// snapDirs returns the chunk snapshot directories (and temporary ones) in
// the data directory.
func snapDirs(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	ents, err := fsys.ReadDir("data")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), chunkSnapshotPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// reopen closes db and opens the directory again with o, and reports
// whether the head came from a snapshot.
func reopen(t *testing.T, db *DB, o *Options) (*DB, bool) {
	t.Helper()
	require.NoError(t, db.Close())
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	require.Empty(t, snapDirs(t, o.FS), "Open leaves no snapshot behind")
	return db, counterValue(t, db.walMetrics.snapshotLoads) == 1
}

// TestChunkSnapshotRoundTrip: after Close and Open with a snapshot, the DB
// reads exactly as before (samples of every kind, late ones, deletions,
// labels, metadata, exemplars, head range), without a WAL replay; appends
// continue; later restarts with and without a snapshot read the same.
func TestChunkSnapshotRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kinds     bool
		promExact bool
	}{
		{"floats", false, true},
		{"every kind", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			o := snapOptions(fsys)
			db, err := Open("data", nil, nil, o)
			require.NoError(t, err)
			snapWorkload(t, db, 0, 300, tc.kinds)
			want, wantEx := snapState(t, db, false), snapState(t, db, true)

			require.NoError(t, db.Close())
			dirs := snapDirs(t, fsys)
			require.Len(t, dirs, 1)
			cs, err := readChunkSnapshot(fsys, filepath.Join("data", dirs[0]))
			require.NoError(t, err)
			require.Equal(t, tc.promExact, cs.promExact)
			db, err = Open("data", nil, nil, o)
			require.NoError(t, err)
			require.Equal(t, 1.0, counterValue(t, db.walMetrics.snapshotLoads), "head restored from the snapshot")
			require.Zero(t, counterValue(t, db.walMetrics.snapshotErrors))
			require.Empty(t, snapDirs(t, fsys))
			require.Equal(t, wantEx, snapState(t, db, true))
			require.NoError(t, db.head.checkInvariants(true))

			// Appends continue where they stopped.
			snapWorkload(t, db, 300, 100, tc.kinds)
			want, wantEx = snapState(t, db, false), snapState(t, db, true)
			db, used := reopen(t, db, o)
			require.True(t, used)
			require.Equal(t, wantEx, snapState(t, db, true))

			// Without the option: the WAL replay reads the same.
			off := *o
			off.SnapshotOnShutdown = false
			db, used = reopen(t, db, &off)
			require.False(t, used)
			require.Equal(t, want, snapState(t, db, false))
			// And the snapshot it did not write is not there to use.
			db, used = reopen(t, db, o)
			require.False(t, used)
			require.Equal(t, want, snapState(t, db, false))
			db, used = reopen(t, db, o)
			require.True(t, used)
			require.Equal(t, want, snapState(t, db, false))
			require.NoError(t, db.Close())
		})
	}
}

var _ = histogram.Histogram{}
